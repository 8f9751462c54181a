import { expect } from 'chai';
import { isRetryable, kindOfHttpStatus, kindOfRpcCode, retryAfterMs } from '../../../indexer/rpc/backoff';

describe('indexer/rpc backoff (pure)', () => {
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
