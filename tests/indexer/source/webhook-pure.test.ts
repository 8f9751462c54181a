import { expect } from 'chai';
import { authenticate, signBody } from '../../../indexer/source/webhook-auth';
import { eventIdOf, itemProblem, parseDelivery } from '../../../indexer/source/webhook-delivery';
import { WEBHOOK_CODES } from '../../../indexer/source/codes';

describe('indexer/source webhook auth and shapes (pure)', () => {
  const secret = 's3cret-value';
  const body = Buffer.from('{"a":1}');

  it('accepts the right secret header, Authorization (Bearer or bare) and a right HMAC', () => {
    expect(authenticate({ secret }, { 'x-oncepay-secret': secret }, body)).to.deep.equal({ ok: true, via: ['secret'] });
    expect(authenticate({ secret }, { authorization: `Bearer ${secret}` }, body).ok).to.equal(true);
    expect(authenticate({ secret }, { authorization: secret }, body).ok).to.equal(true);
    expect(authenticate({ secret }, { 'x-oncepay-signature': signBody(secret, body) }, body)).to.deep.equal({ ok: true, via: ['signature'] });
  });

  it('refuses a wrong secret, a wrong or stale HMAC, no credentials, and a right secret beside a wrong HMAC', () => {
    expect(authenticate({ secret }, { 'x-oncepay-secret': 'nope' }, body).ok).to.equal(false);
    expect(authenticate({ secret }, { 'x-oncepay-secret': `${secret}x` }, body).ok).to.equal(false);
    expect(authenticate({ secret }, { 'x-oncepay-signature': signBody(secret, Buffer.from('{"a":2}')) }, body).ok).to.equal(false);
    expect(authenticate({ secret }, { 'x-oncepay-signature': 'sha256=zz' }, body).ok).to.equal(false);
    expect(authenticate({ secret }, {}, body)).to.deep.equal({ ok: false, reason: 'no credentials' });
    expect(authenticate({ secret }, { 'x-oncepay-secret': secret, 'x-oncepay-signature': signBody('other', body) }, body).ok).to.equal(false);
  });

  it('with requireSignature, a secret alone is not enough', () => {
    expect(authenticate({ secret, requireSignature: true }, { 'x-oncepay-secret': secret }, body).ok).to.equal(false);
    expect(authenticate({ secret, requireSignature: true }, { 'x-oncepay-signature': signBody(secret, body) }, body).ok).to.equal(true);
  });

  it('reads the accepted shapes', () => {
    const tx = { transaction: {}, meta: {} };
    expect(parseDelivery(Buffer.from(JSON.stringify(tx)))).to.deep.include({ ok: true, shape: 'transaction', bodyEventId: null });
    expect(parseDelivery(Buffer.from(JSON.stringify([tx, tx])))).to.deep.include({ ok: true, shape: 'array' });
    const env = parseDelivery(Buffer.from(JSON.stringify({ id: 'evt-1', events: [tx] })));
    expect(env).to.deep.include({ ok: true, shape: 'events-envelope', bodyEventId: 'evt-1' });
    expect(parseDelivery(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: tx })))).to.deep.include({ ok: true, shape: 'rpc-envelope' });
  });

  it('names what is wrong with a body', () => {
    expect(parseDelivery(Buffer.from('{"transaction": {'))).to.deep.include({ ok: false, code: WEBHOOK_CODES.MALFORMED_JSON });
    expect(parseDelivery(Buffer.from([0xff, 0xfe]))).to.deep.include({ ok: false, code: WEBHOOK_CODES.MALFORMED_JSON });
    expect(parseDelivery(Buffer.from('"hello"'))).to.deep.include({ ok: false, code: WEBHOOK_CODES.UNSUPPORTED_SHAPE });
    expect(parseDelivery(Buffer.from('{"foo":1}'))).to.deep.include({ ok: false, code: WEBHOOK_CODES.UNSUPPORTED_SHAPE });
    expect(parseDelivery(Buffer.from('{"id":"bad id","events":[]}'))).to.deep.include({ ok: false, code: WEBHOOK_CODES.INVALID_EVENT_ID });
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
