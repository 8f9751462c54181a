// Progress of long work on stderr: a bar on a terminal (cli-progress), one JSON log line per step otherwise (CI logs,
// pipes), `{"level":"info","msg":<msg>,...fields}`.
import * as cliProgress from 'cli-progress';

export interface Progress<F extends { done: number; total: number }> {
  /** The work reached `fields.done` of `fields.total`; the rest of `fields` shows in the bar's format. */
  update(fields: F): void;
  stop(): void;
}

export function progress<F extends { done: number; total: number }>(o: {
  /** The JSON line's msg. */
  msg: string;
  /** The bar's format (cli-progress: {bar}, {value}, {total} and the fields by name). */
  format: string;
  /** Show the bar at once, before the first update. */
  start?: F;
  /** Where it goes (stderr); a bar only when it is a terminal. */
  stream?: NodeJS.WriteStream;
}): Progress<F> {
  const stream = o.stream ?? process.stderr;
  if (stream.isTTY !== true)
    return {
      update: (fields) => void stream.write(`${JSON.stringify({ level: 'info', msg: o.msg, ...fields })}\n`),
      stop: () => undefined,
    };
  const bar = new cliProgress.SingleBar({ stream, format: o.format }, cliProgress.Presets.shades_classic);
  let started = false;
  const start = (f: F) => {
    if (!started) bar.start(f.total, f.done, f);
    started = true;
  };
  if (o.start) start(o.start);
  return {
    update: (fields) => {
      start(fields);
      bar.update(fields.done, fields);
    },
    stop: () => bar.stop(),
  };
}
