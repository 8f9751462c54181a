// planDelivery decides what a webhook delivery gets from its bytes and headers alone: no server, no database,
// no chain. The route (webhook.ts) only executes the plan; tests/indexer/source/webhook.test.ts covers that.
import { expect } from 'chai';
import bs58 from 'bs58';
import { OncepayError, type OncepayErrorCode } from '../../../common/errors';
import { DECODE_CODES } from '../../../indexer/decode';
import type { Receipt } from '../../../indexer/decode';
import { WEBHOOK_CODES } from '../../../common/errors/codes';
import { signDelivery } from '../../../indexer/source/webhook-auth';
import { DeliveryPolicy, planDelivery } from '../../../indexer/source/webhook-plan';
import { receipt as fixtureReceipt } from '../ledger/fixtures';

const secret = 'plan-secret';
const now = 1_800_000_000;
const sig = (n: number) => bs58.encode(Buffer.alloc(64, n));

/** 7 units of MINT to DEST: what the stub decoder finds in every item it accepts. */
function receipt(signature: string): Receipt {
  return { ...fixtureReceipt({ signature, destination: 'DEST', amount: 7n }), mint: 'MINT' };
}

/** A transaction item the stub decoder reads: `meta.fail` makes it refuse the item with that decode code. */
function item(signature: string, fail?: OncepayErrorCode) {
  return { transaction: { signatures: [signature] }, meta: { fail: fail ?? null } };
}

function decode(it: unknown): Receipt[] {
  const x = it as ReturnType<typeof item>;
  if (x.meta.fail) throw new OncepayError(x.meta.fail, `refused ${x.transaction.signatures[0]}`);
  return [receipt(x.transaction.signatures[0])];
}

function policy(p: Partial<DeliveryPolicy> = {}): DeliveryPolicy {
  return { auth: { secrets: [secret] }, cluster: 'localnet', trustProvider: false, decode, nowS: now, ...p };
}

function signed(body: unknown, headers: Record<string, string> = {}, t = now) {
  const raw = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return { raw, headers: { 'x-oncepay-signature': signDelivery(secret, raw, t), ...headers } };
}

describe('indexer/source webhook planDelivery (pure)', () => {
  it('refuses an unauthenticated delivery without storing anything, naming a stale timestamp apart', () => {
    const raw = Buffer.from('[]');
    expect(planDelivery(raw, {}, policy())).to.deep.include({
      action: 'unauthorized',
      reason: 'no_credentials',
      failure: 'unauthenticated',
      code: WEBHOOK_CODES.UNAUTHORIZED,
    });
    const stale = signed([], {}, now - 3600);
    expect(planDelivery(stale.raw, stale.headers, policy())).to.deep.include({
      action: 'unauthorized',
      reason: 'timestamp_outside_window',
      failure: 'timestamp_outside_window',
      code: WEBHOOK_CODES.TIMESTAMP_OUTSIDE_WINDOW,
    });
  });

  it('dead-letters a whole body it cannot read, and a bad event id', () => {
    const junk = signed('{not json', { 'x-oncepay-event-id': 'evt-1' });
    expect(planDelivery(junk.raw, junk.headers, policy())).to.deep.include({
      action: 'refuse',
      eventId: 'evt-1',
      code: WEBHOOK_CODES.MALFORMED_JSON,
    });
    const badId = signed([], { 'x-oncepay-event-id': 'has space' });
    expect(planDelivery(badId.raw, badId.headers, policy())).to.deep.include({
      action: 'refuse',
      eventId: null,
      code: WEBHOOK_CODES.INVALID_EVENT_ID,
    });
  });

  it('holds each distinct signature once with what its item claims; refused items are listed, their signature still held', () => {
    const d = signed({
      id: 'evt-2',
      events: [item(sig(1)), item(sig(1)), item(sig(2), DECODE_CODES.BALANCE_MISMATCH), 'not-a-signature', sig(3)],
    });
    const plan = planDelivery(d.raw, d.headers, policy());
    if (plan.action !== 'hold') throw new Error(`expected hold, got ${plan.action}`);
    expect(plan.eventId).to.equal('evt-2');
    expect(plan.items).to.equal(5);
    expect(plan.bodySha256).to.match(/^[0-9a-f]{64}$/);
    expect(plan.hints.map((h) => [h.signature, h.claimed === null])).to.deep.equal([
      [sig(1), false],
      [sig(2), true],
      [sig(3), true],
    ]);
    expect(plan.hints[0].claimed).to.deep.equal([
      { ixIndex: 0, innerIndex: -1, mint: 'MINT', destination: 'DEST', amount: '7' },
    ]);
    expect(plan.refused.map((r) => [r.index, r.code])).to.deep.equal([
      [2, WEBHOOK_CODES.BALANCE_MISMATCH],
      [3, WEBHOOK_CODES.MALFORMED_TRANSACTION],
    ]);
    expect(plan.failures).to.deep.equal(['balance_mismatch']);
  });

  it('with trustProvider, lists the decoded receipts with the item each came from, and the refused items', () => {
    const d = signed([
      item(sig(1)),
      { nope: true },
      item(sig(2), 'ONCEPAY__DECODE__MALFORMED_INSTRUCTION'),
      item(sig(3)),
    ]);
    const plan = planDelivery(d.raw, d.headers, policy({ trustProvider: true }));
    if (plan.action !== 'apply') throw new Error(`expected apply, got ${plan.action}`);
    expect(plan.eventId).to.equal(null);
    expect(plan.receipts.map((r) => r.signature)).to.deep.equal([sig(1), sig(3)]);
    expect(plan.itemOf).to.deep.equal([0, 3]);
    expect(plan.refused.map((r) => [r.index, r.code])).to.deep.equal([
      [1, WEBHOOK_CODES.MALFORMED_TRANSACTION],
      [2, WEBHOOK_CODES.MALFORMED_TRANSACTION],
    ]);
    expect(plan.failures).to.deep.equal(['malformed']);
  });

  it('gives the same body the same digest (a redelivery) and another body another one', () => {
    const a = signed([sig(1)]);
    const b = signed([sig(2)]);
    const pa = planDelivery(a.raw, a.headers, policy());
    const pa2 = planDelivery(a.raw, a.headers, policy());
    const pb = planDelivery(b.raw, b.headers, policy());
    if (pa.action !== 'hold' || pa2.action !== 'hold' || pb.action !== 'hold') throw new Error('expected hold');
    expect(pa.bodySha256).to.equal(pa2.bodySha256);
    expect(pa.bodySha256).to.not.equal(pb.bodySha256);
  });
});
