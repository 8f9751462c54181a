// Pure checks on what reaches the ledger. A bad receipt is reported with a code and skipped; it never stops
// the good ones of the same batch.
import { OncepayError } from '../../common/errors';
import { isBaseUnits } from '../../common/amount';
import type { Receipt } from '../decode/receipt';
import { LEDGER_CODES } from '../../common/errors/codes';
import { RECEIPT_SOURCES, ReceiptSource, RejectedReceipt } from './types';

/** PostgreSQL's text holds any character but NUL: a string with one fails the statement that carries it. */
export function isStorableText(x: unknown): x is string {
  return typeof x === 'string' && x.indexOf('\u0000') === -1;
}

function isText(x: unknown): x is string {
  return typeof x === 'string' && x.length > 0;
}

/** A NUL in a text that is a string (null and undefined hold none). */
function hasNul(s: string | null | undefined): boolean {
  return typeof s === 'string' && s.indexOf('\u0000') !== -1;
}

/** No NUL in the receipt's stored texts (checked once they are known to be strings or null). */
function storable(r: Receipt): boolean {
  return !(
    hasNul(r.signature) ||
    hasNul(r.source) ||
    hasNul(r.destination) ||
    hasNul(r.destinationOwner) ||
    hasNul(r.mint) ||
    hasNul(r.program) ||
    hasNul(r.kind)
  );
}

/** The largest value of the receipts' integer (ix_index, inner_index) and bigint (slot, block_time) columns. */
const INT4_MAX = 2 ** 31 - 1;
const INT8_MAX = (1n << 63n) - 1n;
const MAX_SIGNATURE_LENGTH = 256;

/** Keys the matcher compares in node (never stored: a NUL in one matches nothing and is never sent). */
function isKeyList(x: unknown): boolean {
  return x === undefined || (Array.isArray(x) && x.every((k) => typeof k === 'string'));
}

/** Returns null if the receipt can be stored, else why not. */
export function receiptProblem(r: Receipt, cluster?: string): string | null {
  if (r === null || typeof r !== 'object') return 'not an object';
  if (cluster !== undefined && r.cluster !== undefined && r.cluster !== cluster)
    return `receipt is from cluster ${r.cluster}, batch is for ${cluster}`;
  if (!isText(r.signature)) return 'signature missing';
  // Far above a base58 signature's 88 characters, far below what one entry of the identity index may hold.
  if (r.signature.length > MAX_SIGNATURE_LENGTH) return `signature longer than ${MAX_SIGNATURE_LENGTH} characters`;
  if (!Number.isSafeInteger(r.ixIndex) || r.ixIndex < 0 || r.ixIndex > INT4_MAX)
    return `ixIndex ${String(r.ixIndex)} is not an index`;
  if (!Number.isSafeInteger(r.innerIndex) || r.innerIndex < -1 || r.innerIndex > INT4_MAX)
    return `innerIndex ${String(r.innerIndex)} is not -1 or an index`;
  if (typeof r.amount !== 'bigint') return `amount must be a bigint, got ${typeof r.amount}`;
  if (!isBaseUnits(r.amount)) return `amount ${r.amount} is not a u64`;
  if (!isText(r.source) || !isText(r.destination)) return 'source / destination missing';
  if (r.mint !== null && !isText(r.mint)) return 'mint must be a string or null';
  if (r.destinationOwner !== null && r.destinationOwner !== undefined && !isText(r.destinationOwner))
    return 'destinationOwner must be a string or null';
  if (r.slot !== null && r.slot !== undefined && (typeof r.slot !== 'bigint' || r.slot < 0n || r.slot > INT8_MAX))
    return 'slot must be a non-negative bigint (at most 2^63 - 1) or null';
  if (r.blockTime !== null && r.blockTime !== undefined && !Number.isSafeInteger(r.blockTime))
    return 'blockTime must be a whole number of seconds or null';
  if (!isText(r.program) || !isText(r.kind)) return 'program / kind missing';
  if (!isKeyList(r.references) || !isKeyList(r.accountKeys))
    return 'references / accountKeys must be lists of addresses';
  if (!storable(r)) return 'a text field holds a NUL character';
  return null;
}

export function partitionReceipts(
  receipts: readonly Receipt[],
  cluster?: string,
): { good: Receipt[]; rejected: RejectedReceipt[] } {
  const good: Receipt[] = [];
  const rejected: RejectedReceipt[] = [];
  receipts.forEach((r, index) => {
    const problem = receiptProblem(r, cluster);
    if (problem) rejected.push({ index, code: LEDGER_CODES.INVALID_RECEIPT, message: problem });
    else good.push(r);
  });
  return { good, rejected };
}

export function assertSource(source: string): asserts source is ReceiptSource {
  if (!(RECEIPT_SOURCES as readonly string[]).includes(source)) {
    throw new OncepayError(
      LEDGER_CODES.INVALID_SOURCE,
      `source must be one of ${RECEIPT_SOURCES.join(', ')}, got ${JSON.stringify(source)}`,
    );
  }
}

export function assertCluster(cluster: string): void {
  if (!isText(cluster)) throw new OncepayError(LEDGER_CODES.INVALID_CLUSTER, 'cluster must be a non-empty string');
}

/** A slot's order in the chain: no slot (null) after every slot. */
export function compareSlot(a: bigint | null, b: bigint | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

/** A checkpoint's slot as the statements take it (decimal text), or INVALID_CHECKPOINT. */
export function slotText(slot: bigint | number): string {
  const s = typeof slot === 'number' ? (Number.isSafeInteger(slot) ? BigInt(slot) : -1n) : slot;
  if (typeof s !== 'bigint' || s < 0n || s > (1n << 63n) - 1n) {
    throw new OncepayError(
      LEDGER_CODES.INVALID_CHECKPOINT,
      `checkpoint slot ${String(slot)} is not a non-negative integer`,
    );
  }
  return s.toString();
}

/** Identity order (signature, ix index, inner index): breaks ties of chain order, so a batch matches the same way every time. */
export function compareReceipts(a: Receipt, b: Receipt): number {
  if (a.signature !== b.signature) return a.signature < b.signature ? -1 : 1;
  return a.ixIndex - b.ixIndex || a.innerIndex - b.innerIndex;
}

/**
 * Repeats inside the batch dropped (they count as duplicates), input order otherwise. Of the deliveries of one
 * identity the first in chain order is kept (the lowest slot; of equal slots, the first delivered), as the path
 * without the probe and the reference ledger keep it: deliveries that disagree (a source that lies about the slot)
 * store the same row whichever way the batch goes in.
 * Keyed by the signature the receipt already holds (no key string built per receipt); the few instructions of one
 * transaction are told apart by (ixIndex, innerIndex).
 */
export function uniqueReceipts(receipts: readonly Receipt[]): Receipt[] {
  // Per signature, the position in `out` of each of its identities kept so far.
  const seen = new Map<string, number | number[]>();
  const out: Receipt[] = [];
  for (const r of receipts) {
    const prev = seen.get(r.signature);
    if (prev === undefined) {
      seen.set(r.signature, out.length);
      out.push(r);
      continue;
    }
    const same = typeof prev === 'number' ? [prev] : prev;
    const at = same.find((i) => out[i].ixIndex === r.ixIndex && out[i].innerIndex === r.innerIndex);
    if (at !== undefined) {
      if (compareSlot(r.slot ?? null, out[at].slot ?? null) < 0) out[at] = r;
      continue;
    }
    same.push(out.length);
    out.push(r);
    if (typeof prev === 'number') seen.set(r.signature, same);
  }
  return out;
}

/**
 * Repeats of an identity dropped from receipts in chain order, where they are neighbours: the chain sort is stable
 * and orders by slot, then identity, so each delivery of one receipt (one transaction, one slot) follows the first
 * one delivered, which is kept. Cheaper than uniqueReceipts (no map of signatures) for a batch about to be sorted
 * anyway. Two deliveries of one identity with different slots (a malformed source) are not neighbours and both
 * stay: the unique constraint keeps the first that goes in, as for any receipt inserted twice.
 */
export function dropRepeats(chain: readonly Receipt[]): Receipt[] {
  const out: Receipt[] = [];
  let last: Receipt | undefined;
  for (const r of chain) {
    if (
      last !== undefined &&
      r.signature === last.signature &&
      r.ixIndex === last.ixIndex &&
      r.innerIndex === last.innerIndex
    )
      continue;
    out.push(r);
    last = r;
  }
  return out;
}
