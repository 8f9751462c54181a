// `oncepay localnet` in a process of its own (as a real node is: the deployed topology), for the benchmarks.
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { requireProgramSo } from '../common/program-binary';

export interface LocalnetProcess {
  rpc: string;
  /** The node's websocket endpoint (`indexer stream --ws`). */
  ws: string;
  /** The node's Yellowstone gRPC endpoint (`indexer stream --grpc`), when started with `grpc`. */
  grpc?: string;
  pid?: number;
  stop(): Promise<void>;
}

/**
 * `oncepay localnet` in a child process with the compiled program, on a fresh ledger: slots of `slotMs`, final
 * `finalityDepth` slots deep (default 2), serving geyser on a free port with `grpc`.
 */
export async function spawnLocalnet(opts: {
  slotMs: number;
  finalityDepth?: number;
  grpc?: boolean;
}): Promise<LocalnetProcess> {
  const ledger = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-bench-localnet-'));
  const args = [
    'localnet',
    '--port',
    '0',
    '--slot-ms',
    String(opts.slotMs),
    '--finality-depth',
    String(opts.finalityDepth ?? 2),
    ...(opts.grpc ? ['--grpc-port', '0'] : []),
    '--program',
    requireProgramSo(),
    '--ledger',
    ledger,
    '--reset',
  ];
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'bin', 'oncepay'), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ONCEPAY_LOG_LEVEL: 'error' },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const { rpc, ws, grpc } = await new Promise<{ rpc: string; ws: string; grpc?: string }>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as { rpc: string; ws: string; grpc?: string });
    });
    void exited.then(() => reject(new Error('oncepay localnet exited before it listened')));
  });
  return {
    rpc,
    ws,
    grpc,
    pid: child.pid,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(ledger, { recursive: true, force: true });
    },
  };
}
