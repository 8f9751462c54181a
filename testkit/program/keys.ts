// Deterministic keys for the program tests: each case starts from a seed (its runtime and title), so the same case
// on the Anchor binary and on the lite twin uses the same keys, and the accounts it leaves (op records, configs,
// token balances) can be compared byte for byte (differential.ts).
import { createHash } from 'node:crypto';
import { Keypair, type PublicKey } from '@solana/web3.js';

let seed = 'oncepay-program-tests';
let counter = 0;

/** Starts the key sequence of a case. */
export function seedKeys(label: string): void {
  seed = label;
  counter = 0;
}

/** The next key pair of the current case. */
export function keypair(): Keypair {
  return Keypair.fromSeed(createHash('sha256').update(`${seed}#${counter++}`).digest());
}

/** The public key of the next key pair of the current case. */
export function pubkey(): PublicKey {
  return keypair().publicKey;
}
