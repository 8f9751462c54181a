// The chain calls of a worker's slots, shared: the slots of one worker run their payouts side by side, and some
// kinds of call can serve several of them at once without changing what any of them sees.
// - Statuses: a slot that asks while another ask is in flight joins the next call, which asks for every waiting
//   signature at once (getSignatureStatuses takes up to 256; merged-call.ts). Nothing waits when nothing is in
//   flight, so a lone slot sees no delay; under load, one call answers many slots (group commit, for RPC). And a
//   slot pausing between two looks (pauseLooking) has its signatures carried by the calls made meanwhile, its pause
//   ended by the first answer (status-pause.ts): slots whose timers drift apart still share one call.
// - Op accounts: the same for the op-account reads (getOpAccount at `finalized` before a payout signs again after an
//   expired or failed attempt, at `confirmed` to name a winner; many at once after an outage, when a whole batch of
//   attempts expired): the reads asked while one is in flight go out as one getMultipleAccounts (up to 100) at the
//   same commitment, for the same program. Each reader decodes its own account with the same checks as a lone read (a
//   malformed account fails only its read); an answer that cannot be checked fails every read it carried.
// - Blockhash: a recent blockhash fetched less than `blockhashMaxAgeMs` ago (at the same commitment, through the
//   same chain) serves every attempt signed meanwhile, as real senders do. Its lastValidBlockHeight comes with
//   it and is journaled as ever: an attempt signed on a shared blockhash has a lifetime shorter by at most that
//   age, and an expired one is handled by the rules (the op account at finalized decides) like any other.
// Failures reach every caller of the failed call, as the chain's own failures do; nothing is cached from them.
import { MAX_ACCOUNTS_PER_CALL, PayoutChain, SignatureStatus } from './chain';
import { mergeWhileInFlight } from './merged-call';
import { decodeOpAccount } from './program';
import { statusPauses } from './status-pause';
import { Address, Signature } from '../types';

/** getSignatureStatuses accepts at most this many signatures per call. */
export const MAX_STATUSES_PER_CALL = 256;

export interface SharedChainOptions {
  /** Reuse a fetched blockhash for this long (ms); 0 fetches one per attempt. Default 0. */
  blockhashMaxAgeMs?: number;
  /** The clock (monotonic ms): performance.now() by default. */
  now?: () => number;
}

export interface SharedChain extends PayoutChain {
  /**
   * The pause between two looks at `signatures` (at most `ms`): resolves early to their statuses when a status
   * call made meanwhile carried them (the next look, already taken), to undefined otherwise (look as usual).
   */
  pauseLooking(signatures: Signature[], ms: number, signal?: AbortSignal): Promise<SignatureStatus[] | undefined>;
}

export function shareChainCalls(chain: PayoutChain, opts: SharedChainOptions = {}): SharedChain {
  const now = opts.now ?? (() => performance.now());
  const maxAge = opts.blockhashMaxAgeMs ?? 0;

  const pauses = statusPauses<Signature, SignatureStatus>();
  const statuses = mergeWhileInFlight(
    (signatures: Signature[]) => chain.signatureStatuses(signatures),
    MAX_STATUSES_PER_CALL,
    pauses,
  );
  /** One merged read per program and commitment (a getMultipleAccounts has one commitment; the owner is checked). */
  const opReads = new Map<string, (pdas: Address[]) => Promise<Array<Uint8Array | null>>>();
  const opRead = (programId: Address, commitment: 'confirmed' | 'finalized') => {
    const key = `${programId} ${commitment}`;
    let read = opReads.get(key);
    if (!read) {
      read = mergeWhileInFlight(
        (pdas: Address[]) => chain.opAccountsData(pdas, programId, commitment),
        MAX_ACCOUNTS_PER_CALL,
      );
      opReads.set(key, read);
    }
    return read;
  };

  let blockhash: { at: number; value: Promise<{ blockhash: string; lastValidBlockHeight: bigint }> } | undefined;

  return {
    sendRawTransaction: (bytes) => chain.sendRawTransaction(bytes),
    blockhashExpired: (lifetime) => chain.blockhashExpired(lifetime),
    async getOpAccount(pda, programId, commitment) {
      const [data] = await opRead(programId, commitment)([pda]);
      return data && decodeOpAccount(data);
    },
    opAccountsData: (pdas, programId, commitment) => opRead(programId, commitment)(pdas),
    opAccountSignatures: (pda) => chain.opAccountSignatures(pda),
    signatureStatuses: (signatures) => statuses(signatures),
    pauseLooking: (signatures, ms, signal) => pauses.pause(signatures, ms, signal),
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
