// Structured JSON logs (pino) to stderr, so stdout stays machine-readable for CLI output.
// With ONCEPAY_LOG_DIR set (the demo sets it), each component logs to <dir>/<component>.log instead, the
// component being the name's first part ('localnet.chain' → localnet.log), so a terminal keeps only the story.
import * as path from 'path';
import pino, { Logger, LoggerOptions } from 'pino';

let root: Logger | undefined;
const toFiles = new Map<string, Logger>();

function options(): LoggerOptions {
  return {
    level: process.env.ONCEPAY_LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'warn' : 'info'),
    base: { pid: process.pid },
  };
}

/** The file a component logs to under `dir`: its name's first part, 'oncepay' for the root logger. */
export function logFileOf(dir: string, component?: string): string {
  const name = (component ?? 'oncepay').split('.')[0].replace(/[^A-Za-z0-9_-]/g, '_') || 'oncepay';
  return path.join(dir, `${name}.log`);
}

export function logger(component?: string): Logger {
  const dir = process.env.ONCEPAY_LOG_DIR;
  if (dir) {
    const file = logFileOf(dir, component);
    let base = toFiles.get(file);
    if (!base) {
      // Appended synchronously: several processes (the demo and its children) may share a file, and a line is
      // not lost when a process exits or is killed right after logging it.
      base = pino(options(), pino.destination({ dest: file, sync: true, mkdir: true, append: true }));
      toFiles.set(file, base);
    }
    return component ? base.child({ component }) : base;
  }
  root ??= pino(options(), pino.destination({ fd: 2, sync: true }));
  return component ? root.child({ component }) : root;
}
