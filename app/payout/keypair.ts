// Keys come from a keypair file (solana-keygen's JSON array of 64 bytes), never from the command line.
import * as fs from 'fs';
import { Keypair } from '@solana/web3.js';
import { OncepayError } from '../../common/errors';
import { KEYPAIR_MALFORMED } from '../codes';

export function readKeypairFile(path: string): Keypair {
  let bytes: unknown;
  try {
    bytes = JSON.parse(fs.readFileSync(path, 'utf8'));
  } catch (e) {
    throw new OncepayError(KEYPAIR_MALFORMED, `cannot read keypair file ${path}: ${(e as Error).message}`, { path });
  }
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    throw new OncepayError(KEYPAIR_MALFORMED, `keypair file ${path} is not a JSON array of 64 bytes`, { path });
  }
  return Keypair.fromSecretKey(Uint8Array.from(bytes as number[]));
}
