// A warning anyone can trigger at will — a refused request from a stranger — is logged at most once per interval per
// kind, with how many of that kind were left out since the last line: a flood of junk requests writes a bounded
// number of log lines, never one per request. Kinds must come from a fixed set (error codes), never from a request.
import type { Logger } from 'pino';

export type ThrottledWarn = (kind: string, fields: Record<string, unknown>, msg: string) => void;

export function throttledWarn(log: Logger | undefined, intervalMs = 10_000, now = () => Date.now()): ThrottledWarn {
  const kinds = new Map<string, { last: number; suppressed: number }>();
  return (kind, fields, msg) => {
    if (!log) return;
    const t = now();
    const k = kinds.get(kind);
    if (k && t - k.last < intervalMs) {
      k.suppressed += 1;
      return;
    }
    const suppressed = k?.suppressed ?? 0;
    kinds.set(kind, { last: t, suppressed: 0 });
    log.warn(suppressed > 0 ? { ...fields, suppressedSinceLast: suppressed } : fields, msg);
  };
}
