// common/backoff.ts: the one backoff rule (capped exponential, equal jitter). Pure: no I/O, no clock.
import { expect } from 'chai';
import { backoffDelay } from '../../common/backoff';

describe('common/backoff: capped exponential backoff with equal jitter (pure)', () => {
  const policy = { baseMs: 100, capMs: 2000 };

  it('doubles per retry, within [half, full] of the step, and never exceeds the cap', () => {
    expect(backoffDelay(1, policy, 0)).to.equal(50);
    expect(backoffDelay(1, policy, 0.999999)).to.equal(99);
    expect(backoffDelay(2, policy, 0)).to.equal(100);
    expect(backoffDelay(3, policy, 0.5)).to.equal(300);
    for (let n = 1; n < 200; n++) {
      for (const r of [0, 0.3, 0.99999]) {
        const d = backoffDelay(n, policy, r);
        expect(d).to.be.at.most(2000);
        expect(d).to.be.at.least(Math.min(100 * 2 ** (n - 1), 2000) / 2);
      }
    }
    expect(backoffDelay(10_000, policy, 1)).to.equal(2000);
    expect(backoffDelay(0, policy, 0.5)).to.equal(0);
  });

  it('jitter spreads retries of the same attempt', () => {
    const seen = new Set([0, 0.2, 0.4, 0.6, 0.8].map((r) => backoffDelay(4, policy, r)));
    expect(seen.size).to.equal(5);
  });

  it('clamps a random number outside [0, 1) and an absurd step to the cap', () => {
    expect(backoffDelay(1, policy, -5)).to.equal(50);
    expect(backoffDelay(1, policy, 7)).to.equal(100);
    expect(backoffDelay(Number.MAX_SAFE_INTEGER, { baseMs: 1e300, capMs: 1000 }, 0)).to.equal(500);
    expect(backoffDelay(Number.NaN, policy, 0.5)).to.equal(0);
  });
});
