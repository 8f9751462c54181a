// Pure: Solana wire transactions → the pieces the RPC layer needs (signature, keys, instructions, lookups).
// Parsing is web3.js v1's own deserializer, so what we accept is what a client produces.
import crypto from 'node:crypto';
import { PublicKey, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { OncepayError } from '../common/errors';
import { LOCALNET_CODES } from '../common/errors/codes';

export interface WireInstruction {
  programIdIndex: number;
  accounts: number[];
  /** Instruction data, raw bytes. */
  data: Uint8Array;
}

export interface WireLookup {
  accountKey: string;
  writableIndexes: number[];
  readonlyIndexes: number[];
}

export interface WireTransaction {
  bytes: Uint8Array;
  signature: string;
  signatures: string[];
  version: 'legacy' | 0;
  header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
  staticKeys: string[];
  recentBlockhash: string;
  instructions: WireInstruction[];
  lookups: WireLookup[];
}

export interface LoadedAddresses {
  writable: string[];
  readonly: string[];
}

export function decodeWireTransaction(bytes: Uint8Array): WireTransaction {
  let tx: VersionedTransaction;
  try {
    tx = VersionedTransaction.deserialize(bytes);
  } catch (e) {
    throw new OncepayError(
      LOCALNET_CODES.MALFORMED_TRANSACTION,
      `failed to deserialize transaction: ${(e as Error).message}`,
    );
  }
  const m = tx.message;
  if (tx.signatures.length === 0 || tx.signatures.length !== m.header.numRequiredSignatures) {
    throw new OncepayError(LOCALNET_CODES.MALFORMED_TRANSACTION, 'signature count does not match the message header');
  }
  const signatures = tx.signatures.map((s) => bs58.encode(s));
  return {
    bytes,
    signature: signatures[0],
    signatures,
    version: m.version === 0 ? 0 : 'legacy',
    header: { ...m.header },
    staticKeys: m.staticAccountKeys.map((k) => k.toBase58()),
    recentBlockhash: m.recentBlockhash,
    instructions: m.compiledInstructions.map((ix) => ({
      programIdIndex: ix.programIdIndex,
      accounts: [...ix.accountKeyIndexes],
      data: Uint8Array.from(ix.data),
    })),
    lookups: m.addressTableLookups.map((l) => ({
      accountKey: l.accountKey.toBase58(),
      writableIndexes: [...l.writableIndexes],
      readonlyIndexes: [...l.readonlyIndexes],
    })),
  };
}

/** Decode the base58 or base64 text of a transaction as the RPC receives it. */
export function decodeWireText(text: string, encoding: 'base58' | 'base64'): Uint8Array {
  if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
      throw new OncepayError(LOCALNET_CODES.MALFORMED_TRANSACTION, 'invalid base64 encoding');
    }
    return Uint8Array.from(Buffer.from(text, 'base64'));
  }
  try {
    return bs58.decode(text);
  } catch {
    throw new OncepayError(LOCALNET_CODES.MALFORMED_TRANSACTION, 'invalid base58 encoding');
  }
}

/** Addresses stored in an address lookup table account (56-byte header, then 32-byte keys). */
export function lookupTableAddresses(data: Uint8Array): string[] {
  const HEADER = 56;
  if (data.length < HEADER || (data.length - HEADER) % 32 !== 0 || data[0] !== 1) {
    throw new OncepayError(LOCALNET_CODES.LOOKUP_TABLE_NOT_FOUND, 'account is not an address lookup table');
  }
  const out: string[] = [];
  for (let i = HEADER; i < data.length; i += 32) out.push(new PublicKey(data.subarray(i, i + 32)).toBase58());
  return out;
}

/** Resolve a v0 transaction's lookups against table contents (writable ones first, as the runtime orders them). */
export function resolveLookups(lookups: WireLookup[], tableOf: (key: string) => string[]): LoadedAddresses {
  const writable: string[] = [];
  const readonly: string[] = [];
  for (const l of lookups) {
    const table = tableOf(l.accountKey);
    for (const i of l.writableIndexes) {
      if (i >= table.length)
        throw new OncepayError(LOCALNET_CODES.LOOKUP_TABLE_NOT_FOUND, `lookup index ${i} out of range`);
      writable.push(table[i]);
    }
    for (const i of l.readonlyIndexes) {
      if (i >= table.length)
        throw new OncepayError(LOCALNET_CODES.LOOKUP_TABLE_NOT_FOUND, `lookup index ${i} out of range`);
      readonly.push(table[i]);
    }
  }
  return { writable, readonly };
}

/** Every account key in runtime order: static, loaded writable, loaded readonly. */
export function allAccountKeys(tx: WireTransaction, loaded: LoadedAddresses): string[] {
  return [...tx.staticKeys, ...loaded.writable, ...loaded.readonly];
}

export function isSigner(tx: WireTransaction, index: number): boolean {
  return index < tx.header.numRequiredSignatures;
}

export function isWritable(tx: WireTransaction, loaded: LoadedAddresses, index: number): boolean {
  const h = tx.header;
  const n = tx.staticKeys.length;
  if (index < h.numRequiredSignatures) return index < h.numRequiredSignatures - h.numReadonlySignedAccounts;
  if (index < n) return index < n - h.numReadonlyUnsignedAccounts;
  return index - n < loaded.writable.length;
}

// An Ed25519 public key as DER SubjectPublicKeyInfo: this fixed prefix, then the 32 raw bytes.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Every signature verifies against its signer and the message bytes (what a node checks before preflight). */
export function signaturesVerify(tx: WireTransaction): boolean {
  // The wire form: compact-u16 signature count, the signatures (64 bytes each), then the message.
  let offset = 0;
  let count = 0;
  for (let shift = 0; ; shift += 7) {
    const b = tx.bytes[offset++];
    count |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
  }
  const message = tx.bytes.subarray(offset + count * 64);
  return tx.signatures.every((sig, i) =>
    crypto.verify(
      null,
      message,
      { key: Buffer.concat([ED25519_SPKI_PREFIX, bs58.decode(tx.staticKeys[i])]), format: 'der', type: 'spki' },
      bs58.decode(sig),
    ),
  );
}
