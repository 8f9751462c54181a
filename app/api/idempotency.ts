// Idempotency-Key for the creates (POST /v1/payouts, POST /v1/invoices; idempotent-create.ts answers them). A key
// is scoped to one merchant and bound to the hash of the canonical request; the response is stored with it. Same
// key + same request → the stored response; same key + other request → conflict; same key while the first is still
// running → in progress.
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
import { Db, exec, one, withTransactionOn } from '../../db/sql';
import { API_CODES } from '../../common/errors/codes';
import * as q from './queries';

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

interface StoredKey {
  request_hash: string;
  state: 'in_flight' | 'complete';
  response_status: number | null;
  response_body: unknown;
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'conflict' }
  | { kind: 'in_progress' };

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
  if ((await exec(c, q.insertKeyClaim(merchantId, key, requestHash))) === 1) return { kind: 'claimed' };
  const r = await one<StoredKey>(c, q.getKey(merchantId, key));
  if (!r) return claimKey(c, merchantId, key, requestHash, legacyStaleMs); // released between our two statements
  if (r.request_hash !== requestHash) return { kind: 'conflict' };
  if (r.state === 'complete') return { kind: 'replay', status: Number(r.response_status), body: r.response_body };
  // Take over only a claim whose holder session is gone; the row lock makes two takers race safely.
  const took = await exec(c, q.takeOverKey(merchantId, key, legacyStaleMs));
  return took === 1 ? { kind: 'claimed' } : { kind: 'in_progress' };
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
  if ((await exec(c, q.completeKey(merchantId, key, status, body))) !== 1)
    throw new OncepayError(API_CODES.IDEMPOTENCY_KEY_LOST, `idempotency key ${key} is no longer held by this session`);
}

/** Give the key back after an unexpected failure so the client's retry can run (nothing was committed). */
export async function releaseKey(c: PoolClient, merchantId: string, key: string): Promise<void> {
  await exec(c, q.releaseKey(merchantId, key));
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
      const answer = await withTransactionOn(c, async () => {
        const a = await effect(c);
        await completeKey(c, merchantId, key, a.status, a.body);
        return a;
      });
      return { kind: 'done', ...answer };
    } catch (e) {
      // Rolled back by withTransactionOn; the key goes back on the same session that holds it.
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
export async function pruneIdempotencyKeys(db: Db, retentionMs: number = MIN_KEY_RETENTION_MS): Promise<number> {
  if (!(retentionMs >= MIN_KEY_RETENTION_MS)) {
    throw new OncepayError(
      API_CODES.IDEMPOTENCY_RETENTION_TOO_SHORT,
      `idempotency keys are kept at least 24 h, asked for ${retentionMs} ms`,
    );
  }
  return exec(db, q.pruneCompletedKeys(retentionMs));
}
