// Every SQL statement of the payout journal and the worker pool (the merchants' are app/merchant/queries.ts), as Queries that
// db/sql runs (app/payout/store.ts, lock.ts). Values go in as $n; amounts cross as decimal strings
// (NUMERIC(20,0) ↔ bigint), never as JS numbers. The statements the executor runs for every payout (the worker's
// claim, the attempt's insert, the landed finish) are named: each connection plans them once (db/sql Query.name).
// A column added to payouts or payout_attempts while a connection holds such a plan makes its next run fail once
// ("cached plan must not change result type"): the worker then drops that connection as after any database error,
// and the payout stays due.
import { claimStatement } from '../../db/queue';
import type { Query } from '../../db/sql';

/**
 * SQL: the advisory lock key of the payout whose id is the SQL expression `id` (a bigint key from
 * hashtextextended; the prefix keeps payout keys apart from other advisory locks, and the schema keeps two
 * journals on one server, e.g. per-test schemas, apart as if they were two databases).
 */
function payoutLockKey(id: string): string {
  return `hashtextextended('oncepay:payout:' || current_schema() || ':' || (${id})::text, 0)`;
}

/**
 * SQL: the advisory locks (bigint keys) held in this database right now, as pg_locks shows them — a key's high and
 * low 32 bits as classid and objid, objsubid 1. Read once per statement (MATERIALIZED), then matched per row with
 * payoutLockAmong.
 */
const HELD_ADVISORY_LOCKS = `SELECT l.classid, l.objid FROM pg_locks l
   WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/** SQL condition: the lock of payout `id` is among `held` (a relation of HELD_ADVISORY_LOCKS). */
function payoutLockAmong(held: string, id: string): string {
  const key = payoutLockKey(id);
  return `EXISTS (SELECT 1 FROM ${held} h WHERE h.classid = ((${key} >> 32) & 4294967295)::oid AND h.objid = (${key} & 4294967295)::oid)`;
}

/**
 * SQL (a CTE to reference in FROM): the statement commits without waiting for its WAL flush. Only for bookkeeping
 * that no journal rule depends on (a lost write is the same as a crash just before it, which the rules handle),
 * and for a success found on chain (finishLanded: the chain gives the same answer again); never for an attempt
 * before its send, nor for any other outcome of a payout.
 */
const NO_FLUSH_WAIT = `(SELECT set_config('synchronous_commit', 'off', true))`;

const slotText = (slot: bigint | null | undefined): string | null =>
  slot === undefined || slot === null ? null : slot.toString();

// ---- the payout's advisory lock (lock.ts) ----

export function tryLockPayout(id: string): Query {
  return { text: `SELECT pg_try_advisory_lock(${payoutLockKey('$1::bigint')}) AS ok`, values: [id] };
}

/** Waits for the lock (up to the session's lock_timeout, see setLockTimeout). */
export function lockPayout(id: string): Query {
  return { text: `SELECT pg_advisory_lock(${payoutLockKey('$1::bigint')})`, values: [id] };
}

export function unlockPayout(id: string): Query {
  return { text: `SELECT pg_advisory_unlock(${payoutLockKey('$1::bigint')})`, values: [id] };
}

/** The session's lock_timeout ('0': none). */
export function setLockTimeout(timeout: string): Query {
  return { text: `SELECT set_config('lock_timeout', $1, false)`, values: [timeout] };
}

// ---- payouts ----

/** Inserts unless (merchant, merchant_payout_id) exists: then returns no row. */
export function insertPayout(p: {
  merchantId: string;
  merchantPayoutId: string;
  programId: string;
  merchantAddress: string;
  vault: string;
  tokenProgram: string;
  recipientToken: string;
  mint: string;
  amount: bigint;
  opId: string;
  opPda: string;
  opBump: number;
}): Query {
  return {
    text: `INSERT INTO payouts (merchant_id, merchant_payout_id, program_id, merchant_address, vault, token_program, recipient_token, mint,
                                amount, op_id, op_pda, op_bump)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::numeric, $10, $11, $12)
           ON CONFLICT (merchant_id, merchant_payout_id) DO NOTHING RETURNING *`,
    values: [
      p.merchantId,
      p.merchantPayoutId,
      p.programId,
      p.merchantAddress,
      p.vault,
      p.tokenProgram,
      p.recipientToken,
      p.mint,
      p.amount.toString(),
      p.opId,
      p.opPda,
      p.opBump,
    ],
  };
}

/** A merchant's payout by the merchant's own id. */
export function getPayoutOfMerchant(merchantId: string, merchantPayoutId: string): Query {
  return {
    text: 'SELECT * FROM payouts WHERE merchant_id = $1 AND merchant_payout_id = $2',
    values: [merchantId, merchantPayoutId],
  };
}

export function getPayout(id: string): Query {
  return { text: 'SELECT * FROM payouts WHERE id = $1', values: [id] };
}

/** A payout by row id, only if it is this merchant's (another merchant's payout is not found, not forbidden). */
export function getPayoutOfMerchantById(merchantId: string, id: string): Query {
  return { text: 'SELECT * FROM payouts WHERE merchant_id = $1 AND id = $2', values: [merchantId, id] };
}

/** A merchant's payouts, newest first, optionally in one state. */
export function listPayoutsOfMerchant(merchantId: string, state: string | null, limit: number): Query {
  return {
    text: `SELECT * FROM payouts WHERE merchant_id = $1 AND ($2::payout_state IS NULL OR state = $2)
            ORDER BY id DESC LIMIT $3`,
    values: [merchantId, state, limit],
  };
}

/**
 * An operator's retry of a merchant's failed payouts (`oncepay payout retry`): the given ids (null: all its failed
 * ones) go back to executing, due now, with their backoff reset; a worker claims them and rule 1 signs a new attempt
 * only if the op account is absent. Touches only failed payouts of this merchant.
 */
export function reopenFailedPayoutsOfMerchant(merchantId: string, ids: readonly string[] | null): Query {
  return {
    text: `UPDATE payouts SET state = 'executing', last_error = NULL, finished_at = NULL, next_attempt_at = now(), retries = 0,
                  updated_at = now()
            WHERE merchant_id = $1 AND state = 'failed' AND ($2::bigint[] IS NULL OR id = ANY($2::bigint[]))
            RETURNING *`,
    values: [merchantId, ids],
  };
}

/** These merchants' payouts in these states. */
export function listPayoutsInStates(merchantIds: readonly string[], states: readonly string[]): Query {
  return {
    text: 'SELECT * FROM payouts WHERE merchant_id = ANY($1::bigint[]) AND state = ANY($2::payout_state[]) ORDER BY id',
    values: [merchantIds, states],
  };
}

/** The outcome of a payout, as finishPayout / finishLanded write it. */
export interface OutcomeColumns {
  state: 'succeeded' | 'conflict' | 'failed';
  signature?: string | null;
  slot?: bigint | null;
  conflict?: unknown;
  error?: string | null;
}

const FINISH_SET = `state = $2, result_signature = $3, result_slot = $4, conflict = $5, last_error = $6, updated_at = now(), finished_at = now()`;

function finishValues(id: string, r: OutcomeColumns): unknown[] {
  return [
    id,
    r.state,
    r.signature ?? null,
    slotText(r.slot),
    r.conflict === undefined ? null : JSON.stringify(r.conflict),
    r.error ?? null,
  ];
}

/** Final states are final: a late writer touches no row (and gets none back) instead of overwriting. */
export function finishPayout(id: string, r: OutcomeColumns): Query {
  return {
    text: `UPDATE payouts SET ${FINISH_SET} WHERE id = $1 AND state IN ('pending', 'executing') RETURNING *`,
    values: finishValues(id, r),
  };
}

/**
 * An attempt found landed without error: the attempt and its payout settle together, in one statement. It does
 * not wait for its WAL flush: a success lost in a server crash leaves the row executing with the attempt open,
 * which the next claim resolves from the chain to the same success (the status, or the op account and its
 * history: the chain, not this row, is the truth), and the next durable commit of any statement flushes it
 * anyway. Only a success: a lost failure could be re-resolved into a new attempt that pays after "failed" was
 * reported, so finishPayout keeps waiting for its flush.
 */
export function finishLanded(
  id: string,
  attemptId: string,
  landed: { signature: string; slot: bigint },
  unrecordedSends = 0,
): Query {
  return {
    name: 'oncepay_finish_landed',
    text: `WITH no_flush_wait AS ${NO_FLUSH_WAIT},
                attempt AS (
             UPDATE payout_attempts SET status = 'landed', slot = $4, send_count = send_count + $8, updated_at = now()
              WHERE id = $7 AND status IN ('built', 'sent'))
           UPDATE payouts SET ${FINISH_SET} FROM no_flush_wait WHERE id = $1 AND state IN ('pending', 'executing') RETURNING payouts.*`,
    values: [
      ...finishValues(id, { state: 'succeeded', signature: landed.signature, slot: landed.slot }),
      attemptId,
      unrecordedSends,
    ],
  };
}

/**
 * Why a payout still due was handed back (e.g. "Unauthorized (6001)": signed with a key that is not the merchant's
 * payout authority): kept for operators; the state is unchanged.
 */
export function noteHandBack(id: string, error: string): Query {
  return {
    text: `UPDATE payouts SET last_error = $2, updated_at = now() WHERE id = $1 AND state IN ('pending', 'executing')`,
    values: [id, error],
  };
}

/** An operator's explicit retry of a failed payout (e.g. after topping up the vault). */
export function reopenFailedPayout(id: string): Query {
  return {
    text: `UPDATE payouts SET state = 'executing', last_error = NULL, finished_at = NULL, updated_at = now()
            WHERE id = $1 AND state = 'failed' RETURNING *`,
    values: [id],
  };
}

// ---- attempts ----

export function listAttempts(payoutId: string): Query {
  return { text: 'SELECT * FROM payout_attempts WHERE payout_id = $1 ORDER BY attempt_no', values: [payoutId] };
}

/**
 * Persist a signed attempt before it is ever sent, and move the payout to `executing`: one statement, so one
 * transaction and one round trip. attempt_no is next in sequence; UNIQUE (payout_id, attempt_no) makes a
 * concurrent second writer fail loudly.
 */
export function insertAttempt(a: {
  payoutId: string;
  signature: string;
  blockhash: string;
  lastValidBlockHeight: bigint;
  txBytes: Uint8Array;
}): Query {
  return {
    name: 'oncepay_insert_attempt',
    text: `WITH executing AS (
             UPDATE payouts SET state = 'executing', updated_at = now() WHERE id = $1 AND state = 'pending')
           INSERT INTO payout_attempts (payout_id, attempt_no, signature, blockhash, last_valid_block_height, tx_bytes)
           VALUES ($1, (SELECT COALESCE(max(attempt_no), 0) + 1 FROM payout_attempts WHERE payout_id = $1), $2, $3, $4, $5)
           RETURNING *`,
    values: [a.payoutId, a.signature, a.blockhash, a.lastValidBlockHeight.toString(), Buffer.from(a.txBytes)],
  };
}

/**
 * Bookkeeping after `sends` sends: built and sent attempts are resolved alike (a crash before this write is the
 * `payout.after_send_before_record` case), so it does not wait for a WAL flush, and the executor may fold it into
 * the attempt's settling write (finishLanded, settleAttempt: their `unrecordedSends`) when that comes first.
 */
export function markAttemptSent(id: string, sends = 1): Query {
  return {
    text: `WITH no_flush_wait AS ${NO_FLUSH_WAIT}
           UPDATE payout_attempts SET status = 'sent', send_count = send_count + $2, updated_at = now()
             FROM no_flush_wait WHERE id = $1 AND status IN ('built', 'sent')`,
    values: [id, sends],
  };
}

/** Settle an open attempt; an attempt already settled keeps its first outcome. */
export function settleAttempt(
  id: string,
  r: { status: 'landed' | 'failed' | 'expired'; slot?: bigint | null; error?: string | null },
  unrecordedSends = 0,
): Query {
  return {
    text: `UPDATE payout_attempts SET status = $2, slot = $3, error = $4, send_count = send_count + $5, updated_at = now()
            WHERE id = $1 AND status IN ('built', 'sent') RETURNING *`,
    values: [id, r.status, slotText(r.slot), r.error ?? null, unrecordedSends],
  };
}

// ---- the worker pool (app/payout/worker.ts) ----

/**
 * Claim the next due payout in one statement, on the connection that will execute it: due = pending or
 * executing (an attempt whose outcome is unknown) whose next_attempt_at has come, of one of `merchantIds` (the
 * merchants whose payout authority is one of the worker's keys: signers.ts), and not held by any session
 * (its advisory lock is free). FOR UPDATE SKIP LOCKED lets workers claim side by side without waiting on each
 * other; the payout's session advisory lock is taken in the same statement, so from the commit on every other
 * claim sees it held — until this connection unlocks it or closes (even by SIGKILL). `locked` is false only if
 * another session (`oncepay payout execute`) took the lock in between: hand the row back. The claim's own columns
 * are bookkeeping (the lock is the hold), so it does not wait for a WAL flush. The row comes back with all its
 * columns NULL when nothing is due.
 *
 * `release`: a payout this connection still holds the lock of, finished by an earlier statement (its final
 * state already committed, so unlocking it now lets nobody act on a stale row): unlocked by this same
 * statement, claim or not, which spares a worker slot one round trip per payout.
 */
export function claimDuePayout(worker: string, merchantIds: readonly string[], release?: string): Query {
  return {
    name: 'oncepay_claim_due_payout',
    // The queue mechanism's claim (db/queue), held by this session (the payout's advisory lock).
    text: claimStatement({
      table: 'payouts',
      alias: 'p',
      with: [`held AS MATERIALIZED (${HELD_ADVISORY_LOCKS})`, `no_flush_wait AS ${NO_FLUSH_WAIT}`],
      due: {
        where: `p.state IN ('pending', 'executing') AND p.next_attempt_at <= now() AND p.merchant_id = ANY($3::bigint[])
                AND NOT ${payoutLockAmong('held', 'p.id')}`,
        orderBy: 'p.next_attempt_at, p.id',
        limit: '1',
      },
      set: ['claims = p.claims + 1', 'claimed_by = $1', 'claimed_at = now()'],
      using: ', no_flush_wait',
      returning: `p.*, pg_try_advisory_lock(${payoutLockKey('p.id')}) AS locked`,
      select: `SELECT claimed.* FROM (SELECT CASE WHEN $2::bigint IS NOT NULL THEN pg_advisory_unlock(${payoutLockKey('$2::bigint')}) END) released
                 LEFT JOIN claimed ON true`,
    }),
    values: [worker, release ?? null, merchantIds],
  };
}

/** Trouble (the chain unreachable for a while): not before `delayMs` from now, and one more retry counted. */
export function deferPayout(id: string, delayMs: number): Query {
  return {
    text: `UPDATE payouts SET retries = retries + 1, next_attempt_at = now() + make_interval(secs => $2::float8 / 1000), updated_at = now()
            WHERE id = $1 AND state IN ('pending', 'executing')`,
    values: [id, Math.max(0, Math.round(delayMs))],
  };
}

/** Attempts signed and persisted whose outcome is not known yet (built: maybe sent; sent), and the oldest one's age. */
export function openAttemptStats(): Query {
  return {
    text: `SELECT count(*)::int AS open, COALESCE(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest
             FROM payout_attempts WHERE status IN ('built', 'sent')`,
    values: [],
  };
}
