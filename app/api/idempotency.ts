// Idempotency-Key for POST /v1/payouts. A key is scoped to one merchant and bound to the hash of the canonical
// request; the response is stored with it. Same key + same request → the stored response; same key + other
// request → conflict; same key while the first is still running → in progress.
//
// An in-flight key belongs to the database session that claimed it (migrations/0110): the request claims, runs
// its effect and completes the key on ONE connection it holds throughout. When PostgreSQL no longer knows that
// session — the process died, its connection was terminated, the server restarted — the key is free for the
// retry at once. A holder process that is still alive after losing its session cannot finish on it: its
// transaction fails, nothing of it commits, and it answers 503 (database unavailable), never a 2xx. The payout
// itself is UNIQUE (merchant, payout id), so even a takeover racing a live holder cannot make a second payout.
import { createHash } from 'crypto';
import { Pool, PoolClient } from 'pg';
import { OncepayError } from '../../common/errors';
import { IDEMPOTENCY_RETENTION_TOO_SHORT } from '../codes';

/** Visible ASCII, 1–255 characters (the draft IETF header allows any string; we keep it log- and SQL-safe). */
export function isIdempotencyKey(x: unknown): x is string {
  return typeof x === 'string' && /^[\x21-\x7e]{1,255}$/.test(x);
}

/** sha256 over "METHOD PATH\n" + JSON with sorted keys: two bodies that mean the same thing hash the same. */
export function canonicalRequestHash(method: string, path: string, body: Record<string, string>): string {
  const sorted = Object.keys(body)
    .sort()
    .map((k) => [k, body[k]]);
  const canonical = `${method.toUpperCase()} ${path}\n${JSON.stringify(Object.fromEntries(sorted))}`;
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'conflict' }
  | { kind: 'in_progress' };

/** This session, as pg_stat_activity names it. */
const ME = `(SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())`;

/**
 * The holder of an in-flight key is gone when no session with its pid and start time exists. A row claimed before
 * migration 0110 has no holder: it is gone after `legacyStaleMs` (the old rule). When this role may not read
 * another role's backend_start (NULL), a live pid counts as alive: a key is never taken from a living holder.
 */
const HOLDER_GONE = `(
  (holder_pid IS NULL AND locked_at < now() - make_interval(secs => $3::double precision / 1000))
  OR (holder_pid IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM pg_stat_activity a WHERE a.pid = holder_pid AND (a.backend_start IS NULL OR a.backend_start = holder_started))))`;

export const DEFAULT_LEGACY_STALE_MS = 60_000;

/**
 * Claim the key for this request on `c`, the connection that will also run the effect and completeKey: the claim
 * commits at once (so a concurrent duplicate sees it in flight) and lives as long as c's session.
 */
export async function claimKey(
  c: PoolClient,
  merchantId: string,
  key: string,
  requestHash: string,
  legacyStaleMs = DEFAULT_LEGACY_STALE_MS,
): Promise<Claim> {
  const ins = await c.query(
    `INSERT INTO idempotency_keys (merchant_id, key, request_hash, state, locked_at, holder_pid, holder_started)
     SELECT $1, $2, $3, 'in_flight', now(), me.pid, me.backend_start FROM ${ME} me
     ON CONFLICT (merchant_id, key) DO NOTHING RETURNING key`,
    [merchantId, key, requestHash],
  );
  if (ins.rowCount === 1) return { kind: 'claimed' };
  const { rows } = await c.query(
    'SELECT request_hash, state, response_status, response_body FROM idempotency_keys WHERE merchant_id = $1 AND key = $2',
    [merchantId, key],
  );
  const r = rows[0];
  if (!r) return claimKey(c, merchantId, key, requestHash, legacyStaleMs); // released between our two statements
  if (r.request_hash !== requestHash) return { kind: 'conflict' };
  if (r.state === 'complete') return { kind: 'replay', status: Number(r.response_status), body: r.response_body };
  // Take over only a claim whose holder session is gone; the row lock makes two takers race safely.
  const took = await c.query(
    `UPDATE idempotency_keys k SET locked_at = now(), holder_pid = me.pid, holder_started = me.backend_start
       FROM ${ME} me
      WHERE k.merchant_id = $1 AND k.key = $2 AND k.state = 'in_flight' AND ${HOLDER_GONE}
      RETURNING k.key`,
    [merchantId, key, legacyStaleMs],
  );
  return took.rowCount === 1 ? { kind: 'claimed' } : { kind: 'in_progress' };
}

/**
 * Store the response; run in the same transaction as the effect, on the claiming connection. Refuses (throws, so
 * the effect rolls back) if this session no longer holds the key.
 */
export async function completeKey(
  c: PoolClient,
  merchantId: string,
  key: string,
  status: number,
  body: unknown,
): Promise<void> {
  const r = await c.query(
    `UPDATE idempotency_keys SET state = 'complete', response_status = $3, response_body = $4, completed_at = now(), locked_at = NULL,
            holder_pid = NULL, holder_started = NULL
      WHERE merchant_id = $1 AND key = $2 AND state = 'in_flight' AND (holder_pid, holder_started) = (SELECT pid, backend_start FROM ${ME} me)`,
    [merchantId, key, status, JSON.stringify(body)],
  );
  if (r.rowCount !== 1) throw new Error(`idempotency key ${key} is no longer held by this session`);
}

/** Give the key back after an unexpected failure so the client's retry can run (nothing was committed). */
export async function releaseKey(c: PoolClient, merchantId: string, key: string): Promise<void> {
  await c.query(
    `DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2 AND state = 'in_flight' AND (holder_pid, holder_started) = (SELECT pid, backend_start FROM ${ME} me)`,
    [merchantId, key],
  );
}

export type IdempotentOutcome =
  | { kind: 'done'; status: number; body: unknown }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'conflict' }
  | { kind: 'in_progress' };

/**
 * The whole idempotent request on one connection: claim the key; if claimed, run `effect` and store its answer in
 * one transaction. Any failure rolls back, gives the key back, and destroys the connection when it may be broken
 * (its session ending frees the key too). A failure to commit — the database went away — is thrown: the caller
 * answers an error, never the effect's 2xx.
 */
export async function withIdempotencyKey(
  db: Pool,
  merchantId: string,
  key: string,
  requestHash: string,
  effect: (c: PoolClient) => Promise<{ status: number; body: unknown }>,
  legacyStaleMs = DEFAULT_LEGACY_STALE_MS,
): Promise<IdempotentOutcome> {
  const c = await db.connect();
  let broken: Error | undefined;
  try {
    const claim = await claimKey(c, merchantId, key, requestHash, legacyStaleMs);
    if (claim.kind !== 'claimed') return claim;
    try {
      await c.query('BEGIN');
      const answer = await effect(c);
      await completeKey(c, merchantId, key, answer.status, answer.body);
      await c.query('COMMIT');
      return { kind: 'done', ...answer };
    } catch (e) {
      await c.query('ROLLBACK').catch(() => undefined);
      await releaseKey(c, merchantId, key).catch((re: Error) => (broken = re));
      throw e;
    }
  } catch (e) {
    broken ??= e as Error;
    throw e;
  } finally {
    c.release(broken);
  }
}

export const MIN_KEY_RETENTION_MS = 24 * 3600 * 1000;

/** Delete completed keys older than retentionMs (at least 24 h). Returns how many went. */
export async function pruneIdempotencyKeys(
  db: Pool | PoolClient,
  retentionMs: number = MIN_KEY_RETENTION_MS,
): Promise<number> {
  if (!(retentionMs >= MIN_KEY_RETENTION_MS)) {
    throw new OncepayError(
      IDEMPOTENCY_RETENTION_TOO_SHORT,
      `idempotency keys are kept at least 24 h, asked for ${retentionMs} ms`,
    );
  }
  const r = await db.query(
    `DELETE FROM idempotency_keys WHERE state = 'complete' AND created_at < now() - make_interval(secs => $1::double precision / 1000)`,
    [retentionMs],
  );
  return r.rowCount ?? 0;
}
