// The one classifier of "the database is away" (db/unavailable.ts): pure, no database.
import { expect } from 'chai';
import { isDatabaseUnavailable } from '../../db/unavailable';

const err = (props: Record<string, unknown>, message = 'x') => Object.assign(new Error(message), props);

describe('db/unavailable: isDatabaseUnavailable', () => {
  it('network errors of a server that is gone', () => {
    for (const code of [
      'ECONNREFUSED',
      'ECONNRESET',
      'EPIPE',
      'ETIMEDOUT',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'ENOTFOUND',
      'EAI_AGAIN',
    ]) {
      expect(isDatabaseUnavailable(err({ code })), code).to.equal(true);
    }
  });

  it('SQLSTATEs of a server going away, not there yet, timing the session out or read-only: 57P01/02/03/05, 25P03, class 08, 53300, 25006', () => {
    for (const code of [
      '57P01',
      '57P02',
      '57P03',
      '57P05',
      '25P03',
      '08000',
      '08003',
      '08006',
      '08001',
      '08004',
      '08P01',
      '53300',
      '25006',
    ]) {
      expect(isDatabaseUnavailable(err({ code })), code).to.equal(true);
    }
  });

  it("node-postgres's own messages: connection terminated, acquire timeout, not queryable", () => {
    for (const m of [
      'Connection terminated unexpectedly',
      'Connection terminated',
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
      'Client has encountered a connection error and is not queryable',
      'Client was closed and is not queryable',
    ]) {
      expect(isDatabaseUnavailable(new Error(m)), m).to.equal(true);
    }
  });

  it('wrapped causes and AggregateErrors (a connect to several addresses)', () => {
    expect(isDatabaseUnavailable(err({ cause: err({ code: 'ECONNREFUSED' }) }))).to.equal(true);
    expect(
      isDatabaseUnavailable(
        new AggregateError([err({ code: 'ECONNREFUSED' }), err({ code: 'ECONNREFUSED' })], 'connect'),
      ),
    ).to.equal(true);
  });

  it('errors that say the request is wrong are NOT an outage (never retried blindly, never a 503)', () => {
    for (const code of [
      '23505',
      '23503',
      '40001',
      '40P01',
      '42P01',
      '42601',
      '22P02',
      '57014',
      '55P03',
      'ONCEPAY__LEDGER__X',
    ]) {
      expect(isDatabaseUnavailable(err({ code })), code).to.equal(false);
    }
    expect(isDatabaseUnavailable(new Error('relation "x" does not exist'))).to.equal(false);
    expect(isDatabaseUnavailable(new TypeError('Cannot read properties of undefined'))).to.equal(false);
    for (const x of [undefined, null, 'ECONNREFUSED', 57, {}]) expect(isDatabaseUnavailable(x)).to.equal(false);
  });

  it('a cause chain that loops ends', () => {
    const a = err({}) as Error & { cause?: unknown };
    a.cause = a;
    expect(isDatabaseUnavailable(a)).to.equal(false);
  });
});
