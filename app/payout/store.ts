// Reads and writes of merchants, payouts and their attempts: app/payout/queries.ts's statements run through
// db/sql, rows mapped to MerchantRow / PayoutRow / AttemptRow (NUMERIC text → bigint, never a JS number).
import type { PoolClient } from 'pg';
import { Db, exec, one, rows } from '../../db/sql';
import { OpId } from '../op-id';
import { Address, PayoutId, Signature } from '../types';
import { AttemptStatus } from './decide';
import * as q from './queries';

export type PayoutState = 'pending' | 'executing' | 'succeeded' | 'conflict' | 'failed';
export const FINAL_STATES: readonly PayoutState[] = ['succeeded', 'conflict', 'failed'];

export interface MerchantRow {
  id: string;
  name: string;
  programId: Address;
  merchantAddress: Address;
  vault: Address;
  tokenProgram: Address;
  /** Where its invoices are paid unless a request names another wallet (migration 0300); null: not set. */
  receivingAddress: Address | null;
  createdAt: Date;
}

export interface NewPayout {
  merchantId: string;
  /** The merchant's own id of the payout (the API's `payoutId`): the business operation. */
  merchantPayoutId: PayoutId;
  programId: Address;
  merchantAddress: Address;
  vault: Address;
  tokenProgram: Address;
  /** The recipient's token account (the instruction's `recipient_token`). */
  recipientToken: Address;
  mint: Address;
  amount: bigint;
  opId: OpId;
  opPda: Address;
  opBump: number;
}

/** A stored payout: the terms it was created with (NewPayout) and where its execution stands. */
export interface PayoutRow extends NewPayout {
  id: string;
  state: PayoutState;
  resultSignature: Signature | null;
  resultSlot: bigint | null;
  conflict: unknown;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  /** When a worker may claim it next (now, or later after trouble: the durable backoff). */
  nextAttemptAt: Date;
  /** Claims handed back after trouble so far: the exponent of the next backoff. */
  retries: number;
  /** The last worker that claimed it (host:pid), for operators. */
  claimedBy: string | null;
}

export interface AttemptRow {
  id: string;
  payoutId: string;
  attemptNo: number;
  signature: Signature;
  blockhash: string;
  lastValidBlockHeight: bigint;
  txBytes: Buffer;
  status: AttemptStatus;
  slot: bigint | null;
  error: string | null;
  sendCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export type PayoutOutcome = q.OutcomeColumns;

/** A row of api_merchants as SELECT * returns it. */
interface MerchantSqlRow {
  id: string;
  name: string;
  program_id: Address;
  merchant_address: Address;
  vault: Address;
  token_program: Address;
  receiving_address: Address | null;
  created_at: Date;
}

/** A row of payouts as SELECT * returns it (bigint and NUMERIC columns as text). */
interface PayoutSqlRow {
  id: string;
  merchant_id: string;
  merchant_payout_id: PayoutId;
  program_id: Address;
  merchant_address: Address;
  vault: Address;
  token_program: Address;
  recipient_token: Address;
  mint: Address;
  amount: string;
  op_id: OpId;
  op_pda: Address;
  op_bump: number;
  state: PayoutState;
  result_signature: Signature | null;
  result_slot: string | null;
  conflict: unknown;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  next_attempt_at: Date;
  retries: number;
  claimed_by: string | null;
}

/** A row of payout_attempts as SELECT * returns it. */
interface AttemptSqlRow {
  id: string;
  payout_id: string;
  attempt_no: number;
  signature: Signature;
  blockhash: string;
  last_valid_block_height: string;
  tx_bytes: Buffer;
  status: AttemptStatus;
  slot: string | null;
  error: string | null;
  send_count: number;
  created_at: Date;
  updated_at: Date;
}

const big = (x: string | null): bigint | null => (x === null ? null : BigInt(x));

function toMerchant(r: MerchantSqlRow): MerchantRow {
  return {
    id: String(r.id),
    name: r.name,
    programId: r.program_id,
    merchantAddress: r.merchant_address,
    vault: r.vault,
    tokenProgram: r.token_program,
    receivingAddress: r.receiving_address ?? null,
    createdAt: r.created_at,
  };
}

function toPayout(r: PayoutSqlRow): PayoutRow {
  return {
    id: String(r.id),
    merchantId: String(r.merchant_id),
    merchantPayoutId: r.merchant_payout_id,
    programId: r.program_id,
    merchantAddress: r.merchant_address,
    vault: r.vault,
    tokenProgram: r.token_program,
    recipientToken: r.recipient_token,
    mint: r.mint,
    amount: BigInt(r.amount),
    opId: r.op_id,
    opPda: r.op_pda,
    opBump: Number(r.op_bump),
    state: r.state,
    resultSignature: r.result_signature,
    resultSlot: big(r.result_slot),
    conflict: r.conflict,
    lastError: r.last_error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    finishedAt: r.finished_at,
    nextAttemptAt: r.next_attempt_at,
    retries: Number(r.retries),
    claimedBy: r.claimed_by,
  };
}

function toAttempt(r: AttemptSqlRow): AttemptRow {
  return {
    id: String(r.id),
    payoutId: String(r.payout_id),
    attemptNo: Number(r.attempt_no),
    signature: r.signature,
    blockhash: r.blockhash,
    lastValidBlockHeight: BigInt(r.last_valid_block_height),
    txBytes: r.tx_bytes,
    status: r.status,
    slot: big(r.slot),
    error: r.error,
    sendCount: Number(r.send_count),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const merchantOrNull = (r: MerchantSqlRow | null) => (r ? toMerchant(r) : null);
const payoutOrNull = (r: PayoutSqlRow | null) => (r ? toPayout(r) : null);

// ---- merchants ----

export async function insertMerchant(db: Db, m: Parameters<typeof q.insertMerchant>[0]): Promise<MerchantRow> {
  return toMerchant((await one<MerchantSqlRow>(db, q.insertMerchant(m)))!);
}

export async function getMerchantByApiKeyHash(db: Db, hash: string): Promise<MerchantRow | null> {
  return merchantOrNull(await one<MerchantSqlRow>(db, q.getMerchantByApiKeyHash(hash)));
}

export async function getMerchant(db: Db, id: string): Promise<MerchantRow | null> {
  return merchantOrNull(await one<MerchantSqlRow>(db, q.getMerchant(id)));
}

/** Every registered merchant, by id. */
export async function listMerchants(db: Db): Promise<MerchantRow[]> {
  return (await rows<MerchantSqlRow>(db, q.listMerchants())).map(toMerchant);
}

export async function getMerchantByAddress(db: Db, merchantAddress: string): Promise<MerchantRow | null> {
  return merchantOrNull(await one<MerchantSqlRow>(db, q.getMerchantByAddress(merchantAddress)));
}

// ---- payouts ----

/**
 * Insert unless (merchant, merchant_payout_id) exists. `created` tells which: the existing row is returned as is (its
 * terms may differ from the input — the caller decides whether that is a replay or a conflict).
 */
export async function insertPayout(db: Db, p: NewPayout): Promise<{ row: PayoutRow; created: boolean }> {
  const inserted = await one<PayoutSqlRow>(db, q.insertPayout(p));
  if (inserted) return { row: toPayout(inserted), created: true };
  return {
    row: toPayout((await one<PayoutSqlRow>(db, q.getPayoutOfMerchant(p.merchantId, p.merchantPayoutId)))!),
    created: false,
  };
}

export async function getPayout(db: Db, id: string): Promise<PayoutRow | null> {
  if (!/^[0-9]{1,18}$/.test(id)) return null;
  return payoutOrNull(await one<PayoutSqlRow>(db, q.getPayout(id)));
}

/** A payout by row id, only if it belongs to this merchant. */
export async function getPayoutOfMerchantById(db: Db, merchantId: string, id: string): Promise<PayoutRow | null> {
  if (!/^[0-9]{1,18}$/.test(id)) return null;
  return payoutOrNull(await one<PayoutSqlRow>(db, q.getPayoutOfMerchantById(merchantId, id)));
}

/** A merchant's payouts, newest first (at most `limit`), optionally in one state. */
export async function listPayoutsOfMerchant(
  db: Db,
  merchantId: string,
  o: { state?: PayoutState; limit: number },
): Promise<PayoutRow[]> {
  return (await rows<PayoutSqlRow>(db, q.listPayoutsOfMerchant(merchantId, o.state ?? null, o.limit))).map(toPayout);
}

/** Reopen a merchant's failed payouts (the given ids, or all of them): queries.ts reopenFailedPayoutsOfMerchant. */
export async function reopenFailedPayoutsOfMerchant(
  db: Db,
  merchantId: string,
  ids: readonly string[] | null,
): Promise<PayoutRow[]> {
  return (await rows<PayoutSqlRow>(db, q.reopenFailedPayoutsOfMerchant(merchantId, ids))).map(toPayout);
}

/** The unfinished payouts of these merchants (api_merchants ids). */
export async function listUnfinishedPayouts(
  db: Db,
  opts: { includePending: boolean; merchants: readonly string[] },
): Promise<PayoutRow[]> {
  const states = opts.includePending ? ['pending', 'executing'] : ['executing'];
  return (await rows<PayoutSqlRow>(db, q.listPayoutsInStates(opts.merchants, states))).map(toPayout);
}

/**
 * Final states are final: the guard makes a late writer a no-op instead of an overwrite. Returns the finished
 * row, or null when it was final already.
 */
export async function finishPayout(db: Db, id: string, r: PayoutOutcome): Promise<PayoutRow | null> {
  return payoutOrNull(await one<PayoutSqlRow>(db, q.finishPayout(id, r)));
}

/** An attempt found landed without error: the attempt and its payout settle together, in one statement. */
export async function finishLanded(
  db: Db,
  id: string,
  attemptId: string,
  landed: { signature: Signature; slot: bigint },
  unrecordedSends = 0,
): Promise<PayoutRow | null> {
  return payoutOrNull(await one<PayoutSqlRow>(db, q.finishLanded(id, attemptId, landed, unrecordedSends)));
}

/** Why a payout still due was handed back (queries.ts noteHandBack); the state is unchanged. */
export async function noteHandBack(db: Db, id: string, error: string): Promise<void> {
  await exec(db, q.noteHandBack(id, error));
}

/** An operator's explicit retry of a failed payout (e.g. after topping up the vault): the row, or null if not failed. */
export async function reopenFailedPayout(db: Db, id: string): Promise<PayoutRow | null> {
  return payoutOrNull(await one<PayoutSqlRow>(db, q.reopenFailedPayout(id)));
}

// ---- attempts ----

export async function listAttempts(db: Db, payoutId: string): Promise<AttemptRow[]> {
  return (await rows<AttemptSqlRow>(db, q.listAttempts(payoutId))).map(toAttempt);
}

/** Persist a signed attempt before it is ever sent (queries.ts insertAttempt). */
export async function insertAttempt(db: Db, a: Parameters<typeof q.insertAttempt>[0]): Promise<AttemptRow> {
  return toAttempt((await one<AttemptSqlRow>(db, q.insertAttempt(a)))!);
}

/** Bookkeeping after `sends` sends (queries.ts markAttemptSent). */
export async function markAttemptSent(db: Db, id: string, sends = 1): Promise<void> {
  await exec(db, q.markAttemptSent(id, sends));
}

/** Settle an open attempt: the row as written, or null when it was settled already (it keeps its first outcome). */
export async function settleAttempt(
  db: Db,
  id: string,
  r: Parameters<typeof q.settleAttempt>[1],
  unrecordedSends = 0,
): Promise<AttemptRow | null> {
  const row = await one<AttemptSqlRow>(db, q.settleAttempt(id, r, unrecordedSends));
  return row ? toAttempt(row) : null;
}

// ---- the worker pool (app/payout/worker.ts) ----

/**
 * Claim the next due payout of one of `merchantIds` on `c`, the connection that will execute it, unlocking
 * `release` (a finished payout `c` still holds) in the same statement: see queries.ts claimDuePayout.
 */
export async function claimDuePayout(
  c: PoolClient,
  worker: string,
  merchantIds: readonly string[],
  release?: string,
): Promise<{ row: PayoutRow; locked: boolean } | null> {
  const r = await one<PayoutSqlRow & { locked: boolean | null }>(c, q.claimDuePayout(worker, merchantIds, release));
  return r && r.id !== null ? { row: toPayout(r), locked: r.locked === true } : null;
}

/** Trouble (the chain unreachable for a while): not before `delayMs` from now, and one more retry counted. */
export async function deferPayout(db: Db, id: string, delayMs: number): Promise<void> {
  await exec(db, q.deferPayout(id, delayMs));
}

/** Attempts signed and persisted whose outcome is not known yet (built: maybe sent; sent), and the oldest one's age. */
export async function openAttemptStats(db: Db): Promise<{ open: number; oldestAgeSeconds: number }> {
  const r = (await one<{ open: number; oldest: number }>(db, q.openAttemptStats()))!;
  return { open: r.open, oldestAgeSeconds: r.oldest };
}
