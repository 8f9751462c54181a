// The machine a bench ran on, in one form for every bench's first lines (bench/HISTORY.md rows name it): cores and
// CPU model, memory, platform, node, and how busy the machine is now — figures on a shared machine move with its load.
import * as os from 'os';

export function machineLabel(): string {
  const cpus = os.cpus();
  const gib = Math.round(os.totalmem() / 2 ** 30);
  const load = os.loadavg()[0].toFixed(1);
  return `${cpus.length} × ${cpus[0]?.model ?? 'unknown cpu'}, ${gib} GiB, ${os.platform()} ${os.arch()}, node ${process.version}, load avg ${load}`;
}
