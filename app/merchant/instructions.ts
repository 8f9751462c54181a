// The merchant's instructions (initialize_merchant, set_paused, set_payout_authority) and its config PDA, built from
// the IDL (app/program/idl.ts: data by Anchor's coder, accounts in the IDL's order and flags). Pure.
import { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { programInstruction } from '../program/idl';

/** The merchant config PDA ["merchant", merchant_authority] and its canonical bump. */
export function merchantAddress(programId: PublicKey, authority: PublicKey): { merchant: PublicKey; bump: number } {
  const [merchant, bump] = PublicKey.findProgramAddressSync([Buffer.from('merchant'), authority.toBuffer()], programId);
  return { merchant, bump };
}

/**
 * initialize_merchant(payout_authority, merchant_bump), signed by the merchant authority and paid by `payer` (the
 * authority unless given). Returns the merchant config PDA (seeds "merchant" ‖ authority) with the instruction.
 */
export function initializeMerchantInstruction(
  programId: PublicKey,
  authority: PublicKey,
  payoutAuthority: PublicKey,
  payer: PublicKey = authority,
): { ix: TransactionInstruction; merchant: PublicKey } {
  const { merchant, bump } = merchantAddress(programId, authority);
  const ix = programInstruction(
    programId,
    'initialize_merchant',
    { merchant_authority: authority, payer, merchant },
    { payout_authority: payoutAuthority, merchant_bump: bump },
  );
  return { ix, merchant };
}

/** set_paused(paused: bool), signed by the merchant authority. */
export function setPausedInstruction(
  programId: PublicKey,
  authority: PublicKey,
  paused: boolean,
): TransactionInstruction {
  const { merchant } = merchantAddress(programId, authority);
  return programInstruction(programId, 'set_paused', { merchant_authority: authority, merchant }, { paused });
}

/** set_payout_authority(new_payout_authority: Pubkey), signed by the merchant authority. */
export function setPayoutAuthorityInstruction(
  programId: PublicKey,
  authority: PublicKey,
  newPayoutAuthority: PublicKey,
): TransactionInstruction {
  const { merchant } = merchantAddress(programId, authority);
  return programInstruction(
    programId,
    'set_payout_authority',
    { merchant_authority: authority, merchant },
    { new_payout_authority: newPayoutAuthority },
  );
}
