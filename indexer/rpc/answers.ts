// The node's answers checked against what each method promises (pure, no I/O): a slot, a range of slots, a
// transaction object or none, one signature status (or null) per signature asked, and getBlock's outcome — a
// skipped slot and a block not available are answers, not failures. Anything else is a malformed answer.
import type { Commitment } from './client';
import { malformed, RpcCallError } from './call-error';

/** A node answers getSignatureStatuses for at most this many signatures a call. */
export const MAX_SIGNATURES_PER_STATUS_CALL = 256;

/** One entry of a getSignatureStatuses answer, checked. */
export interface SignatureStatus {
  slot: number;
  /** The transaction's error (null: it succeeded). */
  err: unknown;
  /** processed | confirmed | finalized (a node without the field: finalized when `confirmations` is null). */
  confirmationStatus: Commitment;
}

/** getBlock outcome: a block, a slot that has none (skipped: pass it), or one not servable now (stop there). */
export type BlockResult =
  | { status: 'ok'; slot: number; block: unknown }
  | { status: 'skipped'; slot: number; rpcCode: number }
  | { status: 'not_available'; slot: number; rpcCode: number | null; message: string };

function isSlot(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** getSlot's answer: a slot. */
export function slotAnswer(slot: unknown): number {
  if (!isSlot(slot)) throw malformed('getSlot', `getSlot: not a slot: ${JSON.stringify(slot)}`);
  return slot;
}

/** getBlocks(start, end)'s answer: slots within the range, in ascending order. */
export function slotsAnswer(slots: unknown, start: number, end: number): number[] {
  if (
    !Array.isArray(slots) ||
    !slots.every((s) => typeof s === 'number' && Number.isSafeInteger(s) && s >= start && s <= end)
  ) {
    throw malformed('getBlocks', `getBlocks(${start}, ${end}): not a list of slots in range`);
  }
  return [...(slots as number[])].sort((a, b) => a - b);
}

/** getBlock's answer for `slot`: a block, or none from an older node (not proof that the slot is empty). */
export function blockAnswer(slot: number, block: unknown): BlockResult {
  if (block === null || typeof block !== 'object') {
    return { status: 'not_available', slot, rpcCode: null, message: 'getBlock returned null' };
  }
  return { status: 'ok', slot, block };
}

/** getBlock's failure for `slot` as an outcome (skipped, not available), or null: a failure to throw. */
export function blockFailure(slot: number, e: unknown): BlockResult | null {
  if (e instanceof RpcCallError && e.kind === 'slot_skipped')
    return { status: 'skipped', slot, rpcCode: e.rpcCode ?? 0 };
  if (e instanceof RpcCallError && e.kind === 'block_not_available') {
    return { status: 'not_available', slot, rpcCode: e.rpcCode, message: e.message };
  }
  return null;
}

/** getTransaction's answer: a transaction object, or null when the node has none. */
export function transactionAnswer(signature: string, tx: unknown): Record<string, unknown> | null {
  if (tx === null) return null;
  if (typeof tx !== 'object' || Array.isArray(tx)) {
    throw malformed('getTransaction', `getTransaction(${signature}): not a transaction`);
  }
  return tx as Record<string, unknown>;
}

/** One status entry checked: a status, null (unknown to the node), or undefined (malformed). */
export function statusOf(v: unknown): SignatureStatus | null | undefined {
  if (v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) return undefined;
  const { slot, err, confirmationStatus, confirmations } = v as Record<string, unknown>;
  if (!isSlot(slot)) return undefined;
  const level =
    confirmationStatus === undefined || confirmationStatus === null
      ? confirmations === null
        ? 'finalized'
        : 'processed'
      : confirmationStatus;
  if (level !== 'processed' && level !== 'confirmed' && level !== 'finalized') return undefined;
  return { slot, err: err ?? null, confirmationStatus: level };
}

/** getSignatureStatuses's answer for `asked` signatures: one status (or null) per signature, in order. */
export function statusesAnswer(r: unknown, asked: number): Array<SignatureStatus | null> {
  const value = r !== null && typeof r === 'object' ? (r as { value?: unknown }).value : undefined;
  const statuses = Array.isArray(value) && value.length === asked ? value.map(statusOf) : undefined;
  if (!statuses || statuses.some((x) => x === undefined)) {
    throw malformed(
      'getSignatureStatuses',
      `getSignatureStatuses: not one status (or null) per signature asked (${asked})`,
    );
  }
  return statuses as Array<SignatureStatus | null>;
}
