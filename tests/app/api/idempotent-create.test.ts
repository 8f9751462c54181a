// The pure half of app/api/idempotent-create: how each outcome of a key is answered, the same for every create
// route (the routes themselves run in api.test.ts and invoices.test.ts).
import { expect } from 'chai';
import { ApiError } from '../../../app/api/errors';
import { answerOf, errorAnswer } from '../../../app/api/idempotent-create';

function thrown(f: () => unknown): ApiError {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('app/api/idempotent-create (pure)', () => {
  it("answers the effect's answer as it is, not marked replayed", () => {
    expect(answerOf({ kind: 'done', status: 201, body: { id: 'x' } })).to.deep.equal({
      status: 201,
      body: { id: 'x' },
      replayed: false,
    });
  });

  it('answers a stored answer with its own status and body, marked replayed (also a stored error)', () => {
    expect(answerOf({ kind: 'replay', status: 201, body: { id: 'x' } })).to.deep.equal({
      status: 201,
      body: { id: 'x' },
      replayed: true,
    });
    const exists = { code: 'PAYOUT_ID_EXISTS', message: 'payoutId "p" already exists' };
    expect(answerOf({ kind: 'replay', status: 409, body: exists })).to.deep.equal({
      status: 409,
      body: exists,
      replayed: true,
    });
  });

  it('refuses a key used with another body (409 IDEMPOTENCY_CONFLICT) or still in flight (409 IN_PROGRESS)', () => {
    const conflict = thrown(() => answerOf({ kind: 'conflict' }));
    expect([conflict.status, conflict.code]).to.deep.equal([409, 'IDEMPOTENCY_CONFLICT']);
    const inFlight = thrown(() => answerOf({ kind: 'in_progress' }));
    expect([inFlight.status, inFlight.code]).to.deep.equal([409, 'IDEMPOTENCY_IN_PROGRESS']);
  });

  it('stores an error as its status and { code, message } body', () => {
    expect(errorAnswer(new ApiError('INVOICE_ID_EXISTS', 'invoiceId "i" already exists'))).to.deep.equal({
      status: 409,
      body: { code: 'INVOICE_ID_EXISTS', message: 'invoiceId "i" already exists' },
    });
  });
});
