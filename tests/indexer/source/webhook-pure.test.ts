import { expect } from 'chai';
import { authenticate, parseSignatureHeader, signBodyLegacy, signDelivery } from '../../../indexer/source/webhook-auth';
import { eventIdOf, itemProblem, parseDelivery, signatureOfItem } from '../../../indexer/source/webhook-delivery';
import {
  classifyChainAnswer,
  claimDisagreement,
  claimOf,
  DEFAULT_RECHECK,
  nextHintStep,
} from '../../../indexer/source/webhook-hint-plan';
import { WEBHOOK_CODES } from '../../../common/errors/codes';
import { DECODE_CODES } from '../../../indexer/decode';
import { OncepayError } from '../../../common/errors';
import type { Receipt } from '../../../indexer/decode';

describe('indexer/source webhook auth and shapes (pure)', () => {
  const secret = 's3cret-value';
  const body = Buffer.from('{"a":1}');
  const now = 1_800_000_000;
  const cfg = { secrets: [secret] };

  it('accepts `t=…,v1=…` over "t.body" within the window; several v1 values and several secrets (rotation)', () => {
    expect(authenticate(cfg, { 'x-oncepay-signature': signDelivery(secret, body, now) }, body, now)).to.deep.equal({
      ok: true,
      via: 'v1',
    });
    expect(authenticate(cfg, { 'x-oncepay-signature': signDelivery(secret, body, now - 300) }, body, now).ok).to.equal(
      true,
    );
    expect(
      authenticate(cfg, { 'x-oncepay-signature': signDelivery(['old-secret', secret], body, now) }, body, now).ok,
    ).to.equal(true);
    expect(
      authenticate(
        { secrets: ['new-secret', secret] },
        { 'x-oncepay-signature': signDelivery(secret, body, now) },
        body,
        now,
      ).ok,
    ).to.equal(true);
    expect(parseSignatureHeader(signDelivery(['a', 'b'], body, 7))).to.deep.include({ t: 7 });
  });

  it('refuses a signature outside the window (a replay), over another body or time, malformed, or by another secret', () => {
    expect(
      authenticate(cfg, { 'x-oncepay-signature': signDelivery(secret, body, now - 301) }, body, now),
    ).to.deep.equal({ ok: false, reason: 'timestamp_outside_window' });
    expect(authenticate(cfg, { 'x-oncepay-signature': signDelivery(secret, body, now + 301) }, body, now).ok).to.equal(
      false,
    );
    expect(
      authenticate(
        { ...cfg, toleranceS: 10 },
        { 'x-oncepay-signature': signDelivery(secret, body, now - 11) },
        body,
        now,
      ).ok,
    ).to.equal(false);
    expect(authenticate(cfg, { 'x-oncepay-signature': signDelivery(secret, '{"a":2}', now) }, body, now)).to.deep.equal(
      { ok: false, reason: 'bad_signature' },
    );
    // the timestamp is signed: moving it breaks the HMAC
    const moved = signDelivery(secret, body, now - 1000).replace(`t=${now - 1000}`, `t=${now}`);
    expect(authenticate(cfg, { 'x-oncepay-signature': moved }, body, now)).to.deep.equal({
      ok: false,
      reason: 'bad_signature',
    });
    expect(authenticate(cfg, { 'x-oncepay-signature': signDelivery('other', body, now) }, body, now).ok).to.equal(
      false,
    );
    for (const bad of [
      't=abc,v1=00',
      `t=${now}`,
      `t=${now},v1=zz`,
      `v1=${'0'.repeat(64)}`,
      `t=1,t=2,v1=${'0'.repeat(64)}`,
    ]) {
      expect(authenticate(cfg, { 'x-oncepay-signature': bad }, body, now), bad).to.deep.equal({
        ok: false,
        reason: 'malformed_signature',
      });
    }
    expect(authenticate(cfg, {}, body, now)).to.deep.equal({ ok: false, reason: 'no_credentials' });
  });

  it('the deprecated schemes (bare secret, untimestamped sha256= HMAC) work only with legacy: true', () => {
    for (const h of [
      { 'x-oncepay-secret': secret },
      { authorization: `Bearer ${secret}` },
      { 'x-oncepay-signature': signBodyLegacy(secret, body) },
    ]) {
      expect(authenticate(cfg, h, body, now), JSON.stringify(h)).to.deep.equal({ ok: false, reason: 'legacy_scheme' });
      expect(authenticate({ ...cfg, legacy: true }, h, body, now), JSON.stringify(h)).to.deep.equal({
        ok: true,
        via: 'legacy',
      });
    }
    const legacy = { ...cfg, legacy: true };
    expect(authenticate(legacy, { 'x-oncepay-secret': 'nope' }, body, now).ok).to.equal(false);
    expect(authenticate(legacy, { 'x-oncepay-signature': signBodyLegacy(secret, '{"a":2}') }, body, now).ok).to.equal(
      false,
    );
    expect(
      authenticate(
        legacy,
        { 'x-oncepay-secret': secret, 'x-oncepay-signature': signBodyLegacy('other', body) },
        body,
        now,
      ).ok,
    ).to.equal(false);
    expect(authenticate({ ...legacy, requireSignature: true }, { 'x-oncepay-secret': secret }, body, now).ok).to.equal(
      false,
    );
    // the timestamped scheme keeps working beside it
    expect(authenticate(legacy, { 'x-oncepay-signature': signDelivery(secret, body, now) }, body, now).ok).to.equal(
      true,
    );
  });

  it('reads the accepted shapes', () => {
    const tx = { transaction: {}, meta: {} };
    expect(parseDelivery(Buffer.from(JSON.stringify(tx)))).to.deep.include({
      ok: true,
      shape: 'transaction',
      bodyEventId: null,
    });
    expect(parseDelivery(Buffer.from(JSON.stringify([tx, tx])))).to.deep.include({ ok: true, shape: 'array' });
    const env = parseDelivery(Buffer.from(JSON.stringify({ id: 'evt-1', events: [tx] })));
    expect(env).to.deep.include({ ok: true, shape: 'events-envelope', bodyEventId: 'evt-1' });
    expect(parseDelivery(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: tx })))).to.deep.include({
      ok: true,
      shape: 'rpc-envelope',
    });
    expect(parseDelivery(Buffer.from(JSON.stringify({ signatures: ['x'] })))).to.deep.include({
      ok: true,
      shape: 'events-envelope',
    });
  });

  it('names the signature an item points at, in any encoding, or null', () => {
    const sig = '5yoMpc2sCBcvuLKWVvRxuyrvbzwMT6c6SpU6JDRXbhpLKyyimCocvb6NvK58be19Sy7WxccANM6btcjKYSsTu2cz';
    expect(signatureOfItem(sig)).to.equal(sig);
    expect(signatureOfItem({ transaction: { signatures: [sig] }, meta: {} })).to.equal(sig);
    expect(signatureOfItem({ jsonrpc: '2.0', result: { transaction: { signatures: [sig] } } })).to.equal(sig);
    for (const bad of ['short', 42, null, { transaction: { signatures: ['0OIl'] } }, { type: 'TRANSFER' }])
      expect(signatureOfItem(bad)).to.equal(null);
  });

  it('names what is wrong with a body', () => {
    expect(parseDelivery(Buffer.from('{"transaction": {'))).to.deep.include({
      ok: false,
      code: WEBHOOK_CODES.MALFORMED_JSON,
    });
    expect(parseDelivery(Buffer.from([0xff, 0xfe]))).to.deep.include({ ok: false, code: WEBHOOK_CODES.MALFORMED_JSON });
    expect(parseDelivery(Buffer.from('"hello"'))).to.deep.include({ ok: false, code: WEBHOOK_CODES.UNSUPPORTED_SHAPE });
    expect(parseDelivery(Buffer.from('{"foo":1}'))).to.deep.include({
      ok: false,
      code: WEBHOOK_CODES.UNSUPPORTED_SHAPE,
    });
    expect(parseDelivery(Buffer.from('{"id":"bad id","events":[]}'))).to.deep.include({
      ok: false,
      code: WEBHOOK_CODES.INVALID_EVENT_ID,
    });
    expect(itemProblem(null)).to.be.a('string');
    expect(itemProblem({ type: 'TRANSFER', tokenTransfers: [] })).to.match(/transaction/);
    expect(itemProblem({ transaction: {}, meta: null })).to.equal(null);
  });

  it('takes the event id from headers first, then the body', () => {
    expect(eventIdOf({ 'x-oncepay-event-id': 'h1' }, 'b1')).to.deep.equal({ ok: true, eventId: 'h1' });
    expect(eventIdOf({ 'webhook-id': 'msg_2' }, null)).to.deep.equal({ ok: true, eventId: 'msg_2' });
    expect(eventIdOf({}, 'b1')).to.deep.equal({ ok: true, eventId: 'b1' });
    expect(eventIdOf({}, null)).to.deep.equal({ ok: true, eventId: null });
    expect(eventIdOf({ 'x-event-id': 'has space' }, null)).to.deep.equal({ ok: false });
  });
});

describe('indexer/source webhook hints: what the chain says decides (pure)', () => {
  const receipt = (amount: bigint, destination = 'D'): Receipt =>
    ({
      signature: 's',
      slot: 5n,
      blockTime: null,
      ixIndex: 0,
      innerIndex: -1,
      program: 'spl-token',
      kind: 'transfer',
      mint: 'M',
      source: 'S',
      destination,
      destinationOwner: 'O',
      amount,
    }) as Receipt;

  it('classifies the chain answer: not found, failed on chain, refused by the decoder, confirmed', () => {
    const decodeOk = () => [receipt(5n)];
    expect(classifyChainAnswer(null, decodeOk)).to.deep.equal({ kind: 'not_found' });
    expect(classifyChainAnswer({ meta: { err: { InstructionError: [0, 'x'] } } }, decodeOk).kind).to.equal(
      'failed_on_chain',
    );
    expect(classifyChainAnswer({ meta: { err: null, status: { Err: 1 } } }, decodeOk).kind).to.equal('failed_on_chain');
    const refuse = () => {
      throw new OncepayError(DECODE_CODES.BALANCE_MISMATCH, 'no');
    };
    expect(classifyChainAnswer({ meta: { err: null } }, refuse)).to.deep.include({
      kind: 'refused',
      code: DECODE_CODES.BALANCE_MISMATCH,
    });
    expect(classifyChainAnswer({ meta: { err: null } }, decodeOk)).to.deep.equal({
      kind: 'confirmed',
      receipts: [receipt(5n)],
    });
  });

  it('credits what is confirmed, drops what is refuted, re-checks with growing capped jitter what is not seen, drops it once expired', () => {
    const fresh = { checks: 1, expired: false };
    expect(nextHintStep(fresh, { kind: 'confirmed', receipts: [] }, DEFAULT_RECHECK, 0.5)).to.deep.equal({
      action: 'credit',
      receipts: [],
    });
    expect(nextHintStep(fresh, { kind: 'failed_on_chain', err: 1 }, DEFAULT_RECHECK, 0.5)).to.deep.include({
      action: 'drop',
      reason: 'failed_on_chain',
    });
    expect(
      nextHintStep(fresh, { kind: 'refused', code: DECODE_CODES.BALANCE_MISMATCH, message: 'm' }, DEFAULT_RECHECK, 0.5),
    ).to.deep.include({ action: 'drop', reason: 'balance_mismatch' });
    expect(
      nextHintStep(
        fresh,
        { kind: 'refused', code: DECODE_CODES.MALFORMED_TRANSACTION, message: 'm' },
        DEFAULT_RECHECK,
        0.5,
      ),
    ).to.deep.include({ action: 'drop', reason: 'malformed' });
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((checks) => {
      const s = nextHintStep({ checks, expired: false }, { kind: 'not_found' }, { baseMs: 1000, capMs: 60_000 }, 0.5);
      expect(s.action).to.equal('recheck');
      return (s as { delayMs: number }).delayMs;
    });
    expect(delays.slice(0, 4)).to.deep.equal([750, 1500, 3000, 6000]);
    expect(Math.max(...delays)).to.equal(45_000); // capped: half fixed, half jitter of 60 s
    expect(nextHintStep({ checks: 9, expired: true }, { kind: 'not_found' }, DEFAULT_RECHECK, 0.5)).to.deep.include({
      action: 'drop',
      reason: 'not_found',
    });
    expect(
      nextHintStep({ checks: 9, expired: true }, { kind: 'rpc_error', message: 'x' }, DEFAULT_RECHECK, 0.5),
    ).to.deep.include({ action: 'drop', reason: 'rpc_error' });
  });

  it('a delivery claim that disagrees with the chain is named', () => {
    expect(claimDisagreement(claimOf([receipt(5n)]), [receipt(5n)])).to.equal(null);
    expect(claimDisagreement(claimOf([receipt(1_000_000n)]), [receipt(1n)])).to.match(/amount 1000000, the chain 1/);
    expect(claimDisagreement(claimOf([receipt(5n, 'X')]), [receipt(5n)])).to.match(/destination/);
    expect(claimDisagreement([], [receipt(5n)])).to.match(/claims 0/);
  });
});
