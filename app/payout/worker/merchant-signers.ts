// The merchants a worker's keys sign for, kept current (signers.ts reads them): read at start, every `refreshMs`,
// and at once after a refusal showed that a merchant's payout authority is no longer one of the keys. Until the
// first read succeeds the worker claims nothing; a read that fails (database or chain away) keeps the last set and
// is retried with backoff.
import { Keypair } from '@solana/web3.js';
import { Pool } from 'pg';
import type { Logger } from 'pino';
import { backoffDelay, type BackoffPolicy } from '../../../common/backoff';
import { ignoreAbort, sleep } from '../../../common/sleep';
import { PayoutChain } from '../chain';
import { NO_SIGNERS, readSigners, Signers } from '../signers';

export interface MerchantSignersOptions {
  db: Pool;
  chain: PayoutChain;
  keys: readonly Keypair[];
  refreshMs: number;
  /** The waits after failed reads. */
  backoff: BackoffPolicy;
  random: () => number;
  log: Logger;
  /** After each successful read (the worker wakes its slots: there may be new merchants to claim for). */
  onRead: () => void;
}

export interface MerchantSigners {
  /** The set as last read (minus the merchants forgotten since). */
  current(): Signers;
  /** A refusal showed that `merchantId`'s payout authority is no longer ours: stop claiming it now, then re-read. */
  forget(merchantId: string): void;
  /** End the refresh loop (again: no effect); resolves when it has ended. */
  stop(): Promise<void>;
}

const signingSummary = (s: Signers) =>
  s.merchants.filter((x) => x.signable).map((x) => ({ id: x.id, name: x.name, merchant: x.merchant }));

export function startMerchantSigners(opts: MerchantSignersOptions): MerchantSigners {
  const { log, keys } = opts;
  let signers: Signers = NO_SIGNERS;
  let signersRead = false;
  let refreshing: Promise<void> | undefined;
  let refreshFailures = 0;
  let stopping = false;
  const halt = new AbortController();

  function refresh(): Promise<void> {
    refreshing ??= readSigners(opts.db, opts.chain, keys)
      .then((next) => {
        refreshFailures = 0;
        const before = JSON.stringify(signingSummary(signers));
        const first = !signersRead;
        signers = next;
        signersRead = true;
        const signs = signingSummary(next);
        if (first || JSON.stringify(signs) !== before) {
          log.info(
            {
              signs,
              others: next.merchants.length - signs.length,
              authorities: keys.map((k) => k.publicKey.toBase58()),
            },
            'payout worker merchants: claims the payouts of these merchants only (their payout authority is one of its keys)',
          );
        }
        opts.onRead();
      })
      .catch((e: Error) => {
        refreshFailures += 1;
        log.warn({ err: e.message }, 'merchants not read (database or chain unavailable); keeping the last set');
      })
      .finally(() => (refreshing = undefined));
    return refreshing;
  }

  const loop = (async () => {
    while (!stopping) {
      await refresh();
      const pause = refreshFailures === 0 ? opts.refreshMs : backoffDelay(refreshFailures, opts.backoff, opts.random());
      await sleep(pause, halt.signal).catch(ignoreAbort);
    }
  })();

  return {
    current: () => signers,
    forget(merchantId: string): void {
      const byMerchant = new Map(signers.byMerchant);
      byMerchant.delete(merchantId);
      signers = { ...signers, byMerchant };
      void refresh();
    },
    stop(): Promise<void> {
      stopping = true;
      halt.abort();
      return loop;
    },
  };
}
