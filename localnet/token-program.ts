// Which SPL Token program sits at TokenkegQ… in a localnet: LiteSVM's default, p-token (the pinocchio rewrite:
// the same instructions at a fraction of the compute units), or the legacy spl_token-3.5.0 that a
// solana-test-validator 3.1.4 runs, so that compute units and logs match the validator's. The legacy binary comes
// from crates.io (toolchain/spl-token-legacy/fetch.sh, run by `make setup`); it is never committed.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { OncepayError } from '../common/errors';
import { LOCALNET_CODES } from '../common/errors/codes';
import { projectRoot } from '../common/project-root';

export const TOKEN_PROGRAMS = ['p-token', 'legacy'] as const;
export type TokenProgramChoice = (typeof TOKEN_PROGRAMS)[number];

/** The legacy program's sha256, as solana-program-binaries 3.1.4 ships it. */
export const LEGACY_TOKEN_SHA256 = '18264f491c7e0ad056dd36f42f8de6d1fedf9f044d1f521e714b4dc6b61594b6';
/** The validator loads it with BPF loader 2 (solana-program-binaries' spl_programs). */
export const BPF_LOADER_2_ID = 'BPFLoader2111111111111111111111111111111111';

/** Where fetch.sh puts the legacy program. */
export function legacyTokenSoPath(root = projectRoot()): string {
  return path.join(root, '.oncepay', 'programs', 'spl_token-3.5.0.so');
}

/** The legacy program's bytes, checked; a clear error naming the fix when it is absent or not the expected file. */
export function legacyTokenProgram(file = legacyTokenSoPath()): Uint8Array {
  if (!fs.existsSync(file)) {
    throw new OncepayError(
      LOCALNET_CODES.TOKEN_PROGRAM_MISSING,
      `the legacy SPL Token program is not at ${file}: run toolchain/spl-token-legacy/fetch.sh (make setup does)`,
      { file },
    );
  }
  const bytes = fs.readFileSync(file);
  const sha = crypto.createHash('sha256').update(bytes).digest('hex');
  if (sha !== LEGACY_TOKEN_SHA256) {
    throw new OncepayError(
      LOCALNET_CODES.TOKEN_PROGRAM_MISSING,
      `${file} is not spl_token-3.5.0 (sha256 ${sha}); delete it and run toolchain/spl-token-legacy/fetch.sh`,
      { file, sha },
    );
  }
  return new Uint8Array(bytes);
}
