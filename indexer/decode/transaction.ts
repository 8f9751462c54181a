// One getTransaction result (json, jsonParsed or binary encoding, legacy or v0) → its receipts, in instruction order:
// each top-level instruction, then the inner (CPI) instructions recorded under it.
import bs58 from 'bs58';
import type { BaseUnits } from '../../common/amount';
import { OncepayError } from '../../common/errors';
import { accountKeys, loadedAddresses, type Keys } from './account-keys';
import { assertTransfersMatchBalances } from './balance-check';
import { outOfRange } from './amount-field';
import { DECODE_CODES } from '../../common/errors/codes';
import {
  array,
  isAddress,
  isIndex,
  isRecord,
  malformed,
  optionalArray,
  record,
  show,
  withPath,
  type Json,
} from './json-shape';
import { decodeParsedTransfer } from './parsed-instruction';
import { receiptProgramOf, SYSTEM_PROGRAM } from './programs';
import { decodeRawTransfer } from './raw-instruction';
import { TOP_LEVEL, type Receipt } from './receipt';
import { netOfUnstatedFees, tokenBalances, type TokenBalance } from './token-balances';
import type { InstructionTransfer } from './transfer';
import { decodeWireTransaction } from './wire-transaction';

export interface DecodeOptions {
  /** Copied into each receipt's `cluster`. */
  cluster?: string;
}

/** Addresses among a parsed instruction's `info` values (the accounts it names). */
function parsedAccounts(parsed: unknown): string[] {
  if (!isRecord(parsed) || !isRecord(parsed.info)) return [];
  return Object.values(parsed.info).flatMap((v) => (isAddress(v) ? [v] : Array.isArray(v) ? v.filter(isAddress) : []));
}

/**
 * One instruction, top-level or inner, in either encoding → a transfer or null. A token-program instruction that
 * is not a transfer (mintTo, burn, close, syncNative, …) adds the accounts it names to `blurred`: their balances
 * move by amounts no transfer states (balance-check.ts).
 */
function decodeInstruction(ix: unknown, keys: Keys, path: string, blurred: Set<string>): InstructionTransfer | null {
  const t = decodeOneInstruction(ix, keys, path);
  if (t === null && isRecord(ix)) {
    const programId = typeof ix.programIdIndex === 'number' ? keys.keys[ix.programIdIndex] : ix.programId;
    const program = typeof programId === 'string' ? receiptProgramOf(programId) : null;
    if (program !== null && programId !== SYSTEM_PROGRAM) {
      const named =
        ix.parsed !== undefined
          ? parsedAccounts(ix.parsed)
          : (Array.isArray(ix.accounts) ? ix.accounts : []).map((a) =>
              isIndex(a, keys.keys.length) ? keys.keys[a] : a,
            );
      for (const a of named) if (typeof a === 'string') blurred.add(a);
    }
  }
  return t;
}

function decodeOneInstruction(ix: unknown, keys: Keys, path: string): InstructionTransfer | null {
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
  throw malformed(`slot ${show(v)} is not a non-negative integer`);
}

function blockTimeOf(v: unknown): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  throw malformed(`blockTime ${show(v)} is not an integer`);
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
export function decodeTransaction(value: unknown, opts: DecodeOptions = {}): Receipt[] {
  // a JSON-RPC envelope is accepted too (its error / null result are named by readTransactionsInput)
  const input = isRecord(value) && 'jsonrpc' in value && isRecord(value.result) ? value.result : value;
  if (!isRecord(input)) throw malformed('transaction result is not an object');
  const version = input.version;
  if (!(version === undefined || version === null || version === 'legacy' || version === 0)) {
    throw new OncepayError(
      DECODE_CODES.UNSUPPORTED_VERSION,
      `transaction version ${show(version)} is not legacy or 0`,
      {
        version: show(version),
      },
    );
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
      throw malformed(`version field ${show(version)} disagrees with the transaction bytes (${wire.version})`);
    }
    tx = wire as unknown as Json;
  } else if (typeof txField === 'string') {
    throw new OncepayError(
      DECODE_CODES.UNSUPPORTED_ENCODING,
      'transaction is a bare string: expected json, jsonParsed, or ["<bytes>", "base64"]',
    );
  } else {
    tx = record(input, 'transaction', 'result');
  }
  const signature = signatureOf(tx);
  const meta = input.meta;
  if (meta === undefined || meta === null) {
    throw new OncepayError(
      DECODE_CODES.MISSING_META,
      `transaction ${signature} has no meta: cannot tell success from failure`,
      { signature },
    );
  }
  if (!isRecord(meta)) throw malformed('meta is not an object');
  const slot = slotOf(input.slot);
  const blockTime = blockTimeOf(input.blockTime);
  // A failed transaction moved no tokens (only its fee): no receipts. `err` is the field; `status` is its older
  // twin ({"Ok":null} / {"Err":…}); either saying failure is enough, and saying neither is not success.
  if (meta.err === undefined && !isRecord(meta.status)) throw malformed('meta has neither err nor status');
  if ((meta.err !== null && meta.err !== undefined) || (isRecord(meta.status) && meta.status.Err !== undefined))
    return [];

  const message = record(tx, 'message', 'transaction');
  const rawKeys = array(message, 'accountKeys', 'transaction.message');
  const parsed = rawKeys.length > 0 && isRecord(rawKeys[0]);
  const isLegacy = Array.isArray(txField)
    ? tx.version === 'legacy'
    : version === 'legacy' || version === undefined || version === null;
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
  const blurred = new Set<string>();
  outer.forEach((ix, i) => {
    const top = decodeInstruction(ix, keys, `transaction.message.instructions[${i}]`, blurred);
    if (top) receipts.push(toReceipt(top, i, TOP_LEVEL));
    (inner.get(i) ?? []).forEach((ix2, j) => {
      const t = decodeInstruction(ix2, keys, `meta.innerInstructions[index=${i}].instructions[${j}]`, blurred);
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
  assertTransfersMatchBalances(signature, receipts, { indexOf: keys.indexOf, pre, post, blurred });
  return receipts;
}
