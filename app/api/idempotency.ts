// Idempotency-Key for POST /v1/payouts. A key is scoped to one merchant and bound to the hash of the canonical
// request; the response is stored with it. Same key + same request → the stored response; same key + other
// request → conflict; same key while the first is still running → in progress.
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

/**
 * Claim the key for this request, committed at once so a concurrent duplicate sees it in flight. An in-flight
 * claim older than staleMs (its process died before finishing) may be taken over by the same request: the
 * payout insert and the key's completion commit together, so a dead claim left nothing half-done.
 */
export async function claimKey(db: Pool | PoolClient, merchantId: string, key: string, requestHash: string, staleMs: number): Promise<Claim> {
  const ins = await db.query(
    `INSERT INTO idempotency_keys (merchant_id, key, request_hash, state, locked_at)
     VALUES ($1, $2, $3, 'in_flight', now()) ON CONFLICT (merchant_id, key) DO NOTHING RETURNING key`,
    [merchantId, key, requestHash],
  );
  if (ins.rowCount === 1) return { kind: 'claimed' };
  const { rows } = await db.query(
    'SELECT request_hash, state, response_status, response_body FROM idempotency_keys WHERE merchant_id = $1 AND key = $2',
    [merchantId, key],
  );
  const r = rows[0];
  if (!r) return claimKey(db, merchantId, key, requestHash, staleMs); // released between our two statements
  if (r.request_hash !== requestHash) return { kind: 'conflict' };
  if (r.state === 'complete') return { kind: 'replay', status: Number(r.response_status), body: r.response_body };
  // Take over only a claim whose holder is gone; the guard on locked_at makes two takers race safely.
  const took = await db.query(
    `UPDATE idempotency_keys SET locked_at = now()
      WHERE merchant_id = $1 AND key = $2 AND state = 'in_flight' AND locked_at < now() - make_interval(secs => $3::double precision / 1000)
      RETURNING key`,
    [merchantId, key, staleMs],
  );
  return took.rowCount === 1 ? { kind: 'claimed' } : { kind: 'in_progress' };
}

/** Store the response; run in the same transaction as the effect (the payout insert). */
export async function completeKey(db: PoolClient, merchantId: string, key: string, status: number, body: unknown): Promise<void> {
  await db.query(
    `UPDATE idempotency_keys SET state = 'complete', response_status = $3, response_body = $4, completed_at = now(), locked_at = NULL
      WHERE merchant_id = $1 AND key = $2 AND state = 'in_flight'`,
    [merchantId, key, status, JSON.stringify(body)],
  );
}

/** Give the key back after an unexpected failure so the client's retry can run (nothing was committed). */
export async function releaseKey(db: Pool | PoolClient, merchantId: string, key: string): Promise<void> {
  await db.query(`DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2 AND state = 'in_flight'`, [merchantId, key]);
}

export const MIN_KEY_RETENTION_MS = 24 * 3600 * 1000;

/** Delete completed keys older than retentionMs (at least 24 h). Returns how many went. */
export async function pruneIdempotencyKeys(db: Pool | PoolClient, retentionMs: number = MIN_KEY_RETENTION_MS): Promise<number> {
  if (!(retentionMs >= MIN_KEY_RETENTION_MS)) {
    throw new OncepayError(IDEMPOTENCY_RETENTION_TOO_SHORT, `idempotency keys are kept at least 24 h, asked for ${retentionMs} ms`);
  }
  const r = await db.query(
    `DELETE FROM idempotency_keys WHERE state = 'complete' AND created_at < now() - make_interval(secs => $1::double precision / 1000)`,
    [retentionMs],
  );
  return r.rowCount ?? 0;
}
