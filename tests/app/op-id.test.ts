import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { deriveOpId, deriveOpPda, deriveOperation, isOpId, assertIsOpId, opId } from '../../app/op-id';
import { isPayoutId } from '../../app/types';
import { isOncepayError } from '../../common/errors';
import vectorsJson from '../fixtures/op-id-vectors.json';

const vectors = vectorsJson as {
  domain: string;
  vectors: Array<{
    description: string;
    programId: string;
    merchant: string;
    payoutId: string;
    payoutIdUtf8Hex: string;
    opId: string;
    opPda: string;
    opBump: number;
  }>;
};
const ROOT = path.resolve(__dirname, '..', '..');

describe('app/op-id', () => {
  for (const v of vectors.vectors) {
    it(`matches vector: ${v.description}`, () => {
      expect(Buffer.from(v.payoutId, 'utf8').toString('hex')).to.equal(v.payoutIdUtf8Hex);
      const id = deriveOpId(v);
      expect(id).to.equal(v.opId);
      expect(deriveOpPda({ programId: v.programId, merchant: v.merchant, opId: id })).to.deep.equal({
        address: v.opPda,
        bump: v.opBump,
      });
    });
  }

  it('every input part changes the op_id (no two vectors collide)', () => {
    const ids = new Set(vectors.vectors.map((v) => v.opId));
    expect(ids.size).to.equal(vectors.vectors.length);
  });

  it('guard trio: isOpId / assertIsOpId / opId()', () => {
    const v = vectors.vectors[0];
    expect(isOpId(v.opId)).to.equal(true);
    expect(isOpId(v.opId.toUpperCase())).to.equal(false);
    expect(opId(v.opId.toUpperCase())).to.equal(v.opId);
    expect(opId(Buffer.from(v.opId, 'hex'))).to.equal(v.opId);
    expect(() => assertIsOpId('00'))
      .to.throw()
      .that.satisfies((e: unknown) => isOncepayError(e, 'ONCEPAY__PAYOUT__OP_ID_MALFORMED'));
  });

  it('refuses payout ids that would not round-trip as bytes', () => {
    expect(isPayoutId('')).to.equal(false);
    expect(isPayoutId('a\nb')).to.equal(false);
    expect(isPayoutId('\ud800')).to.equal(false);
    expect(isPayoutId('x'.repeat(201))).to.equal(false);
    const v = vectors.vectors[0];
    expect(() => deriveOpId({ ...v, payoutId: 'a\u0000' })).to.throw(/ONCEPAY__PAYOUT__ID_MALFORMED/);
    expect(() => deriveOpId({ ...v, merchant: 'not-base58-0OIl' })).to.throw(/ONCEPAY__PAYOUT__ADDRESS_MALFORMED/);
  });

  it('is the same across processes and time (no clock, no randomness)', () => {
    const v = vectors.vectors[6];
    const runs = [0, 1].map(() =>
      spawnSync(
        process.execPath,
        [
          'bin/oncepay',
          'payout',
          'opid',
          '--program',
          v.programId,
          '--merchant',
          v.merchant,
          '--payout-id',
          v.payoutId,
        ],
        {
          cwd: ROOT,
          encoding: 'utf8',
          env: { ...process.env, ONCEPAY_FROM_SOURCE: '1', TZ: 'Pacific/Kiritimati' },
        },
      ),
    );
    for (const r of runs) {
      expect(r.status, r.stderr).to.equal(0);
      expect(JSON.parse(r.stdout)).to.deep.equal({ opId: v.opId, opPda: v.opPda });
    }
    // And Math.random / Date are not consulted: poisoning them changes nothing.
    const realRandom = Math.random;
    const realNow = Date.now;
    Math.random = () => {
      throw new Error('randomness used');
    };
    Date.now = () => {
      throw new Error('clock used');
    };
    try {
      expect(deriveOperation(v).opId).to.equal(v.opId);
    } finally {
      Math.random = realRandom;
      Date.now = realNow;
    }
  });
});
