// The chain calls of a worker's slots, shared: the slots of one worker run their payouts side by side, and two
// kinds of call can serve several of them at once without changing what any of them sees.
// - Statuses: a slot that asks while another ask is in flight joins the next call, which asks for every waiting
//   signature at once (getSignatureStatuses takes up to 256). Nothing waits when nothing is in flight, so a lone
//   slot sees no delay; under load, one call answers many slots (group commit, for RPC).
// - Blockhash: a recent blockhash fetched less than `blockhashMaxAgeMs` ago (at the same commitment, through the
//   same chain) serves every attempt signed meanwhile, as real senders do. Its lastValidBlockHeight comes with
//   it and is journaled as ever: an attempt signed on a shared blockhash has a lifetime shorter by at most that
//   age, and an expired one is handled by the rules (the op account at finalized decides) like any other.
// Failures reach every caller of the failed call, as the chain's own failures do; nothing is cached from them.
import { PayoutChain, SignatureStatus } from './chain';
import { Signature } from '../types';

/** getSignatureStatuses accepts at most this many signatures per call. */
export const MAX_STATUSES_PER_CALL = 256;

export interface SharedChainOptions {
  /** Reuse a fetched blockhash for this long (ms); 0 fetches one per attempt. Default 0. */
  blockhashMaxAgeMs?: number;
  /** The clock (monotonic ms): performance.now() by default. */
  now?: () => number;
}

interface Waiter {
  signatures: Signature[];
  resolve(s: SignatureStatus[]): void;
  reject(e: unknown): void;
}

export function shareChainCalls(chain: PayoutChain, opts: SharedChainOptions = {}): PayoutChain {
  const now = opts.now ?? (() => performance.now());
  const maxAge = opts.blockhashMaxAgeMs ?? 0;

  const waiting: Waiter[] = [];
  let inFlight = false;
  function flush(): void {
    if (inFlight || waiting.length === 0) return;
    // One call for as many waiters as fit (a waiter's signatures always go in one call).
    const batch: Waiter[] = [];
    const unique = new Map<Signature, number>();
    while (waiting.length > 0) {
      const w = waiting[0];
      const fresh = w.signatures.filter((s) => !unique.has(s));
      if (batch.length > 0 && unique.size + new Set(fresh).size > MAX_STATUSES_PER_CALL) break;
      for (const s of fresh) if (!unique.has(s)) unique.set(s, unique.size);
      batch.push(waiting.shift()!);
    }
    inFlight = true;
    const signatures = [...unique.keys()];
    chain.signatureStatuses(signatures).then(
      (statuses) => {
        for (const w of batch) w.resolve(w.signatures.map((s) => statuses[unique.get(s)!]));
        done();
      },
      (e) => {
        for (const w of batch) w.reject(e);
        done();
      },
    );
  }
  function done(): void {
    inFlight = false;
    flush();
  }

  let blockhash: { at: number; value: Promise<{ blockhash: string; lastValidBlockHeight: bigint }> } | undefined;

  return {
    sendRawTransaction: (bytes) => chain.sendRawTransaction(bytes),
    blockhashExpired: (lifetime) => chain.blockhashExpired(lifetime),
    getOpAccount: (pda, programId, commitment) => chain.getOpAccount(pda, programId, commitment),
    opAccountSignatures: (pda) => chain.opAccountSignatures(pda),
    signatureStatuses(signatures) {
      if (signatures.length === 0) return Promise.resolve([]);
      return new Promise<SignatureStatus[]>((resolve, reject) => {
        waiting.push({ signatures, resolve, reject });
        flush();
      });
    },
    latestBlockhash() {
      const t = now();
      // A fetch in flight is shared too (its age counts from when it was asked for).
      if (blockhash && t - blockhash.at < maxAge) return blockhash.value;
      const value = chain.latestBlockhash();
      const entry = { at: t, value };
      blockhash = entry;
      // A failed fetch is not reused.
      value.catch(() => {
        if (blockhash === entry) blockhash = undefined;
      });
      return value;
    },
  };
}
