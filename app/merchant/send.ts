// Send one administrative transaction (initialize_merchant, set_paused, set_payout_authority, a vault's token
// account) and wait until it is confirmed. These operations are idempotent by nature — a second
// initialize_merchant fails with MerchantAlreadyInitialized, setting a flag twice leaves it set — so after an
// expired blockhash it is safe to sign again; no journal is needed (payouts have one: app/payout).
import { Commitment, Connection, Keypair, Transaction, TransactionInstruction } from '@solana/web3.js';
import { OncepayError } from '../../common/errors';
import { sleep } from '../../common/sleep';
import { programErrorName } from '../program/errors';
import { MERCHANT_CODES } from '../../common/errors/codes';

export interface SendOptions {
  /** Pause between two looks at the chain (default 400 ms). */
  pollIntervalMs?: number;
  /** How many times to sign again after a blockhash expired unlanded (default 3). */
  maxSignings?: number;
  commitment?: Extract<Commitment, 'confirmed' | 'finalized'>;
  signal?: AbortSignal;
}

export interface Landed {
  signature: string;
  slot: bigint;
}

/** A transaction that landed with an error: `programError` names the oncepay error when there is one. */
export class TransactionFailed extends OncepayError {
  constructor(
    readonly signature: string,
    readonly err: unknown,
    readonly programError: string | undefined,
  ) {
    super(
      MERCHANT_CODES.TRANSACTION_FAILED,
      `transaction ${signature} failed: ${programError ?? JSON.stringify(err)}`,
      { signature, programError },
    );
  }
}

/** Sign (signers[0] pays), send, and wait for the commitment; throws TransactionFailed when it landed with an error. */
export async function sendAndConfirm(
  connection: Connection,
  ixs: TransactionInstruction[],
  signers: Keypair[],
  opts: SendOptions = {},
): Promise<Landed> {
  const poll = opts.pollIntervalMs ?? 400;
  const commitment = opts.commitment ?? 'confirmed';
  const maxSignings = opts.maxSignings ?? 3;
  let lastSignature = '';
  for (let signing = 1; signing <= maxSignings; signing++) {
    const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: signers[0].publicKey, blockhash, lastValidBlockHeight }).add(...ixs);
    tx.sign(...signers);
    const bytes = tx.serialize();
    lastSignature = await connection.sendRawTransaction(bytes, { skipPreflight: true, maxRetries: 0 });
    for (let round = 0; ; round++) {
      await sleep(poll, opts.signal); // an abort rejects with ONCEPAY__COMMON__ABORTED
      const s = (await connection.getSignatureStatuses([lastSignature], { searchTransactionHistory: true })).value[0];
      const reached =
        s &&
        (s.confirmationStatus === 'finalized' || (commitment === 'confirmed' && s.confirmationStatus === 'confirmed'));
      if (s && reached) {
        if (s.err) throw new TransactionFailed(lastSignature, s.err, programErrorName(s.err));
        return { signature: lastSignature, slot: BigInt(s.slot) };
      }
      if (s) continue; // seen, not yet at the commitment
      // Not seen: only a finalized block height past the lifetime proves it can no longer land.
      if ((await connection.getBlockHeight('finalized')) > lastValidBlockHeight) break;
      if (round % 5 === 4)
        await connection.sendRawTransaction(bytes, { skipPreflight: true, maxRetries: 0 }).catch(() => undefined);
    }
  }
  throw new OncepayError(
    MERCHANT_CODES.TRANSACTION_EXPIRED,
    `transaction not confirmed after ${maxSignings} signings (last ${lastSignature})`,
    { signature: lastSignature },
  );
}
