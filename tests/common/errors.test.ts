// The one error table (common/errors/codes.ts + messages.ts): codes are unique strings ONCEPAY__<AREA>__<WHAT>,
// each area object holds only its own area, every code has a message, and an OncepayError thrown without a
// message carries the table's. Pure: no I/O.
import { expect } from 'chai';
import {
  isOncepayError,
  ONCEPAY_ERROR_AREAS,
  ONCEPAY_ERROR_MESSAGES,
  OncepayError,
  PAYOUT_CODES,
  WEBHOOK_CODES,
} from '../../common/errors';

const all = Object.entries(ONCEPAY_ERROR_AREAS).flatMap(([area, codes]) =>
  Object.entries(codes).map(([key, code]) => ({ area, key, code: code as string })),
);

describe('common/errors: one code table, one message table', () => {
  it('every code is ONCEPAY__<AREA>__<WHAT> and listed once', () => {
    expect(all.length).to.be.greaterThan(100);
    for (const { area, key, code } of all) expect(code, `${area}.${key}`).to.match(/^ONCEPAY__[A-Z]+__[A-Z0-9_]+$/);
    expect(new Set(all.map((c) => c.code)).size, 'a code listed twice').to.equal(all.length);
  });

  it('each area object holds the codes of one area', () => {
    for (const [area, codes] of Object.entries(ONCEPAY_ERROR_AREAS)) {
      const areas = new Set(Object.values(codes).map((c: string) => c.split('__')[1]));
      expect(areas.size, area).to.equal(1);
    }
  });

  it('every code has a one-line message, and no message names a code that is not in the table', () => {
    expect(Object.keys(ONCEPAY_ERROR_MESSAGES).sort()).to.deep.equal(all.map((c) => c.code).sort());
    for (const [code, message] of Object.entries(ONCEPAY_ERROR_MESSAGES)) {
      expect(message, code).to.match(/^\S.*\S$/);
      expect(message, code).not.to.include('\n');
    }
  });

  it('an OncepayError without a message says the table’s; with one, its own; the code is the table’s string', () => {
    const bare = new OncepayError(PAYOUT_CODES.AMOUNT_ZERO);
    expect(bare.code).to.equal('ONCEPAY__PAYOUT__AMOUNT_ZERO');
    expect(bare.message).to.equal(`ONCEPAY__PAYOUT__AMOUNT_ZERO: ${ONCEPAY_ERROR_MESSAGES[PAYOUT_CODES.AMOUNT_ZERO]}`);
    const precise = new OncepayError(WEBHOOK_CODES.NOT_FOUND, 'no route GET /x', { url: '/x' });
    expect(precise.message).to.equal('ONCEPAY__WEBHOOK__NOT_FOUND: no route GET /x');
    expect(precise.context).to.deep.equal({ url: '/x' });
    expect(isOncepayError(precise, WEBHOOK_CODES.NOT_FOUND)).to.equal(true);
    expect(isOncepayError(precise, WEBHOOK_CODES.INTERNAL)).to.equal(false);
  });
});
