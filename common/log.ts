// Structured JSON logs (pino) to stderr, so stdout stays machine-readable for CLI output. Every URL in a log line —
// in a field, in an error's message or stack, in the message itself — is redacted (common/redact.ts): no RPC API
// key or database password reaches a log, whoever wrote the line.
// With ONCEPAY_LOG_DIR set (the demo sets it), each component logs to <dir>/<component>.log instead, the
// component being the name's first part ('localnet.chain' → localnet.log), so a terminal keeps only the story.
import * as path from 'path';
import pino, { Logger, LoggerOptions } from 'pino';
import { redactUrlsIn } from './redact';

/** A log line's fields with every URL in a string redacted (three levels deep: `{ err: { message } }`). */
export function redactFields(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return redactUrlsIn(v);
  if (v === null || typeof v !== 'object' || depth > 3) return v;
  if (v instanceof Error) {
    return { type: v.name, message: redactUrlsIn(v.message), stack: v.stack && redactUrlsIn(v.stack) };
  }
  if (Array.isArray(v)) return v.map((x) => redactFields(x, depth + 1));
  if (Object.getPrototypeOf(v) !== Object.prototype) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = redactFields(x, depth + 1);
  return out;
}

let root: Logger | undefined;
const toFiles = new Map<string, Logger>();

function options(): LoggerOptions {
  return {
    level: process.env.ONCEPAY_LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'warn' : 'info'),
    base: { pid: process.pid },
    formatters: { log: (o) => redactFields(o) as Record<string, unknown> },
    hooks: {
      logMethod(args, method) {
        // The message (and any format arguments) too: a URL may sit in a message built from an error.
        method.apply(this, args.map((a) => (typeof a === 'string' ? redactUrlsIn(a) : a)) as Parameters<typeof method>);
      },
    },
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
