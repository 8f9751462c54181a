// Nothing a stranger sends grows the webhook receiver: the real `oncepay indexer webhook` process (started with
// --expose-gc and a preload that runs a full GC on SIGUSR2, gc-on-signal.js) takes thousands of junk requests —
// unauthenticated under thousands of made-up provider names, malformed signatures, wrong HMACs, oversized bodies,
// malformed provider names, unknown routes — and afterwards its metric series are the same set, its heap after a full
// GC is the same within a stated tolerance, nothing is stored, and its log did not grow by a line per request.
import { expect } from 'chai';
import { ChildProcess, spawn } from 'child_process';
import * as crypto from 'crypto';
import * as http from 'http';
import * as path from 'path';
import { createTestDb, TestDb } from '../../../testkit/test-db';

const SECRET = 'whsec-junk-0123456789';
const BIN = path.resolve(__dirname, '../../../bin/oncepay');
const PRELOAD = path.join(__dirname, 'gc-on-signal.js');
/**
 * The heap after a full GC moves by up to ~1.1 MiB between quiet moments of this process (measured here over four
 * floods of 12,000 in a row: 51.1, 52.1, 52.2, 52.2, 51.2 MB, no trend). A label per made-up name grew it by ~3 MiB
 * per 5,000 names before; this flood makes 8,000 of them.
 */
const HEAP_TOLERANCE_BYTES = 2 * 1024 * 1024;
/**
 * Series whose label values follow the runtime's own state, each from a small fixed set, not the requests: the kinds
 * of active handles, and the kinds of garbage collection that have run (minor, major, incremental, weakcb).
 */
const RUNTIME_VARYING = /^nodejs_(active_(handles|requests|resources)|gc_duration_seconds)/;

describe('indexer/source webhook: thousands of junk requests grow neither its metrics nor its heap (real process)', function () {
  this.timeout(600_000);
  let db: TestDb;
  let child: ChildProcess;
  let stderr = '';
  let base: string;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 24 });

  before(async () => {
    db = await createTestDb('webhook_junk');
    child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--require',
        PRELOAD,
        BIN,
        'indexer',
        'webhook',
        '--port',
        '0',
        '--cluster',
        'junk',
        '--provider',
        'helius',
        '--rpc',
        'http://127.0.0.1:9', // never asked: no junk request gets as far as a signature to check
      ],
      {
        env: {
          ...process.env,
          ...db.env,
          ONCEPAY_FROM_SOURCE: '1',
          NODE_ENV: 'test',
          ONCEPAY_LOG_LEVEL: 'warn',
          ONCEPAY_WEBHOOK_SECRET: SECRET,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stderr!.on('data', (d) => (stderr += d));
    base = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)).listening);
      });
      child.on('exit', (code) => reject(new Error(`webhook exited ${code}: ${stderr}`)));
    });
  });
  after(async () => {
    agent.destroy();
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
    }
    await db?.drop();
  });

  /** One request; resolves with its status (a connection the server closes early counts as its answer). */
  function request(o: { method: string; path: string; headers?: Record<string, string | number>; body?: Buffer }) {
    return new Promise<number>((resolve, reject) => {
      const req = http.request(`${base}${o.path}`, { method: o.method, headers: o.headers, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        // An oversized body's request is still being written when the answer comes: stop writing.
        if (o.headers?.['content-length'] && !o.body) req.destroy();
      });
      req.on('error', (e: NodeJS.ErrnoException) =>
        e.code === 'ECONNRESET' || e.code === 'EPIPE' ? resolve(-1) : reject(e),
      );
      if (o.body) req.end(o.body);
      else if (o.headers?.['content-length'])
        req.write(Buffer.alloc(1024)); // the rest never comes
      else req.end();
    });
  }

  const name = () => `p${crypto.randomBytes(8).toString('hex')}`;
  const small = Buffer.from(JSON.stringify({ signatures: ['5'.repeat(88)] }));
  const now = () => Math.floor(Date.now() / 1000);
  /** The junk, by kind: each a request a stranger can send without the secret, and the answer it gets. */
  const kinds: Array<{ kind: string; status: number; send: () => Promise<number> }> = [
    {
      kind: 'no credentials, a new made-up provider name each time',
      status: 401,
      send: () =>
        request({
          method: 'POST',
          path: `/v1/webhooks/${name()}`,
          headers: { 'content-type': 'application/json' },
          body: small,
        }),
    },
    {
      kind: 'a malformed signature header',
      status: 401,
      send: () =>
        request({
          method: 'POST',
          path: `/v1/webhooks/${name()}`,
          headers: { 'content-type': 'application/json', 'x-oncepay-signature': 't=x,v1=nothex' },
          body: small,
        }),
    },
    {
      kind: 'a well-formed signature with a wrong HMAC',
      status: 401,
      send: () =>
        request({
          method: 'POST',
          path: `/v1/webhooks/helius`,
          headers: {
            'content-type': 'application/json',
            'x-oncepay-signature': `t=${now()},v1=${crypto.randomBytes(32).toString('hex')}`,
          },
          body: small,
        }),
    },
    {
      kind: 'an oversized body (2 MiB announced; the limit is 1 MiB)',
      status: 413,
      send: () =>
        request({
          method: 'POST',
          path: `/v1/webhooks/${name()}`,
          headers: {
            'content-type': 'application/json',
            'content-length': 2 * 1024 * 1024,
            'x-oncepay-signature': `t=${now()},v1=${crypto.randomBytes(32).toString('hex')}`,
          },
        }),
    },
    {
      kind: 'a malformed provider name',
      status: 400,
      send: () =>
        request({
          method: 'POST',
          path: `/v1/webhooks/BAD_${name().toUpperCase()}`,
          headers: { 'content-type': 'application/json' },
          body: small,
        }),
    },
    {
      kind: 'an unknown route',
      status: 404,
      send: () => request({ method: 'GET', path: `/${name()}/${name()}` }),
    },
  ];

  /** `count` junk requests, the kinds in turn, `parallel` at a time; the answers each kind got. */
  async function flood(count: number, parallel = 24): Promise<Record<string, Set<number>>> {
    const seen: Record<string, Set<number>> = {};
    let next = 0;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        for (let i = next++; i < count; i = next++) {
          const k = kinds[i % kinds.length];
          (seen[k.kind] ??= new Set()).add(await k.send());
        }
      }),
    );
    return seen;
  }

  /** The process's heap in use after a full GC (its preload answers SIGUSR2 on stderr). */
  async function heapAfterGc(): Promise<number> {
    const from = stderr.length;
    child.kill('SIGUSR2');
    for (;;) {
      const m = /\{"gcHeapUsed":(\d+)\}/.exec(stderr.slice(from));
      if (m) return Number(m[1]);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The /metrics series (name and labels), without those that follow the runtime's handles. */
  async function series(): Promise<string[]> {
    const text = await (await fetch(`${base}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#') && !RUNTIME_VARYING.test(l))
      .map((l) => l.slice(0, l.lastIndexOf(' ')))
      .sort();
  }

  it('12,000 junk requests: the same metric series, the heap flat within 2 MiB after a full GC, nothing stored, a bounded log', async () => {
    // Warm up (every code path compiled, every fixed label value born, the runtime's pools at their size), then the
    // baseline.
    const warm = await flood(6_000);
    for (const k of kinds) expect([...warm[k.kind]], k.kind).to.include(k.status);
    await heapAfterGc();
    const heapBefore = await heapAfterGc();
    const seriesBefore = await series();
    const logBefore = stderr.split('\n').length;

    const seen = await flood(12_000);
    for (const k of kinds) {
      // An oversized request may also see its connection closed before it could read the 413.
      const answers = [...seen[k.kind]].filter((s) => s !== -1);
      expect(answers, k.kind).to.deep.equal([k.status]);
    }
    await heapAfterGc();
    const heapAfter = await heapAfterGc();
    const seriesAfter = await series();

    expect(seriesAfter, 'the same metric series (a label never takes a name a sender chose)').to.deep.equal(
      seriesBefore,
    );
    expect(seriesAfter.some((s) => s.startsWith('oncepay_webhook_deliveries_total{provider="unknown"'))).to.equal(true);
    expect(
      heapAfter - heapBefore,
      `heap after GC: ${heapBefore} → ${heapAfter} bytes (tolerance ${HEAP_TOLERANCE_BYTES})`,
    ).to.be.below(HEAP_TOLERANCE_BYTES);
    for (const t of ['webhook_hints', 'webhook_events', 'webhook_dead_letters'])
      expect((await db.pool.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n, t).to.equal(0);
    // One warning per kind of refusal per 10 s at most (common/throttled-log.ts), never one per request.
    const logLines = stderr.split('\n').length - logBefore;
    expect(logLines, 'log lines written for 12,000 refusals').to.be.below(60);
  });
});
