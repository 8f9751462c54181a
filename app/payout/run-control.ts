// How a payout run pauses, retries and stops, the same in both executors (run-payout.ts, plain-executor.ts). A chain
// call that fails decides nothing: a timeout, a 429, a dropped connection is marked ChainCallFailed, retried after a
// pause and counted (the run gives the payout back after maxChainFailures in a row); anything else goes through
// unmarked and stops the run: a database error (the connection that holds the lock may be gone), an OncepayError
// that is not about the call's transport (an op account whose data is malformed), a bug. An abort (SIGTERM's drain,
// a timeout) stops it at its next pause. An attempt refused as Unauthorized stops it too: the payout is handed back.
import { Keypair } from '@solana/web3.js';
import { PoolClient } from 'pg';
import { Logger } from 'pino';
import { OncepayError } from '../../common/errors';
import { PAYOUT_CODES, RPC_CODES } from '../../common/errors/codes';
import { PayoutChain } from './chain';
import { AttemptRow, noteHandBack, PayoutRow } from './store';

/**
 * A chain call failed (timeout, 429, dropped connection): it decides nothing. An OncepayError like every other
 * error thrown here; `reason` is what the call failed with (the message without the code, for the logs and for
 * CHAIN_UNAVAILABLE's "last:"). It never leaves a run: both executors catch it around each step.
 */
export class ChainCallFailed extends OncepayError {
  readonly reason: string;
  constructor(reason: string) {
    super(PAYOUT_CODES.CHAIN_CALL_FAILED, reason, { reason });
    this.name = 'ChainCallFailed';
    this.reason = reason;
  }
}

/**
 * The RPC failures (app/payout/json-rpc.ts) that are a chain call failing: everything but a misconfigured endpoint,
 * an abort and a batch too large for the method (a bug: asking again cannot help).
 */
const RETRIED_RPC_CODES: ReadonlySet<string> = new Set(
  Object.values(RPC_CODES).filter(
    (c) => c !== RPC_CODES.INVALID_ENDPOINT && c !== RPC_CODES.ABORTED && c !== RPC_CODES.BATCH_TOO_LARGE,
  ),
);

/** The chain, with every failure of a call marked ChainCallFailed (see above); sends are left as they are. */
export function markedChain(chain: PayoutChain): PayoutChain {
  const mark = (e: unknown) => {
    throw e instanceof OncepayError && !RETRIED_RPC_CODES.has(e.code)
      ? e
      : new ChainCallFailed((e as Error)?.message ?? String(e));
  };
  return {
    latestBlockhash: () => chain.latestBlockhash().catch(mark),
    sendRawTransaction: (bytes) => chain.sendRawTransaction(bytes),
    signatureStatuses: (sigs) => chain.signatureStatuses(sigs).catch(mark),
    blockhashExpired: (l) => chain.blockhashExpired(l).catch(mark),
    getOpAccount: (pda, program, commitment) => chain.getOpAccount(pda, program, commitment).catch(mark),
    opAccountsData: (pdas, program, commitment) => chain.opAccountsData(pdas, program, commitment).catch(mark),
    opAccountSignatures: (pda) => chain.opAccountSignatures(pda).catch(mark),
  };
}

/** After `failures` chain calls failed in a row, out of `max`: the run gives up (the journal keeps every attempt). */
export function chainUnavailable(id: string, failures: number, last: string): OncepayError {
  return new OncepayError(
    PAYOUT_CODES.CHAIN_UNAVAILABLE,
    `${failures} chain calls in a row failed (last: ${last}); the journal keeps every attempt`,
    { id },
  );
}

/**
 * The run was asked to stop (SIGTERM's drain, a timeout): the journal keeps every attempt. The executors' pauses
 * reject with it (common/sleep.ts: `sleep(ms, signal, aborted)`).
 */
export function aborted(): OncepayError {
  return new OncepayError(
    PAYOUT_CODES.ABORTED,
    'payout execution aborted; the journal keeps every attempt, run it again or `oncepay payout resume`',
  );
}

/**
 * Payout `p`'s attempt was refused on chain as Unauthorized (its signer is not the merchant's payout authority) and
 * is settled failed: the payout stays due with the reason noted, it is logged, and the error returned (the caller
 * throws it) hands it back to the queue for a worker holding the merchant's payout authority.
 */
export async function handBackUnauthorized(
  db: PoolClient,
  p: PayoutRow,
  refused: { attempt: AttemptRow; error: string },
  authority: Keypair,
  log: Logger,
): Promise<OncepayError> {
  await noteHandBack(db, p.id, refused.error);
  const signer = authority.publicKey.toBase58();
  log.error(
    { attempt: refused.attempt.attemptNo, signature: refused.attempt.signature, signer, merchant: p.merchantAddress },
    'attempt refused on chain as Unauthorized: the signer is not the merchant payout authority; payout handed back',
  );
  return new OncepayError(
    PAYOUT_CODES.SIGNER_UNAUTHORIZED,
    `payout ${p.id}: ${refused.error}: ${signer} is not the payout authority of merchant ${p.merchantAddress}; nothing moved, and the payout is still due for a worker holding that merchant's payout authority`,
    { id: p.id, signer, merchant: p.merchantAddress, error: refused.error },
  );
}
