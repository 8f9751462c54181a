// Wake-ups for the payout worker: LISTEN oncepay_payout_due (migration 0150 notifies it on every insert into
// payouts) through db/listen, on a connection of its own outside the worker's pool so it never takes a slot's
// connection. A hint only: the worker keeps polling, and while this connection is down (database restart,
// terminated backend) db/listen reconnects with backoff and the worker just polls.
import { Pool } from 'pg';
import { Logger } from 'pino';
import { BackoffPolicy } from '../../common/backoff';
import { listen, Listener } from '../../db/listen';

export const PAYOUT_DUE_CHANNEL = 'oncepay_payout_due';

export type DueListener = Listener;

/**
 * Calls `onDue` whenever a payout is inserted into the schema `pool` works in (and once after each (re)connect);
 * `reconnect` paces the reconnects after a lost connection.
 */
export function listenForDuePayouts(pool: Pool, onDue: () => void, log: Logger, reconnect: BackoffPolicy): DueListener {
  return listen(pool, {
    channel: PAYOUT_DUE_CHANNEL,
    onNotify: onDue,
    onListening: onDue, // inserts while we were not listening: look once
    log,
    reconnect,
    lostMessage: 'payout wake-ups lost (LISTEN connection); polling until it is back',
  });
}
