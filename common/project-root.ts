// The project root: the nearest folder at or above `common/..` that holds package.json. This file runs from
// `common/` in a source checkout (root = one up), from `dist/common/` when compiled (root = two up; dist/ has no
// package.json), and from `node_modules/oncepay/dist/common/` when installed (the package's folder).
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The nearest folder at or above `start` holding package.json (`start` itself when none does). */
export function findProjectRoot(start: string): string {
  for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(start);
  }
}

const PROJECT_ROOT = findProjectRoot(path.resolve(__dirname, '..'));

/** This checkout's (or installed package's) root folder. */
export function projectRoot(): string {
  return PROJECT_ROOT;
}
