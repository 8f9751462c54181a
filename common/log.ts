// Structured JSON logs (pino) to stderr, so stdout stays machine-readable for CLI output.
import pino, { Logger } from 'pino';

let root: Logger | undefined;

export function logger(component?: string): Logger {
  root ??= pino(
    {
      level: process.env.ONCEPAY_LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'warn' : 'info'),
      base: { pid: process.pid },
    },
    pino.destination({ fd: 2, sync: true }),
  );
  return component ? root.child({ component }) : root;
}
