// Keys come from a keypair file (solana-keygen's JSON array of 64 bytes), never from the command line, and only
// from a file no group or other user can read (as ssh treats private keys). Key bytes are never logged.
import * as fs from 'fs';
import { Keypair } from '@solana/web3.js';
import { OncepayError } from '../../common/errors';
import { KEYPAIR_CODES, PAYOUT_CODES } from '../../common/errors/codes';

export function readKeypairFile(path: string): Keypair {
  if (typeof path !== 'string' || path === '')
    throw new OncepayError(PAYOUT_CODES.KEYPAIR_MALFORMED, "path must be the keypair file's path (a string)", {
      field: 'path',
    });
  let text: string;
  try {
    const mode = fs.statSync(path).mode & 0o777;
    if (mode & 0o077) {
      throw new OncepayError(
        KEYPAIR_CODES.PERMISSIONS_TOO_OPEN,
        `keypair file at path ${path} is open to group or others (mode ${mode.toString(8)}): chmod 600 it`,
        { path, field: 'path' },
      );
    }
    text = fs.readFileSync(path, 'utf8');
  } catch (e) {
    if (e instanceof OncepayError) throw e;
    throw new OncepayError(
      PAYOUT_CODES.KEYPAIR_MALFORMED,
      `cannot read keypair file at path ${path}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      { path, field: 'path' },
    );
  }
  let bytes: unknown;
  try {
    bytes = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the file's content, which is a secret key.
    throw new OncepayError(PAYOUT_CODES.KEYPAIR_MALFORMED, `keypair file at path ${path} is not valid JSON`, {
      path,
      field: 'path',
    });
  }
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    throw new OncepayError(
      PAYOUT_CODES.KEYPAIR_MALFORMED,
      `keypair file at path ${path} is not a JSON array of 64 bytes`,
      {
        path,
        field: 'path',
      },
    );
  }
  return Keypair.fromSecretKey(Uint8Array.from(bytes as number[]));
}
