// The payout id of an exception's refund (pure): the receipt's identity, so one receipt can be refunded once, ever.
import { OncepayError } from '../../common/errors';
import { EXCEPTION_CODES } from '../../common/errors/codes';
import type { ExceptionReceipt } from './types';

export function refundPayoutId(r: Pick<ExceptionReceipt, 'cluster' | 'signature' | 'ixIndex' | 'innerIndex'>): string {
  const bad = (field: string, what: string) =>
    new OncepayError(EXCEPTION_CODES.RECEIPT_KEY_INVALID, `receipt.${field} must be ${what}`, {
      field: `receipt.${field}`,
    });
  if (typeof r !== 'object' || r === null) throw bad('cluster', 'given: the receipt is not an object');
  if (typeof r.cluster !== 'string' || r.cluster === '') throw bad('cluster', 'a non-empty string');
  if (typeof r.signature !== 'string' || r.signature === '') throw bad('signature', 'a non-empty string');
  if (!Number.isSafeInteger(r.ixIndex) || r.ixIndex < 0) throw bad('ixIndex', 'an integer ≥ 0');
  if (!Number.isSafeInteger(r.innerIndex) || r.innerIndex < -1) throw bad('innerIndex', 'an integer ≥ -1');
  return `refund:${r.cluster}:${r.signature}:${r.ixIndex}:${r.innerIndex}`;
}
