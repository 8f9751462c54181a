// The executor's lean JSON-RPC read (app/payout/json-rpc.ts) and the checks on what it reads (chain.ts
// parseOpAccountInfo): a node's answer is never trusted for being JSON. A local HTTP server answers what each case
// needs, as a broken or hostile node would; the real node's answers are read in localnet.test.ts and worker.test.ts.
import { expect } from 'chai';
import * as http from 'http';
import { AddressInfo } from 'net';
import { Keypair, PublicKey } from '@solana/web3.js';
import { OncepayError } from '../../../common/errors';
import { PAYOUT_CODES, RPC_CODES } from '../../../common/errors/codes';
import { Connection } from '@solana/web3.js';
import { createConnectionChain, parseOpAccountInfo, parseOpAccountsInfo } from '../../../app/payout/chain';
import { jsonRpc } from '../../../app/payout/json-rpc';
import { OP_ACCOUNT_DISCRIMINATOR, OP_ACCOUNT_LEN } from '../../../app/payout/program';
import { ONCEPAY_PROGRAM_ID } from '../../../app/program/idl';
import { address } from '../../../app/types';

/** A server whose next answer is `reply` (status, body; or no answer at all). */
async function server(): Promise<{
  url: string;
  reply: (status: number | 'silent', body?: string) => void;
  requests: Array<{ body: unknown; headers: http.IncomingHttpHeaders }>;
  close(): Promise<void>;
}> {
  let next: { status: number | 'silent'; body: string } = { status: 200, body: '{}' };
  const requests: Array<{ body: unknown; headers: http.IncomingHttpHeaders }> = [];
  const s = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      requests.push({ body: JSON.parse(text), headers: req.headers });
      if (next.status === 'silent') return;
      res.writeHead(next.status, { 'content-type': 'application/json' });
      res.end(next.body);
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/`,
    reply: (status, body = '') => (next = { status, body }),
    requests,
    close: () => {
      s.closeAllConnections();
      return new Promise((r) => s.close(() => r()));
    },
  };
}

const PROGRAM = address(ONCEPAY_PROGRAM_ID);

function opAccountData(): Buffer {
  const b = Buffer.alloc(OP_ACCOUNT_LEN);
  OP_ACCOUNT_DISCRIMINATOR.copy(b, 0);
  b.fill(7, 8, 40); // op id
  Keypair.generate().publicKey.toBuffer().copy(b, 40);
  Keypair.generate().publicKey.toBuffer().copy(b, 72);
  Keypair.generate().publicKey.toBuffer().copy(b, 104);
  b.writeBigUInt64LE(18446744073709551615n, 136);
  b.writeBigUInt64LE(42n, 144);
  b.writeUInt8(254, 152);
  return b;
}

const info = (value: unknown) => ({ context: { slot: 5 }, value });
const account = (owner: unknown, data: unknown) => ({
  owner,
  data,
  lamports: 1_000_000,
  executable: false,
  rentEpoch: 0,
  space: OP_ACCOUNT_LEN,
});

describe('app/payout lean JSON-RPC read and its checks', () => {
  let s: Awaited<ReturnType<typeof server>>;
  before(async () => (s = await server()));
  after(async () => s.close());

  it('posts one JSON-RPC request with the given headers and resolves to its result', async () => {
    const rpc = jsonRpc({ url: s.url, headers: { authorization: 'Bearer k' }, timeoutMs: 5_000 });
    s.reply(200, JSON.stringify({ jsonrpc: '2.0', id: 1, result: { context: { slot: 9 }, value: null } }));
    expect(await rpc('getAccountInfo', ['x', { encoding: 'base64' }])).to.deep.equal({
      context: { slot: 9 },
      value: null,
    });
    const req = s.requests.at(-1)!;
    expect(req.body).to.deep.include({
      jsonrpc: '2.0',
      method: 'getAccountInfo',
      params: ['x', { encoding: 'base64' }],
    });
    expect(req.headers.authorization).to.equal('Bearer k');
  });

  it('fails (never resolves to a value) with an RPC code on an HTTP error, a JSON-RPC error, a non-JSON or shapeless answer, and silence', async () => {
    const rpc = jsonRpc({ url: s.url, timeoutMs: 300 });
    const failure = async () => {
      try {
        await rpc('getAccountInfo', []);
      } catch (e) {
        expect(e).to.be.instanceOf(OncepayError);
        const { code, message, context } = e as OncepayError;
        return { code, message, context };
      }
      throw new Error('resolved');
    };
    s.reply(503, '{"result":{"value":null}}');
    expect(await failure())
      .to.include({ code: RPC_CODES.HTTP_STATUS })
      .and.property('message')
      .match(/HTTP 503/);
    s.reply(200, '{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"Node is unhealthy"}}');
    const e = await failure();
    expect([e.code, e.message, e.context]).to.deep.equal([
      RPC_CODES.ERROR_RESPONSE,
      `${RPC_CODES.ERROR_RESPONSE}: getAccountInfo: Node is unhealthy`,
      { method: 'getAccountInfo', rpcCode: -32005 },
    ]);
    s.reply(200, '<html>busy</html>');
    expect(await failure())
      .to.include({ code: RPC_CODES.MALFORMED_RESPONSE })
      .and.property('message')
      .match(/not JSON/);
    s.reply(200, '[1]');
    expect(await failure())
      .to.include({ code: RPC_CODES.MALFORMED_RESPONSE })
      .and.property('message')
      .match(/not a JSON-RPC object/);
    s.reply(200, '{"jsonrpc":"2.0","id":1}');
    expect(await failure())
      .to.include({ code: RPC_CODES.MALFORMED_RESPONSE })
      .and.property('message')
      .match(/neither result nor error/);
    s.reply('silent');
    expect(await failure())
      .to.include({ code: RPC_CODES.TIMEOUT })
      .and.property('message')
      .match(/no response within 300 ms/);
    const refused = jsonRpc({ url: 'http://127.0.0.1:9', timeoutMs: 300 });
    const net = await refused('getAccountInfo', []).then(
      () => undefined,
      (x: OncepayError) => x.code,
    );
    expect(net).to.equal(RPC_CODES.NETWORK);
    expect(() => jsonRpc({ url: 'ftp://example.com', timeoutMs: 1 }))
      .to.throw(OncepayError)
      .with.property('code', RPC_CODES.INVALID_ENDPOINT);
  });

  it('reads an op account: absent or foreign-owned is null, the program’s is decoded', () => {
    const data = opAccountData();
    expect(parseOpAccountInfo(info(null), PROGRAM)).to.equal(null);
    const foreign = account(PublicKey.default.toBase58(), [data.toString('base64'), 'base64']);
    expect(parseOpAccountInfo(info(foreign), PROGRAM)).to.equal(null);
    const op = parseOpAccountInfo(info(account(ONCEPAY_PROGRAM_ID, [data.toString('base64'), 'base64'])), PROGRAM)!;
    expect([op.amount, op.slot, op.bump, op.opId]).to.deep.equal([18446744073709551615n, 42n, 254, '07'.repeat(32)]);
    expect(op.merchant).to.equal(new PublicKey(data.subarray(40, 72)).toBase58());
  });

  it('refuses what it cannot check: no value, an owner that is no address, data not base64 as asked, a short account', () => {
    const data = opAccountData().toString('base64');
    const bad = [
      null,
      { context: { slot: 1 } },
      info('account'),
      info(account(42, [data, 'base64'])),
      info(account('not-an-address!', [data, 'base64'])),
      info(account(ONCEPAY_PROGRAM_ID, data)),
      info(account(ONCEPAY_PROGRAM_ID, [data, 'base58'])),
      info(account(ONCEPAY_PROGRAM_ID, ['@@@@', 'base64'])),
      info(account(ONCEPAY_PROGRAM_ID, [data.slice(1), 'base64'])),
    ];
    for (const r of bad)
      expect(() => parseOpAccountInfo(r, PROGRAM), JSON.stringify(r))
        .to.throw(OncepayError)
        .with.property('code', RPC_CODES.MALFORMED_RESPONSE);
    const short = info(account(ONCEPAY_PROGRAM_ID, [Buffer.alloc(40).toString('base64'), 'base64']));
    expect(() => parseOpAccountInfo(short, PROGRAM))
      .to.throw(OncepayError)
      .with.property('code', PAYOUT_CODES.OP_ACCOUNT_MALFORMED);
  });

  it('reads several op accounts in one getMultipleAccounts: an entry each, checked as one read; a bad answer is refused whole', async () => {
    const data = opAccountData();
    const mine = account(ONCEPAY_PROGRAM_ID, [data.toString('base64'), 'base64']);
    const foreign = account(PublicKey.default.toBase58(), [data.toString('base64'), 'base64']);
    const [p1, p2, p3] = [0, 1, 2].map(() => address(Keypair.generate().publicKey));
    const chain = createConnectionChain({ connection: new Connection(s.url) });
    s.reply(200, JSON.stringify({ jsonrpc: '2.0', id: 1, result: info([mine, null, foreign]) }));
    const got = await chain.opAccountsData([p1, p2, p3], PROGRAM, 'finalized');
    expect(s.requests.at(-1)!.body).to.deep.include({
      method: 'getMultipleAccounts',
      params: [[p1, p2, p3], { encoding: 'base64', commitment: 'finalized' }],
    });
    expect(got.map((d) => d && Buffer.from(d).equals(data))).to.deep.equal([true, null, null]);
    const bad = [
      info(null),
      info(mine),
      info([mine, null]),
      info([mine, null, null, null]),
      info([mine, null, account(ONCEPAY_PROGRAM_ID, [data.toString('base64'), 'base58'])]),
      info([mine, 'account', null]),
    ];
    for (const r of bad) {
      expect(() => parseOpAccountsInfo(r, PROGRAM, 3), JSON.stringify(r))
        .to.throw(OncepayError)
        .with.property('code', RPC_CODES.MALFORMED_RESPONSE);
    }
    s.reply(200, JSON.stringify({ jsonrpc: '2.0', id: 1, result: info([mine]) }));
    const e = await chain.opAccountsData([p1, p2], PROGRAM, 'finalized').catch((x: Error) => x);
    expect((e as Error).message).to.match(/getMultipleAccounts: malformed result \(1 accounts for 2 asked\)/);
    // Through web3.js (leanOpRead false) the same short answer is refused with the same code.
    const viaWeb3 = createConnectionChain({ connection: new Connection(s.url), leanOpRead: false });
    s.reply(200, JSON.stringify({ jsonrpc: '2.0', id: '1', result: info([mine]) })); // web3.js wants a string id
    const e2 = await viaWeb3.opAccountsData([p1, p2], PROGRAM, 'finalized').catch((x: Error) => x);
    expect(e2).to.be.instanceOf(OncepayError).with.property('code', RPC_CODES.MALFORMED_RESPONSE);
  });
});
