import { expect } from 'chai';
import { backoffDelay, isRetryable, kindOfHttpStatus, kindOfRpcCode, retryAfterMs } from '../../../indexer/rpc/backoff';

describe('indexer/rpc backoff (pure)', () => {
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

  it('classifies HTTP statuses and Solana RPC codes', () => {
    expect(kindOfHttpStatus(200)).to.equal(undefined);
    expect(kindOfHttpStatus(429)).to.equal('http_429');
    expect(kindOfHttpStatus(503)).to.equal('http_5xx');
    expect(kindOfHttpStatus(404)).to.equal('http_4xx');
    expect(kindOfRpcCode(-32007)).to.equal('slot_skipped');
    expect(kindOfRpcCode(-32009)).to.equal('slot_skipped');
    expect(kindOfRpcCode(-32004)).to.equal('block_not_available');
    expect(kindOfRpcCode(-32014)).to.equal('block_not_available');
    expect(kindOfRpcCode(-32001)).to.equal('block_not_available');
    expect(kindOfRpcCode(-32005)).to.equal('node_unhealthy');
    expect(kindOfRpcCode(-32602)).to.equal('rpc_error');
  });

  it('retries only what another attempt can fix; never a skipped slot or a missing block', () => {
    for (const k of ['http_429', 'http_5xx', 'timeout', 'network', 'node_unhealthy'] as const)
      expect(isRetryable(k), k).to.equal(true);
    for (const k of ['http_4xx', 'malformed', 'rpc_error', 'slot_skipped', 'block_not_available'] as const)
      expect(isRetryable(k), k).to.equal(false);
  });

  it('honours Retry-After within the cap', () => {
    expect(retryAfterMs('1', 2000)).to.equal(1000);
    expect(retryAfterMs('120', 2000)).to.equal(2000);
    expect(retryAfterMs(null, 2000)).to.equal(undefined);
    expect(retryAfterMs('soon', 2000)).to.equal(undefined);
  });
});
