// What to do with one webhook delivery, decided from its raw bytes and headers alone (no database, no chain, no
// clock of its own): refuse it unauthenticated (nothing stored), dead-letter it whole, or accept it, listing the
// signatures to hold as hints (verified mode) or the receipts to apply (trustProvider), and the items refused
// on the way. The route (webhook.ts) executes the plan: the duplicate-event check, the writes, the chain check.
import * as crypto from 'crypto';
import { isOncepayError, OncepayError } from '../../common/errors';
import { DECODE_CODES, WEBHOOK_CODES } from '../../common/errors/codes';
import type { Receipt } from '../decode/receipt';
import { AuthConfig, AuthFailure, authenticate } from './webhook-auth';
import { eventIdOf, itemProblem, parseDelivery, signatureOfItem } from './webhook-delivery';
import { ClaimedTransfer, claimOf } from './webhook-hint-plan';
import type { VerificationFailure } from './webhook-metrics';
import type { NewHint } from './webhook-store';

export interface DeliveryPolicy {
  auth: AuthConfig;
  cluster: string;
  /** Apply the delivery's own (balance-checked) transactions instead of holding their signatures as hints. */
  trustProvider: boolean;
  /** Decoder of one transaction item. */
  decode: (item: unknown, cluster: string) => Receipt[];
  /** Unix seconds now (the signature's timestamp window). */
  nowS: number;
}

export type Headers = Record<string, string | string[] | undefined>;

/** An item of the delivery refused (dead-lettered by its index); the others still count. */
export interface ItemRefusal {
  index: number;
  code: string;
  message: string;
}

interface Accepted {
  eventId: string | null;
  /** sha256 of the raw body, hex: tells a redelivery (same bytes) from a reused event id. */
  bodySha256: string;
  /** Transaction items in the delivery. */
  items: number;
  /** In index order. */
  refused: ItemRefusal[];
  /** Refusals that count as verification failures (metrics), one per refused decode. */
  failures: VerificationFailure[];
}

export type DeliveryPlan =
  /** 401; nothing about an unauthenticated request is stored (anyone could send it). */
  | { action: 'unauthorized'; reason: AuthFailure; failure: VerificationFailure; code: string; message: string }
  /** 400; the whole body is dead-lettered. */
  | { action: 'refuse'; eventId: string | null; code: string; message: string }
  /** Hold each distinct signature as a pending hint, then check it against the chain. */
  | (Accepted & { action: 'hold'; hints: NewHint[] })
  /** --trust-provider: apply the decoded receipts; itemOf[i] is the item receipts[i] came from. */
  | (Accepted & { action: 'apply'; receipts: Receipt[]; itemOf: number[] });

/** The verification-failure reason of an authentication failure. */
function authFailureReason(r: AuthFailure): VerificationFailure {
  if (r === 'timestamp_outside_window' || r === 'malformed_signature' || r === 'legacy_scheme') return r;
  return 'unauthenticated';
}

/** A refused transaction item → its dead-letter code and the verification-failure reason it counts as. */
function refusalOf(e: OncepayError): { code: string; reason: VerificationFailure } {
  return e.code === DECODE_CODES.BALANCE_MISMATCH
    ? { code: WEBHOOK_CODES.BALANCE_MISMATCH, reason: 'balance_mismatch' }
    : { code: WEBHOOK_CODES.MALFORMED_TRANSACTION, reason: 'malformed' };
}

/** The 401 plan of an authentication failure (before the body is read, or after). */
export function unauthorizedPlan(reason: AuthFailure): Extract<DeliveryPlan, { action: 'unauthorized' }> {
  const failure = authFailureReason(reason);
  return reason === 'timestamp_outside_window'
    ? {
        action: 'unauthorized',
        reason,
        failure,
        code: WEBHOOK_CODES.TIMESTAMP_OUTSIDE_WINDOW,
        message: 'the signature timestamp is outside the accepted window (a replayed delivery, or a clock far off)',
      }
    : {
        action: 'unauthorized',
        reason,
        failure,
        code: WEBHOOK_CODES.UNAUTHORIZED,
        message: 'missing or wrong webhook credentials',
      };
}

export function planDelivery(raw: Buffer, headers: Headers, policy: DeliveryPolicy): DeliveryPlan {
  const auth = authenticate(policy.auth, headers, raw, policy.nowS);
  if (!auth.ok) return unauthorizedPlan(auth.reason);

  const parsed = parseDelivery(raw);
  const headerId = eventIdOf(headers, parsed.ok ? parsed.bodyEventId : null);
  if (!headerId.ok)
    return {
      action: 'refuse',
      eventId: null,
      code: WEBHOOK_CODES.INVALID_EVENT_ID,
      message: 'event id must be 1–200 printable ASCII characters',
    };
  const eventId = headerId.eventId;
  if (!parsed.ok) return { action: 'refuse', eventId, code: parsed.code, message: parsed.message };

  const accepted: Accepted = {
    eventId,
    bodySha256: crypto.createHash('sha256').update(raw).digest('hex'),
    items: parsed.items.length,
    refused: [],
    failures: [],
  };
  const refuseItem = (index: number, e: OncepayError) => {
    const r = refusalOf(e);
    accepted.failures.push(r.reason);
    accepted.refused.push({ index, code: r.code, message: e.message });
  };

  if (!policy.trustProvider) {
    // Each item only names a signature. Its own transaction, if it has one, is decoded just to be compared
    // with the chain's later; if the decoder refuses it, that is dead-lettered, and the signature is still
    // checked (a provider's bad rendering must not lose a real payment).
    const hints = new Map<string, NewHint>();
    parsed.items.forEach((item, index) => {
      const signature = signatureOfItem(item);
      if (signature === null) {
        accepted.refused.push({
          index,
          code: WEBHOOK_CODES.MALFORMED_TRANSACTION,
          message: 'the item names no transaction signature',
        });
        return;
      }
      let claimed: ClaimedTransfer[] | null = null;
      if (typeof item !== 'string' && itemProblem(item) === null) {
        try {
          claimed = claimOf(policy.decode(item, policy.cluster));
        } catch (e) {
          if (!isOncepayError(e)) throw e;
          refuseItem(index, e);
        }
      }
      if (!hints.has(signature)) hints.set(signature, { signature, claimed });
    });
    return { ...accepted, action: 'hold', hints: [...hints.values()] };
  }

  // --trust-provider: decode item by item; one bad item is dead-lettered, the others still count.
  const receipts: Receipt[] = [];
  const itemOf: number[] = [];
  parsed.items.forEach((item, index) => {
    const problem = itemProblem(item);
    if (problem) {
      accepted.refused.push({ index, code: WEBHOOK_CODES.MALFORMED_TRANSACTION, message: problem });
      return;
    }
    try {
      for (const r of policy.decode(item, policy.cluster)) {
        receipts.push(r);
        itemOf.push(index);
      }
    } catch (e) {
      if (!isOncepayError(e)) throw e;
      refuseItem(index, e);
    }
  });
  return { ...accepted, action: 'apply', receipts, itemOf };
}
