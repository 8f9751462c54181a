// One getTransaction result (json or jsonParsed encoding, legacy or v0) → its receipts, in instruction order:
// each top-level instruction, then the inner (CPI) instructions recorded under it.
import bs58 from 'bs58';
import type { BaseUnits } from '../../common/amount';
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from './codes';
import { expandBlock } from './input';
import { decodeParsedTransfer } from './parsed-instruction';
import { outOfRange } from './amount-field';
import { receiptProgramOf } from './programs';
import { decodeRawTransfer } from './raw-instruction';
import { decodeWireTransaction } from './wire-transaction';
import { TOP_LEVEL, type Receipt } from './receipt';
import type { InstructionTransfer } from './transfer';

export interface DecodeOptions {
  /** Copied into each receipt's `cluster`. */
  cluster?: string;
}

export interface DecodeBlockOptions extends DecodeOptions {
  /** getBlock results do not carry their own slot: pass the slot you asked for. */
  slot?: bigint | number;
}

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function malformed(what: string, context: Record<string, unknown> = {}): OncepayError {
  return new OncepayError(DECODE_CODES.MALFORMED_TRANSACTION, what, context);
}

function record(parent: Json, field: string, path: string): Json {
  const v = parent[field];
  if (!isRecord(v)) throw malformed(`${path}.${field} is not an object`);
  return v;
}

function array(parent: Json, field: string, path: string): unknown[] {
  const v = parent[field];
  if (!Array.isArray(v)) throw malformed(`${path}.${field} is not an array`);
  return v;
}

function optionalArray(parent: Json, field: string, path: string): unknown[] {
  const v = parent[field];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw malformed(`${path}.${field} is not an array`);
  return v;
}

function isIndex(v: unknown, length: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < length;
}

function isAddress(v: unknown): v is string {
  return typeof v === 'string' && /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(v);
}

/** The whole account key list with signer flags, in the order instruction indices refer to. */
interface Keys {
  keys: string[];
  signers: Set<string>;
  indexOf: Map<string, number>;
}

function addresses(v: unknown[], path: string): string[] {
  return v.map((k, i) => {
    if (!isAddress(k)) throw malformed(`${path}[${i}] is not a base58 address`);
    return k;
  });
}

function loadedAddresses(meta: Json): string[] {
  const loaded = meta.loadedAddresses;
  if (loaded === undefined || loaded === null) return [];
  if (!isRecord(loaded)) throw malformed('meta.loadedAddresses is not an object');
  // v0 order: static keys, then loaded writable, then loaded readonly
  return [
    ...addresses(optionalArray(loaded, 'writable', 'meta.loadedAddresses'), 'meta.loadedAddresses.writable'),
    ...addresses(optionalArray(loaded, 'readonly', 'meta.loadedAddresses'), 'meta.loadedAddresses.readonly'),
  ];
}

function accountKeys(message: Json, meta: Json, parsed: boolean): Keys {
  const raw = array(message, 'accountKeys', 'transaction.message');
  const keys: string[] = [];
  const signers = new Set<string>();
  if (parsed) {
    let sawLookup = false;
    raw.forEach((k, i) => {
      if (!isRecord(k) || !isAddress(k.pubkey)) throw malformed(`transaction.message.accountKeys[${i}] lacks a pubkey`);
      keys.push(k.pubkey);
      if (k.signer === true) signers.add(k.pubkey);
      if (k.source === 'lookupTable') sawLookup = true;
    });
    // jsonParsed lists loaded addresses inline (source "lookupTable"); append them only if a provider did not
    if (!sawLookup) keys.push(...loadedAddresses(meta));
  } else {
    keys.push(...addresses(raw, 'transaction.message.accountKeys'));
    const header = record(message, 'header', 'transaction.message');
    const n = header.numRequiredSignatures;
    if (!isIndex(n, keys.length + 1)) throw malformed('transaction.message.header.numRequiredSignatures is invalid');
    keys.slice(0, n).forEach((k) => signers.add(k));
    keys.push(...loadedAddresses(meta));
  }
  const indexOf = new Map<string, number>();
  keys.forEach((k, i) => {
    if (!indexOf.has(k)) indexOf.set(k, i);
  });
  return { keys, signers, indexOf };
}

interface TokenBalance {
  mint: string;
  owner: string | null;
  /** Base units, null if the RPC gave none we can read exactly. */
  amount: bigint | null;
}

function balanceAmount(b: Json): bigint | null {
  const ui = b.uiTokenAmount;
  if (!isRecord(ui) || typeof ui.amount !== 'string' || !/^[0-9]{1,20}$/.test(ui.amount)) return null;
  return BigInt(ui.amount);
}

function tokenBalances(meta: Json, field: string, keyCount: number): Map<number, TokenBalance> {
  const out = new Map<number, TokenBalance>();
  optionalArray(meta, field, 'meta').forEach((b, i) => {
    if (!isRecord(b) || !isIndex(b.accountIndex, keyCount) || !isAddress(b.mint)) {
      throw malformed(`meta.${field}[${i}] is malformed`);
    }
    out.set(b.accountIndex, { mint: b.mint, owner: isAddress(b.owner) ? b.owner : null, amount: balanceAmount(b) });
  });
  return out;
}

/** One instruction, top-level or inner, in either encoding → a transfer or null. */
function decodeInstruction(ix: unknown, keys: Keys, path: string): InstructionTransfer | null {
  if (!isRecord(ix)) throw malformed(`${path} is not an object`);
  let programId: string;
  if (ix.programIdIndex !== undefined) {
    if (!isIndex(ix.programIdIndex, keys.keys.length)) throw malformed(`${path}.programIdIndex is out of range`);
    programId = keys.keys[ix.programIdIndex];
  } else if (isAddress(ix.programId)) {
    programId = ix.programId;
  } else {
    throw malformed(`${path} has neither programIdIndex nor programId`);
  }
  if (ix.parsed !== undefined) {
    return withPath(path, () => decodeParsedTransfer(programId, ix.parsed));
  }
  if (!Array.isArray(ix.accounts) || (typeof ix.data !== 'string' && !(ix.data instanceof Uint8Array))) {
    throw malformed(`${path} lacks accounts/data`);
  }
  // other programs' data is none of our business: a program we do not decode cannot fail the transaction
  if (receiptProgramOf(programId) === null) return null;
  const accounts = ix.accounts.map((a, i) => {
    if (isIndex(a, keys.keys.length)) return keys.keys[a];
    if (isAddress(a)) return a; // jsonParsed, instruction the RPC did not parse: accounts are addresses
    throw malformed(`${path}.accounts[${i}] is not a valid account`);
  });
  let data: Uint8Array;
  if (ix.data instanceof Uint8Array) {
    data = ix.data; // from a binary encoding
  } else {
    try {
      data = bs58.decode(ix.data);
    } catch {
      throw new OncepayError(DECODE_CODES.MALFORMED_INSTRUCTION, `${path}.data is not base58`);
    }
  }
  return withPath(path, () => decodeRawTransfer(programId, accounts, data));
}

function withPath<T>(path: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof OncepayError && e.context.path === undefined) {
      throw new OncepayError(e.code, `${path}: ${e.message.replace(`${e.code}: `, '')}`, { ...e.context, path });
    }
    throw e;
  }
}

/** meta.innerInstructions keyed by the outer instruction's index (never by array position). */
function innerByOuter(meta: Json, outerCount: number): Map<number, unknown[]> {
  const out = new Map<number, unknown[]>();
  optionalArray(meta, 'innerInstructions', 'meta').forEach((entry, k) => {
    if (!isRecord(entry) || !isIndex(entry.index, outerCount) || !Array.isArray(entry.instructions)) {
      throw malformed(`meta.innerInstructions[${k}] is malformed (index must name an outer instruction)`);
    }
    // two entries for one outer instruction would give two receipts the same (ixIndex, innerIndex)
    if (out.has(entry.index)) throw malformed(`meta.innerInstructions has two entries for instruction ${entry.index}`);
    out.set(entry.index, entry.instructions);
  });
  return out;
}

function slotOf(v: unknown): bigint | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint' && v >= 0n) return v;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  throw malformed(`slot ${String(v)} is not a non-negative integer`);
}

function blockTimeOf(v: unknown): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  throw malformed(`blockTime ${String(v)} is not an integer`);
}

function signatureOf(tx: Json): string {
  const sigs = array(tx, 'signatures', 'transaction');
  const s = sigs[0];
  let ok = false;
  if (typeof s === 'string' && /^[1-9A-HJ-NP-Za-km-z]{64,88}$/.test(s)) {
    try {
      ok = bs58.decode(s).length === 64;
    } catch {
      ok = false;
    }
  }
  if (!ok) throw malformed('transaction.signatures[0] is not a base58 64-byte signature');
  return s as string;
}

/** Receipts of one getTransaction result. Pure; throws OncepayError with a DECODE code on malformed input. */
export function decodeTransaction(input: unknown, opts: DecodeOptions = {}): Receipt[] {
  if (!isRecord(input)) throw malformed('transaction result is not an object');
  const version = input.version;
  if (!(version === undefined || version === null || version === 'legacy' || version === 0)) {
    throw new OncepayError(DECODE_CODES.UNSUPPORTED_VERSION, `transaction version ${JSON.stringify(version)} is not legacy or 0`, {
      version: String(version),
    });
  }
  const txField = input.transaction;
  let tx: Json;
  if (Array.isArray(txField)) {
    // base64 / base58: the signed bytes; parsed into the json encoding's shape
    if (txField.length !== 2 || typeof txField[0] !== 'string' || typeof txField[1] !== 'string') {
      throw malformed('transaction is an array but not ["<bytes>", "<encoding>"]');
    }
    const wire = decodeWireTransaction(txField[0], txField[1]);
    if (version !== undefined && version !== null && version !== wire.version) {
      throw malformed(`version field ${JSON.stringify(version)} disagrees with the transaction bytes (${wire.version})`);
    }
    tx = wire as unknown as Json;
  } else if (typeof txField === 'string') {
    throw new OncepayError(DECODE_CODES.UNSUPPORTED_ENCODING, 'transaction is a bare string: expected json, jsonParsed, or ["<bytes>", "base64"]');
  } else {
    tx = record(input, 'transaction', 'result');
  }
  const signature = signatureOf(tx);
  const meta = input.meta;
  if (meta === undefined || meta === null) {
    throw new OncepayError(DECODE_CODES.MISSING_META, `transaction ${signature} has no meta: cannot tell success from failure`, { signature });
  }
  if (!isRecord(meta)) throw malformed('meta is not an object');
  const slot = slotOf(input.slot);
  const blockTime = blockTimeOf(input.blockTime);
  // A failed transaction moved no tokens (only its fee): no receipts. `err` is the field; `status` is its older
  // twin ({"Ok":null} / {"Err":…}); either saying failure is enough, and saying neither is not success.
  if (meta.err === undefined && !isRecord(meta.status)) throw malformed('meta has neither err nor status');
  if ((meta.err !== null && meta.err !== undefined) || (isRecord(meta.status) && meta.status.Err !== undefined)) return [];

  const message = record(tx, 'message', 'transaction');
  const rawKeys = array(message, 'accountKeys', 'transaction.message');
  const parsed = rawKeys.length > 0 && isRecord(rawKeys[0]);
  const isLegacy = Array.isArray(txField) ? tx.version === 'legacy' : version === 'legacy' || version === undefined || version === null;
  if (isLegacy && loadedAddresses(meta).length > 0) throw malformed('legacy transaction with meta.loadedAddresses');
  const keys = accountKeys(message, meta, parsed);
  const pre = tokenBalances(meta, 'preTokenBalances', keys.keys.length);
  const post = tokenBalances(meta, 'postTokenBalances', keys.keys.length);
  const outer = array(message, 'instructions', 'transaction.message');
  const inner = innerByOuter(meta, outer.length);

  const balanceOf = (address: string): TokenBalance | undefined => {
    const i = keys.indexOf.get(address);
    return i === undefined ? undefined : (post.get(i) ?? pre.get(i));
  };
  const toReceipt = (t: InstructionTransfer, ixIndex: number, innerIndex: number): Receipt => {
    if (t.fee !== null && t.fee > t.amount) throw outOfRange('fee', `${t.fee} (above amount ${t.amount})`);
    const isSol = t.program === 'system';
    const destBalance = isSol ? undefined : balanceOf(t.destination);
    const mint = t.mint ?? balanceOf(t.source)?.mint ?? destBalance?.mint ?? null;
    const r: Receipt = {
      signature,
      slot,
      blockTime,
      ixIndex,
      innerIndex,
      program: t.program,
      kind: t.kind,
      mint,
      source: t.source,
      destination: t.destination,
      destinationOwner: isSol ? t.destination : (destBalance?.owner ?? null),
      // what arrived: a Token-2022 fee is withheld in the destination, not spendable by its owner
      amount: (t.fee === null ? t.amount : t.amount - t.fee) as BaseUnits,
      accountKeys: keys.keys,
    };
    // Solana Pay: references are read-only non-signer keys appended to the transfer; multisig signers must sign.
    if (t.extras !== null) r.references = t.extras.filter((k) => !keys.signers.has(k));
    if (opts.cluster !== undefined) r.cluster = opts.cluster;
    if (t.fee !== null) r.fee = t.fee as BaseUnits;
    if (t.decimals !== null) r.decimals = t.decimals;
    return r;
  };

  const receipts: Receipt[] = [];
  outer.forEach((ix, i) => {
    const top = decodeInstruction(ix, keys, `transaction.message.instructions[${i}]`);
    if (top) receipts.push(toReceipt(top, i, TOP_LEVEL));
    (inner.get(i) ?? []).forEach((ix2, j) => {
      const t = decodeInstruction(ix2, keys, `meta.innerInstructions[index=${i}].instructions[${j}]`);
      if (t) receipts.push(toReceipt(t, i, j));
    });
  });
  netOfUnstatedFees(receipts, (address) => {
    const i = keys.indexOf.get(address);
    if (i === undefined) return null;
    const after = post.get(i)?.amount;
    const before = pre.has(i) ? pre.get(i)?.amount : 0n; // no pre balance: created in this transaction
    return after === undefined || after === null || before === undefined || before === null ? null : after - before;
  });
  return receipts;
}

/**
 * A Token-2022 mint with a transfer fee withholds it on a plain transferChecked too, without stating it in the
 * instruction. When the destination's balance change is attributable to this one receipt alone (no other receipt
 * in the transaction touches that account), and it is below the amount sent, what arrived is that change.
 * Non-transfer instructions on the same account in the same transaction (burn, close) would blur this; documented.
 */
function netOfUnstatedFees(receipts: Receipt[], delta: (address: string) => bigint | null): void {
  const touches = new Map<string, number>();
  for (const r of receipts) {
    touches.set(r.source, (touches.get(r.source) ?? 0) + 1);
    touches.set(r.destination, (touches.get(r.destination) ?? 0) + 1);
  }
  for (const r of receipts) {
    if (r.program !== 'spl-token-2022' || r.kind !== 'transferChecked' || touches.get(r.destination) !== 1) continue;
    const d = delta(r.destination);
    if (d === null || d < 0n || d >= r.amount) continue;
    r.fee = (r.amount - d) as BaseUnits;
    r.amount = d as BaseUnits;
  }
}

/**
 * Receipts of every transaction of a getBlock result (transactionDetails "full"; an RPC envelope is accepted).
 * The block does not carry its own slot: pass `opts.slot` (else a `slot` field on the block is used, else null).
 */
export function decodeBlock(block: unknown, opts: DecodeBlockOptions = {}): Receipt[] {
  let b = block;
  if (isRecord(b) && 'jsonrpc' in b) b = b.result;
  if (!isRecord(b) || !Array.isArray(b.transactions)) {
    throw new OncepayError(
      DECODE_CODES.MALFORMED_BLOCK,
      'block has no transactions array (fetch getBlock with transactionDetails "full")',
    );
  }
  const slot = opts.slot === undefined ? undefined : BigInt(opts.slot);
  return expandBlock(b, slot).flatMap((tx, i) =>
    withPath(`transactions[${i}]`, () => decodeTransaction(tx, { cluster: opts.cluster })),
  );
}
