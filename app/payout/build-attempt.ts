// Build and sign one attempt of a payout: the execute_payout transaction for a given blockhash. Pure apart
// from signing (ed25519 is deterministic): same row + keys + blockhash → same bytes and signature.
import { Keypair, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { Signature, signature as toSignature } from '../types';
import { executePayoutInstruction } from './program';
import { PayoutRow } from './store';

export type AttemptTerms = Pick<
  PayoutRow,
  | 'programId'
  | 'merchantAddress'
  | 'opPda'
  | 'vault'
  | 'mint'
  | 'recipientToken'
  | 'tokenProgram'
  | 'opId'
  | 'amount'
  | 'opBump'
>;

export function buildAttemptTransaction(
  p: AttemptTerms,
  keys: { authority: Keypair; payer?: Keypair },
  lifetime: { blockhash: string; lastValidBlockHeight: bigint },
): { bytes: Buffer; signature: Signature } {
  const payer = keys.payer ?? keys.authority;
  const tx = new Transaction({
    feePayer: payer.publicKey,
    blockhash: lifetime.blockhash,
    lastValidBlockHeight: Number(lifetime.lastValidBlockHeight),
  });
  tx.add(
    executePayoutInstruction(
      new PublicKey(p.programId),
      {
        payoutAuthority: keys.authority.publicKey,
        payer: payer.publicKey,
        merchant: new PublicKey(p.merchantAddress),
        operation: new PublicKey(p.opPda),
        vault: new PublicKey(p.vault),
        mint: new PublicKey(p.mint),
        recipientToken: new PublicKey(p.recipientToken),
        tokenProgram: new PublicKey(p.tokenProgram),
      },
      { opId: p.opId, amount: p.amount, opBump: p.opBump },
    ),
  );
  tx.sign(...(payer.publicKey.equals(keys.authority.publicKey) ? [payer] : [payer, keys.authority]));
  return { bytes: tx.serialize(), signature: toSignature(bs58.encode(tx.signature!)) };
}
