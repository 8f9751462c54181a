// Spawns the real `oncepay` binary (from source) in a child process against the suite's schema.
import { spawn } from 'child_process';
import * as path from 'path';
import { currentSuite, recordProcess } from '../../faults/secrets';

export const ROOT = path.resolve(__dirname, '..', '..', '..');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function oncepay(args: string[], opts: { env: Record<string, string>; input?: string }): Promise<CliResult> {
  const suite = currentSuite();
  return new Promise((resolve, reject) => {
    const argv = [process.execPath, path.join(ROOT, 'bin', 'oncepay'), ...args];
    const child = spawn(argv[0], argv.slice(1), {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'test', ONCEPAY_LOG_LEVEL: 'warn', ...opts.env, ONCEPAY_FROM_SOURCE: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    recordProcess(suite, argv, () => stdout + stderr);
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** The JSON lines a command logged on stderr (pino), parsed. */
export function stderrJson(r: CliResult): Array<Record<string, unknown>> {
  return r.stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}
