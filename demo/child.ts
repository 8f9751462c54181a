// Run `node bin/oncepay …` as a real child process (the same entry point an operator uses), capturing its output.
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { logFileOf } from '../common/log';
import { projectRoot } from '../common/project-root';

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  pid: number | undefined;
}

export function runOncepay(
  args: string[],
  env: Record<string, string>,
  track?: (pid: number | undefined, kill: () => void) => void,
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(projectRoot(), 'bin', 'oncepay'), ...args], {
      cwd: projectRoot(),
      env: { ...process.env, ONCEPAY_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    track?.(child.pid, () => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      // Its JSON logs went to ONCEPAY_LOG_DIR (inherited); what it wrote to stderr itself (a failpoint's last
      // line, a crash) is kept beside them.
      const dir = process.env.ONCEPAY_LOG_DIR;
      if (dir && stderr.length > 0) fs.appendFileSync(logFileOf(dir, 'child-stderr'), stderr);
      resolve({ code, signal, stdout, stderr, pid: child.pid });
    });
  });
}
