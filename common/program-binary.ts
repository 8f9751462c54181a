// Which compiled oncepay program a localnet, the demo, the SDK suites and the benchmarks load: the one place that
// turns a choice into a `.so` path. Both binaries answer the same IDL at the same program id:
//   anchor  programs/oncepay       (anchor-lang)      -> target/deploy/oncepay.so       the default
//   lite    programs/oncepay-lite  (pinocchio twin)   -> target/deploy/oncepay_lite.so  ONCEPAY_PROGRAM=lite
// `make program` builds both. A missing or unknown binary is an error that says what to do, never a fallback to the
// other one.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { OncepayError, PROGRAM_BINARY_CODES } from './errors';
import { projectRoot } from './project-root';

export const PROGRAM_BINARIES = ['anchor', 'lite'] as const;
export type ProgramBinary = (typeof PROGRAM_BINARIES)[number];

/** The environment variable that picks the binary (`anchor` when unset). */
export const PROGRAM_ENV = 'ONCEPAY_PROGRAM';

const FILES: Record<ProgramBinary, { file: string; crate: string }> = {
  anchor: { file: 'oncepay.so', crate: 'programs/oncepay' },
  lite: { file: 'oncepay_lite.so', crate: 'programs/oncepay-lite' },
};

// From common/ in a checkout, from dist/common/ when compiled: the root is the folder with package.json.
const ROOT = projectRoot();

export function isProgramBinary(v: string): v is ProgramBinary {
  return (PROGRAM_BINARIES as readonly string[]).includes(v);
}

/** Parses a binary name (`anchor` | `lite`); anything else is an error naming the choices. */
export function parseProgramBinary(value: string, source = PROGRAM_ENV): ProgramBinary {
  if (isProgramBinary(value)) return value;
  throw new OncepayError(
    PROGRAM_BINARY_CODES.UNKNOWN,
    `${source}=${JSON.stringify(value)} is not a program binary; use one of: ${PROGRAM_BINARIES.join(', ')}`,
  );
}

/** The binary chosen by ONCEPAY_PROGRAM (default `anchor`). */
export function selectedProgramBinary(env: NodeJS.ProcessEnv = process.env): ProgramBinary {
  const v = env[PROGRAM_ENV];
  return v === undefined || v === '' ? 'anchor' : parseProgramBinary(v);
}

/** The crate `binary` is built from. */
export function programCrateDir(binary: ProgramBinary, root = ROOT): string {
  return path.join(root, FILES[binary].crate);
}

/** Where `make program` writes `binary` (whether or not it exists). */
export function programSoPath(binary: ProgramBinary = selectedProgramBinary(), root = ROOT): string {
  return path.join(root, 'target', 'deploy', FILES[binary].file);
}

/** The `.so` of `binary`; throws a clear error when it was not built. */
export function requireProgramSo(binary: ProgramBinary = selectedProgramBinary(), root = ROOT): string {
  const so = programSoPath(binary, root);
  if (!fs.existsSync(so)) {
    throw new OncepayError(
      PROGRAM_BINARY_CODES.MISSING,
      `${so} is missing: the ${binary} program (${FILES[binary].crate}) is built by \`make program\``,
      { binary, path: so },
    );
  }
  return so;
}
