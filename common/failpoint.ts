// Named crash points for crash tests. With ONCEPAY_FAILPOINT=<name>[,<name>…] in the environment, the process
// kills itself with SIGKILL (a real `kill -9`: no finally blocks, no flushing, no graceful shutdown) when it
// reaches that point. `<name>@N` fires on the N-th time the point is reached (1-based). Off by default. The names,
// and the window of the flow each one marks, are common/fault-space.ts's FAILPOINTS.
import type { FailpointName } from './fault-space';

const counts = new Map<string, number>();
// The environment is read once, on the first failpoint reached: the spec cannot change during a process.
let armedPoints: Map<string, number> | undefined;

function parseSpec(spec: string | undefined): Map<string, number> {
  const m = new Map<string, number>();
  if (!spec) return m;
  for (const part of spec.split(',')) {
    const [name, nth] = part.trim().split('@');
    if (name) m.set(name, nth ? Number(nth) : 1);
  }
  return m;
}

export function failpoint(name: FailpointName): void {
  armedPoints ??= parseSpec(process.env.ONCEPAY_FAILPOINT);
  if (armedPoints.size === 0) return;
  const nth = armedPoints.get(name);
  if (nth === undefined) return;
  const seen = (counts.get(name) ?? 0) + 1;
  counts.set(name, seen);
  if (seen === nth) {
    process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: 'failpoint reached: SIGKILL', failpoint: name })}\n`);
    process.kill(process.pid, 'SIGKILL');
  }
}
