// The Solana Pay transfer-request URL of an invoice, built by @solana/pay's own encodeURL from the stored fields
// only, so asking again gives the same URL. The amount goes in tokens, from exact base units through a decimal
// string (tokens.ts), never through a JS number.
import { encodeURL } from '@solana/pay';
import { PublicKey } from '@solana/web3.js';
import BigNumber from 'bignumber.js';
import { tokensOf } from './tokens';

export interface PaymentRequest {
  recipient: string;
  /** A mint address, or 'SOL' for a native transfer. */
  mint: string;
  amount: bigint;
  decimals: number;
  reference: string;
  label: string | null;
  message: string | null;
  memo: string | null;
}

export function paymentUrl(p: PaymentRequest): string {
  return encodeURL({
    recipient: new PublicKey(p.recipient),
    amount: new BigNumber(tokensOf(p.amount, p.decimals)),
    splToken: p.mint === 'SOL' ? undefined : new PublicKey(p.mint),
    reference: new PublicKey(p.reference),
    label: p.label ?? undefined,
    message: p.message ?? undefined,
    memo: p.memo ?? undefined,
  }).toString();
}
