// Whether the compiled CLI in dist/ (`make build`) is at least as new as every TypeScript source it is built from,
// so a harness that starts `oncepay` many times may run it instead of compiling the source at each start.
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '..');
const SOURCES = ['app', 'cli', 'common', 'db', 'idl', 'indexer', 'localnet', 'sdk'];

function newest(dir: string): number {
  let t = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p));
    else if (e.name.endsWith('.ts')) t = Math.max(t, fs.statSync(p).mtimeMs);
  }
  return t;
}

export function distIsCurrent(): boolean {
  const main = path.join(ROOT, 'dist', 'cli', 'main.js');
  if (!fs.existsSync(main)) return false;
  const built = fs.statSync(main).mtimeMs;
  return SOURCES.every((d) => !fs.existsSync(path.join(ROOT, d)) || newest(path.join(ROOT, d)) <= built);
}
