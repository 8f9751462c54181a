// The JSON-RPC client over real HTTP on loopback (the replay server), plus a closed port for network errors.
import { expect } from 'chai';
import * as net from 'net';
import { ReplayRpc, startReplayRpc, blockAt } from '../../../testkit/replay-rpc';
import { createRpcClient, RpcCallError, RpcErrorKind, RPC_CODES } from '../../../indexer/rpc';
import { isOncepayError } from '../../../common/errors';

async function closedPortUrl(): Promise<string> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

describe('indexer/rpc client', () => {
  let rpc: ReplayRpc;
  const fast = { attempts: 4, baseMs: 2, capMs: 10, timeoutMs: 300 };
  beforeEach(async () => {
    rpc = await startReplayRpc();
    rpc.setBlock(5, blockAt(5, []));
    rpc.setTip({ finalized: 10, confirmed: 12 });
  });
  afterEach(async () => rpc.close());

  function client(extra: Partial<Parameters<typeof createRpcClient>[0]> = {}) {
    const errors: RpcErrorKind[] = [];
    const c = createRpcClient({ url: rpc.url, retry: fast, onError: (k) => errors.push(k), ...extra });
    return { c, errors };
  }

  it('asks getBlock for json encoding, full details, v0 support, at the given commitment', async () => {
    const bodies: unknown[] = [];
    const { c } = client({
      fetch: (url, init) => {
        bodies.push(JSON.parse(String(init?.body)));
        return fetch(url, init);
      },
    });
    expect(await c.getSlot('finalized')).to.equal(10);
    expect(await c.getSlot('confirmed')).to.equal(12);
    expect(await c.getBlocks(0, 10, 'finalized')).to.deep.equal([5]);
    const r = await c.getBlock(5, 'finalized');
    expect(r.status).to.equal('ok');
    expect(bodies.at(-1)).to.deep.include({
      jsonrpc: '2.0',
      method: 'getBlock',
      params: [
        5,
        {
          commitment: 'finalized',
          encoding: 'json',
          transactionDetails: 'full',
          rewards: false,
          maxSupportedTransactionVersion: 0,
        },
      ],
    });
  });

  it('answers a skipped slot and a missing block as statuses, without retrying either', async () => {
    const { c, errors } = client();
    rpc.setSkipped(6);
    expect(await c.getBlock(6, 'finalized')).to.deep.include({ status: 'skipped', rpcCode: -32007 });
    expect(await c.getBlock(11, 'finalized')).to.deep.include({ status: 'not_available', rpcCode: -32004 });
    expect(rpc.calls.getBlock).to.equal(2);
    expect(errors).to.deep.equal(['slot_skipped', 'block_not_available']);
  });

  it('retries 429 / 500 / timeouts with backoff and counts each failed attempt', async () => {
    const { c, errors } = client();
    rpc.inject({ kind: 'http429', method: 'getSlot', times: 1 });
    rpc.inject({ kind: 'http500', method: 'getSlot', times: 1 });
    rpc.inject({ kind: 'timeout', method: 'getSlot', times: 1 });
    expect(await c.getSlot('finalized')).to.equal(10);
    expect(errors).to.deep.equal(['http_429', 'http_5xx', 'timeout']);
    expect(rpc.calls.getSlot).to.equal(4);
  });

  it('gives up after the attempt budget with RETRIES_EXHAUSTED naming the last kind', async () => {
    const { c, errors } = client();
    rpc.inject({ kind: 'http429', times: Infinity });
    const e = await c.getSlot('finalized').catch((x) => x);
    expect(e).to.be.instanceOf(RpcCallError);
    expect(e.code).to.equal(RPC_CODES.RETRIES_EXHAUSTED);
    expect(e.kind).to.equal('http_429');
    expect(errors).to.have.length(fast.attempts);
  });

  it('counts network errors (connection refused) and retries them', async () => {
    const errors: RpcErrorKind[] = [];
    const c = createRpcClient({ url: await closedPortUrl(), retry: fast, onError: (k) => errors.push(k) });
    const e = await c.getSlot('finalized').catch((x) => x);
    expect(e.code).to.equal(RPC_CODES.RETRIES_EXHAUSTED);
    expect(errors).to.deep.equal(['network', 'network', 'network', 'network']);
  });

  it('does not retry a response that is not JSON', async () => {
    const { c } = client();
    rpc.inject({ kind: 'invalidJson', times: 1 });
    const e = await c.getSlot('finalized').catch((x) => x);
    expect(e.code).to.equal(RPC_CODES.MALFORMED_RESPONSE);
    expect(rpc.calls.getSlot).to.equal(1);
  });

  it('stops at once when the caller aborts, even during a held request', async () => {
    const { c } = client({ retry: { ...fast, timeoutMs: 60_000 } });
    rpc.inject({ kind: 'timeout', times: Infinity });
    const ac = new AbortController();
    const p = c.getSlot('finalized', { signal: ac.signal }).catch((x) => x);
    setTimeout(() => ac.abort(), 30);
    const e = await p;
    expect(isOncepayError(e, RPC_CODES.ABORTED)).to.equal(true);
  });
});
