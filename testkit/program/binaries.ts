// The program binaries every test in tests/programs runs against, decided in this one place: the Anchor program
// (programs/oncepay) and its lean twin (programs/oncepay-lite). A binary is expected when its crate is in the tree
// (`make program` builds every program crate), so once both crates exist each case runs on both binaries in both
// runtimes and differential.ts compares the outcomes; a binary that was not built then fails every case with a
// message saying so, it is never skipped.
//
// Dev only: ONCEPAY_TEST_PROGRAMS=lite (or =anchor) narrows a local run to one binary, e.g. while the other does not
// build yet. The comparison is then reported as skipped, and CI refuses the variable.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  parseProgramBinary,
  PROGRAM_BINARIES,
  programCrateDir,
  programSoPath,
  type ProgramBinary,
} from '../../common/program-binary';

export const DEV_ONLY_BINARIES_ENV = 'ONCEPAY_TEST_PROGRAMS';

/** The binaries whose crate is in the tree. */
export const EXPECTED_BINARIES: ProgramBinary[] = PROGRAM_BINARIES.filter((b) =>
  existsSync(join(programCrateDir(b), 'Cargo.toml')),
);

function binariesUnderTest(): ProgramBinary[] {
  const narrowed = process.env[DEV_ONLY_BINARIES_ENV];
  if (narrowed === undefined || narrowed === '') return [...EXPECTED_BINARIES];
  if (process.env.CI) {
    throw new Error(
      `${DEV_ONLY_BINARIES_ENV} is for local development only: CI runs every program test on both binaries`,
    );
  }
  return narrowed.split(',').map((b) => parseProgramBinary(b.trim(), DEV_ONLY_BINARIES_ENV));
}

export const BINARIES: ProgramBinary[] = binariesUnderTest();

/** Whether this run compares the two binaries (not while a crate is missing from the tree, nor in a dev-only run). */
export const COMPARING = PROGRAM_BINARIES.every((b) => BINARIES.includes(b));

/** The `.so` of `binary`, or an error that names it and how to build it. */
export function requireBinary(binary: ProgramBinary): string {
  const so = programSoPath(binary);
  if (!existsSync(so)) {
    throw new Error(
      `${so} is missing: every test in tests/programs runs on each program binary whose crate is in the tree ` +
        `(${EXPECTED_BINARIES.join(', ')}); build them with \`make program\`. ` +
        `(Dev only: ${DEV_ONLY_BINARIES_ENV}=<binary> runs one of them.)`,
    );
  }
  return so;
}
