// Every statement of the merchant API's own tables (idempotency_keys, migrations 0100 and 0110), as Queries that
// db/sql runs; app/api/idempotency.ts decides what to do with their answers. The payouts themselves are
// app/payout/queries.ts's.
import type { Query } from '../../db/sql';
import { sessionGone, THIS_SESSION } from '../../db/session-holder';

/** This session, as pg_stat_activity names it. */
const ME = THIS_SESSION;

/**
 * The holder of an in-flight key is gone when no session with its pid and start time exists (db/session-holder.ts).
 * A row claimed before migration 0110 has no holder: it is gone after `legacyStaleMs` ($3, the old rule).
 */
const HOLDER_GONE = `(
  (holder_pid IS NULL AND locked_at < now() - make_interval(secs => $3::double precision / 1000))
  OR (holder_pid IS NOT NULL AND ${sessionGone('holder_pid', 'holder_started')}))`;

/** A new in-flight key held by this session; returns no row when the key exists. */
export function insertKeyClaim(merchantId: string, key: string, requestHash: string): Query {
  return {
    text: `INSERT INTO idempotency_keys (merchant_id, key, request_hash, state, locked_at, holder_pid, holder_started)
           SELECT $1, $2, $3, 'in_flight', now(), me.pid, me.backend_start FROM ${ME} me
           ON CONFLICT (merchant_id, key) DO NOTHING RETURNING key`,
    values: [merchantId, key, requestHash],
  };
}

export function getKey(merchantId: string, key: string): Query {
  return {
    text: 'SELECT request_hash, state, response_status, response_body FROM idempotency_keys WHERE merchant_id = $1 AND key = $2',
    values: [merchantId, key],
  };
}

/** Take over an in-flight key whose holder session is gone; the row lock makes two takers race safely. */
export function takeOverKey(merchantId: string, key: string, legacyStaleMs: number): Query {
  return {
    text: `UPDATE idempotency_keys k SET locked_at = now(), holder_pid = me.pid, holder_started = me.backend_start
             FROM ${ME} me
            WHERE k.merchant_id = $1 AND k.key = $2 AND k.state = 'in_flight' AND ${HOLDER_GONE}
            RETURNING k.key`,
    values: [merchantId, key, legacyStaleMs],
  };
}

/** Store the response; touches no row unless this session still holds the key. */
export function completeKey(merchantId: string, key: string, status: number, body: unknown): Query {
  return {
    text: `UPDATE idempotency_keys SET state = 'complete', response_status = $3, response_body = $4, completed_at = now(), locked_at = NULL,
                  holder_pid = NULL, holder_started = NULL
            WHERE merchant_id = $1 AND key = $2 AND state = 'in_flight' AND (holder_pid, holder_started) = (SELECT pid, backend_start FROM ${ME} me)`,
    values: [merchantId, key, status, JSON.stringify(body)],
  };
}

/** Give back a key this session holds (nothing of its effect committed). */
export function releaseKey(merchantId: string, key: string): Query {
  return {
    text: `DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2 AND state = 'in_flight' AND (holder_pid, holder_started) = (SELECT pid, backend_start FROM ${ME} me)`,
    values: [merchantId, key],
  };
}

/** Completed keys older than `retentionMs`. */
export function pruneCompletedKeys(retentionMs: number): Query {
  return {
    text: `DELETE FROM idempotency_keys WHERE state = 'complete' AND created_at < now() - make_interval(secs => $1::double precision / 1000)`,
    values: [retentionMs],
  };
}
