// Every SQL statement of the payout journal, as named functions. Values go in as $n; amounts cross as decimal
// strings (NUMERIC(20,0) ↔ bigint), never as JS numbers.
import { Pool, PoolClient } from 'pg';
import { HELD_ADVISORY_LOCKS, payoutLockAmong, payoutLockKey } from './lock';
import { OpId } from '../op-id';
import { Address, PayoutId, Signature } from '../types';
import { AttemptStatus } from './decide';

export type Db = Pool | PoolClient;

export type PayoutState = 'pending' | 'executing' | 'succeeded' | 'conflict' | 'failed';
export const FINAL_STATES: readonly PayoutState[] = ['succeeded', 'conflict', 'failed'];

export interface MerchantRow {
  id: string;
  name: string;
  programId: Address;
  merchantAddress: Address;
  vault: Address;
  tokenProgram: Address;
  createdAt: Date;
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

type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const big = (x: unknown): bigint | null => (x === null || x === undefined ? null : BigInt(x as string));

/**
 * SQL (a CTE to reference in FROM): the statement commits without waiting for its WAL flush. Only for bookkeeping
 * that no journal rule depends on (a lost write is the same as a crash just before it, which the rules handle);
 * never for an attempt before its send, nor for a payout's outcome.
 */
const NO_FLUSH_WAIT = `(SELECT set_config('synchronous_commit', 'off', true))`;

function toMerchant(r: Raw): MerchantRow {
  return {
    id: String(r.id),
    name: r.name,
    programId: r.program_id,
    merchantAddress: r.merchant_address,
    vault: r.vault,
    tokenProgram: r.token_program,
    createdAt: r.created_at,
  };
}

export function toPayout(r: Raw): PayoutRow {
  return {
    id: String(r.id),
    merchantId: String(r.merchant_id),
    payoutId: r.payout_id,
    programId: r.program_id,
    merchantAddress: r.merchant_address,
    vault: r.vault,
    tokenProgram: r.token_program,
    recipient: r.recipient,
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

function toAttempt(r: Raw): AttemptRow {
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

// ---- merchants ----

export async function insertMerchant(
  db: Db,
  m: {
    name: string;
    apiKeyHash: string;
    programId: Address;
    merchantAddress: Address;
    vault: Address;
    tokenProgram?: Address;
  },
): Promise<MerchantRow> {
  const { rows } = await db.query(
    `INSERT INTO api_merchants (name, api_key_hash, program_id, merchant_address, vault, token_program)
     VALUES ($1, $2, $3, $4, $5, COALESCE($6, 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA')) RETURNING *`,
    [m.name, m.apiKeyHash, m.programId, m.merchantAddress, m.vault, m.tokenProgram ?? null],
  );
  return toMerchant(rows[0]);
}

export async function getMerchantByApiKeyHash(db: Db, hash: string): Promise<MerchantRow | null> {
  const { rows } = await db.query('SELECT * FROM api_merchants WHERE api_key_hash = $1', [hash]);
  return rows[0] ? toMerchant(rows[0]) : null;
}

export async function getMerchant(db: Db, id: string): Promise<MerchantRow | null> {
  const { rows } = await db.query('SELECT * FROM api_merchants WHERE id = $1', [id]);
  return rows[0] ? toMerchant(rows[0]) : null;
}

export async function getMerchantByAddress(db: Db, merchantAddress: string): Promise<MerchantRow | null> {
  const { rows } = await db.query('SELECT * FROM api_merchants WHERE merchant_address = $1 ORDER BY id LIMIT 1', [
    merchantAddress,
  ]);
  return rows[0] ? toMerchant(rows[0]) : null;
}

// ---- payouts ----

export interface NewPayout {
  merchantId: string;
  payoutId: PayoutId;
  programId: Address;
  merchantAddress: Address;
  vault: Address;
  tokenProgram: Address;
  recipient: Address;
  mint: Address;
  amount: bigint;
  opId: OpId;
  opPda: Address;
  opBump: number;
}

/**
 * Insert unless (merchant, payout_id) exists. `created` tells which: the existing row is returned as is (its
 * terms may differ from the input — the caller decides whether that is a replay or a conflict).
 */
export async function insertPayout(db: Db, p: NewPayout): Promise<{ row: PayoutRow; created: boolean }> {
  const ins = await db.query(
    `INSERT INTO payouts (merchant_id, payout_id, program_id, merchant_address, vault, token_program, recipient, mint,
                          amount, op_id, op_pda, op_bump)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::numeric, $10, $11, $12)
     ON CONFLICT (merchant_id, payout_id) DO NOTHING RETURNING *`,
    [
      p.merchantId,
      p.payoutId,
      p.programId,
      p.merchantAddress,
      p.vault,
      p.tokenProgram,
      p.recipient,
      p.mint,
      p.amount.toString(),
      p.opId,
      p.opPda,
      p.opBump,
    ],
  );
  if (ins.rows[0]) return { row: toPayout(ins.rows[0]), created: true };
  const { rows } = await db.query('SELECT * FROM payouts WHERE merchant_id = $1 AND payout_id = $2', [
    p.merchantId,
    p.payoutId,
  ]);
  return { row: toPayout(rows[0]), created: false };
}

export async function getPayout(db: Db, id: string): Promise<PayoutRow | null> {
  if (!/^[0-9]{1,18}$/.test(id)) return null;
  const { rows } = await db.query('SELECT * FROM payouts WHERE id = $1', [id]);
  return rows[0] ? toPayout(rows[0]) : null;
}

export async function getPayoutByMerchantPayoutId(
  db: Db,
  merchantId: string,
  payoutId: string,
): Promise<PayoutRow | null> {
  const { rows } = await db.query('SELECT * FROM payouts WHERE merchant_id = $1 AND payout_id = $2', [
    merchantId,
    payoutId,
  ]);
  return rows[0] ? toPayout(rows[0]) : null;
}

export async function listUnfinishedPayouts(db: Db, opts: { includePending: boolean }): Promise<PayoutRow[]> {
  const states = opts.includePending ? ['pending', 'executing'] : ['executing'];
  const { rows } = await db.query('SELECT * FROM payouts WHERE state = ANY($1::payout_state[]) ORDER BY id', [states]);
  return rows.map(toPayout);
}

export interface PayoutOutcome {
  state: 'succeeded' | 'conflict' | 'failed';
  signature?: string | null;
  slot?: bigint | null;
  conflict?: unknown;
  error?: string | null;
}

const FINISH_SET = `state = $2, result_signature = $3, result_slot = $4, conflict = $5, last_error = $6, updated_at = now(), finished_at = now()`;

function finishValues(id: string, r: PayoutOutcome): unknown[] {
  return [
    id,
    r.state,
    r.signature ?? null,
    r.slot === undefined || r.slot === null ? null : r.slot.toString(),
    r.conflict === undefined ? null : JSON.stringify(r.conflict),
    r.error ?? null,
  ];
}

/**
 * Final states are final: the guard makes a late writer a no-op instead of an overwrite. Returns the finished
 * row, or null when it was final already.
 */
export async function finishPayout(db: Db, id: string, r: PayoutOutcome): Promise<PayoutRow | null> {
  const { rows } = await db.query(
    `UPDATE payouts SET ${FINISH_SET} WHERE id = $1 AND state IN ('pending', 'executing') RETURNING *`,
    finishValues(id, r),
  );
  return rows[0] ? toPayout(rows[0]) : null;
}

/** An attempt found landed without error: the attempt and its payout settle together, in one statement. */
export async function finishLanded(
  db: Db,
  id: string,
  attemptId: string,
  landed: { signature: Signature; slot: bigint },
): Promise<PayoutRow | null> {
  const values = finishValues(id, { state: 'succeeded', signature: landed.signature, slot: landed.slot });
  const { rows } = await db.query(
    `WITH attempt AS (
       UPDATE payout_attempts SET status = 'landed', slot = $4, updated_at = now() WHERE id = $7 AND status IN ('built', 'sent'))
     UPDATE payouts SET ${FINISH_SET} WHERE id = $1 AND state IN ('pending', 'executing') RETURNING *`,
    [...values, attemptId],
  );
  return rows[0] ? toPayout(rows[0]) : null;
}

/** An operator's explicit retry of a failed payout (e.g. after topping up the vault). */
export async function reopenFailedPayout(db: Db, id: string): Promise<boolean> {
  const res = await db.query(
    `UPDATE payouts SET state = 'executing', last_error = NULL, finished_at = NULL, updated_at = now()
      WHERE id = $1 AND state = 'failed'`,
    [id],
  );
  return res.rowCount === 1;
}

// ---- attempts ----

export async function listAttempts(db: Db, payoutId: string): Promise<AttemptRow[]> {
  const { rows } = await db.query('SELECT * FROM payout_attempts WHERE payout_id = $1 ORDER BY attempt_no', [payoutId]);
  return rows.map(toAttempt);
}

/**
 * Persist a signed attempt before it is ever sent, and move the payout to `executing`: one statement, so one
 * transaction and one round trip. attempt_no is next in sequence; UNIQUE (payout_id, attempt_no) makes a
 * concurrent second writer fail loudly.
 */
export async function insertAttempt(
  db: Db,
  a: { payoutId: string; signature: Signature; blockhash: string; lastValidBlockHeight: bigint; txBytes: Uint8Array },
): Promise<AttemptRow> {
  const { rows } = await db.query(
    `WITH executing AS (
       UPDATE payouts SET state = 'executing', updated_at = now() WHERE id = $1 AND state = 'pending')
     INSERT INTO payout_attempts (payout_id, attempt_no, signature, blockhash, last_valid_block_height, tx_bytes)
     VALUES ($1, (SELECT COALESCE(max(attempt_no), 0) + 1 FROM payout_attempts WHERE payout_id = $1), $2, $3, $4, $5)
     RETURNING *`,
    [a.payoutId, a.signature, a.blockhash, a.lastValidBlockHeight.toString(), Buffer.from(a.txBytes)],
  );
  return toAttempt(rows[0]);
}

/**
 * Bookkeeping after a send: built and sent attempts are resolved alike (a crash before this write is the
 * `payout.after_send_before_record` case), so it does not wait for a WAL flush.
 */
export async function markAttemptSent(db: Db, id: string): Promise<void> {
  await db.query(
    `WITH no_flush_wait AS ${NO_FLUSH_WAIT}
     UPDATE payout_attempts SET status = 'sent', send_count = send_count + 1, updated_at = now()
       FROM no_flush_wait WHERE id = $1 AND status IN ('built', 'sent')`,
    [id],
  );
}

/** Settle an open attempt; an attempt already settled keeps its first outcome. */
export async function settleAttempt(
  db: Db,
  id: string,
  r: { status: 'landed' | 'failed' | 'expired'; slot?: bigint | null; error?: string | null },
): Promise<void> {
  await db.query(
    `UPDATE payout_attempts SET status = $2, slot = $3, error = $4, updated_at = now()
      WHERE id = $1 AND status IN ('built', 'sent')`,
    [id, r.status, r.slot === undefined || r.slot === null ? null : r.slot.toString(), r.error ?? null],
  );
}

// ---- the worker pool (app/payout/worker.ts) ----

/**
 * Claim the next due payout in one statement, on the connection that will execute it: due = pending or
 * executing (an attempt whose outcome is unknown) whose next_attempt_at has come, and not held by any session
 * (its advisory lock is free). FOR UPDATE SKIP LOCKED lets workers claim side by side without waiting on each
 * other; the payout's session advisory lock is taken in the same statement, so from the commit on every other
 * claim sees it held — until this connection unlocks it or closes (even by SIGKILL). `locked` is false only if
 * another session (`oncepay payout execute`) took the lock in between: hand the row back. The claim's own columns
 * are bookkeeping (the lock is the hold), so it does not wait for a WAL flush.
 *
 * `release`: a payout this connection still holds the lock of, finished by an earlier statement (its final
 * state already committed, so unlocking it now lets nobody act on a stale row): unlocked by this same
 * statement, claim or not, which spares a worker slot one round trip per payout.
 */
export async function claimDuePayout(
  c: PoolClient,
  worker: string,
  release?: string,
): Promise<{ row: PayoutRow; locked: boolean } | null> {
  const { rows } = await c.query(
    `WITH held AS MATERIALIZED (${HELD_ADVISORY_LOCKS}),
          due AS (
            SELECT p.id FROM payouts p
             WHERE p.state IN ('pending', 'executing') AND p.next_attempt_at <= now() AND NOT ${payoutLockAmong('held', 'p.id')}
             ORDER BY p.next_attempt_at, p.id
             LIMIT 1
               FOR UPDATE OF p SKIP LOCKED),
          no_flush_wait AS ${NO_FLUSH_WAIT},
          claimed AS (
            UPDATE payouts p SET claims = p.claims + 1, claimed_by = $1, claimed_at = now()
              FROM due, no_flush_wait WHERE p.id = due.id
            RETURNING p.*, pg_try_advisory_lock(${payoutLockKey('p.id')}) AS locked)
     SELECT claimed.* FROM (SELECT CASE WHEN $2::bigint IS NOT NULL THEN pg_advisory_unlock(${payoutLockKey('$2::bigint')}) END) released
       LEFT JOIN claimed ON true`,
    [worker, release ?? null],
  );
  return rows[0]?.id != null ? { row: toPayout(rows[0]), locked: rows[0].locked === true } : null;
}

/** The schema a session works in (the payout workers' wake-ups are per schema, see due-listener.ts). */
export function currentSchema(): { text: string; values: unknown[] } {
  return { text: 'SELECT current_schema() AS schema', values: [] };
}

/** Trouble (the chain unreachable for a while): not before `delayMs` from now, and one more retry counted. */
export async function deferPayout(db: Db, id: string, delayMs: number): Promise<void> {
  await db.query(
    `UPDATE payouts SET retries = retries + 1, next_attempt_at = now() + make_interval(secs => $2::float8 / 1000), updated_at = now()
      WHERE id = $1 AND state IN ('pending', 'executing')`,
    [id, Math.max(0, Math.round(delayMs))],
  );
}

/** Attempts signed and persisted whose outcome is not known yet (built: maybe sent; sent), and the oldest one's age. */
export async function openAttemptStats(db: Db): Promise<{ open: number; oldestAgeSeconds: number }> {
  const { rows } = await db.query(
    `SELECT count(*)::int AS open, COALESCE(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest
       FROM payout_attempts WHERE status IN ('built', 'sent')`,
  );
  return { open: rows[0].open, oldestAgeSeconds: rows[0].oldest };
}
