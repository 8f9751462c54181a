// The payout id of an exception's refund (pure): the receipt's identity, so one receipt can be refunded once, ever.
import type { ExceptionReceipt } from './types';

export function refundPayoutId(r: Pick<ExceptionReceipt, 'cluster' | 'signature' | 'ixIndex' | 'innerIndex'>): string {
  return `refund:${r.cluster}:${r.signature}:${r.ixIndex}:${r.innerIndex}`;
}
