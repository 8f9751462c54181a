// cli/progress: long work reports on stderr as a bar on a terminal, as one JSON log line per step otherwise.
import { expect } from 'chai';
import { progress } from '../../cli/progress';

/** A stream that keeps what is written; a terminal when `tty`. */
function sink(tty: boolean) {
  const out: string[] = [];
  const stream = {
    isTTY: tty,
    columns: 80,
    write: (s: string) => out.push(s) > 0,
    cursorTo: () => true,
    clearLine: () => true,
    moveCursor: () => true,
    on: () => stream,
    removeListener: () => stream,
  } as unknown as NodeJS.WriteStream;
  return { out, stream };
}

describe('cli/progress', () => {
  it('not a terminal: one JSON line per update, {level, msg, ...fields} in that order; nothing before the first', () => {
    const { out, stream } = sink(false);
    const p = progress({ msg: 'db ha start', format: '{bar}', start: { done: 0, total: 3, step: '' }, stream });
    expect(out).to.deep.equal([]);
    p.update({ done: 1, total: 3, step: 'monitor' });
    p.update({ done: 3, total: 3, step: 'settled' });
    p.stop();
    expect(out).to.deep.equal([
      '{"level":"info","msg":"db ha start","done":1,"total":3,"step":"monitor"}\n',
      '{"level":"info","msg":"db ha start","done":3,"total":3,"step":"settled"}\n',
    ]);
  });

  it('a terminal: a bar with the fields in its format, and no JSON line', () => {
    const { out, stream } = sink(true);
    const p = progress<{ done: number; total: number; blocks: number }>({
      msg: 'backfill progress',
      format: 'b {value}/{total} {blocks} blocks',
      stream,
    });
    p.update({ done: 2, total: 5, blocks: 7 });
    p.stop();
    const text = out.join('');
    expect(text).to.contain('b 2/5 7 blocks');
    expect(text).to.not.contain('"level"');
  });
});
