// The whole story as a person runs it: `oncepay demo --ci` in a real child process (PostgreSQL from the test
// environment, the localnet running the compiled program, a SIGKILLed indexer child), and its final result's
// invariants read from the DEMO_RESULT line. Timings are not asserted.
import { expect } from 'chai';
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { resolveDatabaseUrl } from '../../db/local-server';
import { requireProgramSo } from '../../common/program-binary';
import type { DemoResult } from '../../demo/table';
import { GUARANTEES } from '../../demo/invariants';

const ROOT = path.resolve(__dirname, '..', '..');

let running: ChildProcess | undefined;

function runDemo(
  env: Record<string, string>,
  args: string[] = [],
  onStdout: (all: string) => void = () => undefined,
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = (running = spawn(process.execPath, [path.join(ROOT, 'bin', 'oncepay'), 'demo', '--ci', ...args], {
      cwd: ROOT,
      env: { ...process.env, ONCEPAY_FROM_SOURCE: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      onStdout(stdout);
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      running = undefined;
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The checkout link and the console address the demo printed (in act 4; again under --keep). */
function printedLinks(stdout: string): { checkout: string[]; console: string[] } {
  const all = (re: RegExp) => [...stdout.matchAll(re)].map((m) => m[1]);
  return {
    checkout: all(
      /checkout page(?: of INV-3001 \(created by POST \/v1\/invoices\))?: (http:\/\/127\.0\.0\.1:\d+\/pay\/[A-Za-z0-9_-]+)$/gm,
    ),
    console: all(/operator console: (http:\/\/127\.0\.0\.1:\d+\/console\/)/gm),
  };
}

describe('oncepay demo --ci', function () {
  this.timeout(300_000);
  let run: { code: number | null; signal: string | null; stdout: string; stderr: string };
  let result: DemoResult;

  // If the hook times out, the demo must not outlive the suite: SIGTERM makes it stop everything it started.
  after(() => {
    running?.kill('SIGTERM');
  });

  before(async function () {
    requireProgramSo();
    run = await runDemo({ DATABASE_URL: resolveDatabaseUrl() });
    const line = run.stdout.split('\n').find((l) => l.startsWith('DEMO_RESULT '));
    if (!line)
      throw new Error(
        `no DEMO_RESULT line; exit ${run.code}\nstdout:\n${run.stdout.slice(-4000)}\nstderr:\n${run.stderr.slice(-4000)}`,
      );
    result = JSON.parse(line.slice('DEMO_RESULT '.length)) as DemoResult;
  });

  it('exits 0 and names each guarantee of docs/guarantees.md it checked as holding, with every check passing', () => {
    expect(result.broken, result.broken.join('\n')).to.deep.equal([]);
    expect(result.verdict).to.equal('HOLDS');
    expect(result.guarantees.map((g) => [g.guarantee, g.holds])).to.deep.equal(
      Object.values(GUARANTEES).map((g) => [g, true]),
    );
    expect(run.stdout).to.match(/^Guarantees checked \(docs\/guarantees\.md\)$/m);
    expect(run.stdout).to.match(/^guarantees: HOLD \(6 of 6 sections\)$/m);
    expect(run.code, run.stderr.slice(-2000)).to.equal(0);
    expect(result.checks.length).to.be.greaterThan(20);
    expect(result.checks.every((c) => c.ok)).to.equal(true);
  });

  it('keeps the terminal for the story: no JSON log line on stdout or stderr; the components log to files', () => {
    // A JSON log line is an object with pino's level and time; the DEMO_RESULT line is prefixed, not one.
    const logLines = (text: string) =>
      text.split('\n').filter((l) => {
        try {
          const v = JSON.parse(l) as Record<string, unknown>;
          return typeof v === 'object' && v !== null && 'level' in v;
        } catch {
          return false;
        }
      });
    expect(logLines(run.stdout)).to.deep.equal([]);
    expect(logLines(run.stderr)).to.deep.equal([]);
    // The story's last lines name the folder and its files; the files hold the components' JSON lines.
    const dir = path.join(ROOT, '.oncepay', 'demo', 'logs');
    expect(run.stdout).to.match(/^component logs: \.oncepay\/demo\/logs\/ \(.*indexer\.log.*\)$/m);
    const byComponent = new Map<string, number>();
    for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.log') && f !== 'child-stderr.log')) {
      for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean)) {
        const v = JSON.parse(line) as { component?: string; level: number; pid: number };
        expect(v.level, `${f}: ${line}`).to.be.a('number');
        expect(`${(v.component ?? 'oncepay').split('.')[0]}.log`).to.equal(f);
        byComponent.set(v.component ?? 'oncepay', (byComponent.get(v.component ?? 'oncepay') ?? 0) + 1);
      }
    }
    // The webhook receiver (in the demo process) logs every delivery it held and checked.
    expect(byComponent.get('indexer') ?? 0, JSON.stringify([...byComponent])).to.be.greaterThan(0);
  });

  it("prints the checkout link of the invoice it created through the API and the console's address", () => {
    const links = printedLinks(run.stdout);
    expect(links.checkout, run.stdout).to.have.length(1);
    expect(links.console, run.stdout).to.have.length(1);
    // Both on the demo's API (one origin), the checkout link not naming the merchant's invoice id.
    expect(new URL(links.checkout[0]).origin).to.equal(new URL(links.console[0]).origin);
    expect(links.checkout[0]).not.to.include('INV-3001');
  });

  it('credits every invoice exactly its amount, and the chain agrees with credited + exceptions', () => {
    const e = result.evidence;
    expect(e.invoices.map((i) => i.id)).to.deep.equal(['INV-1001', 'INV-1002', 'INV-1003']);
    for (const inv of e.invoices) {
      expect(inv.status).to.equal('paid');
      expect(BigInt(inv.credited)).to.equal(BigInt(inv.expected));
      const exceptions = inv.exceptions.reduce((s, x) => s + BigInt(x.amount), 0n);
      expect(BigInt(inv.credited) + exceptions).to.equal(BigInt(inv.paidOnChain));
    }
    // One transaction paid INV-1002 and INV-1003: one signature, two receipts.
    const both = e.chainPayments.find((p) => p.transfers === 2);
    expect(both, 'a transaction with two transfers').to.not.equal(undefined);
    expect(e.receiptsPerSignature[both!.signature]).to.equal(2);
    for (const p of e.chainPayments) expect(e.receiptsPerSignature[p.signature]).to.equal(p.transfers);
  });

  it('records the second payment of INV-1001 as an exception carrying the money', () => {
    const e = result.evidence;
    const inv = e.invoices.find((i) => i.id === 'INV-1001')!;
    expect(BigInt(inv.paidOnChain)).to.equal(2n * BigInt(inv.expected));
    const kept = inv.exceptions.filter((x) => x.signature === e.secondPayment.signature);
    expect(kept).to.have.length(1);
    // The invoice was already paid when the second transfer arrived: the whole transfer is the excess.
    expect(kept[0].kind).to.equal('late_payment');
    expect(kept[0].amount).to.equal(e.secondPayment.amount);
  });

  it('absorbs duplicates from every delivery path, and survives the kill -9 mid-batch', () => {
    const e = result.evidence;
    const dup = Object.fromEntries(e.deliveriesBySource.map((d) => [d.source, d]));
    for (const s of ['scanner', 'webhook', 'backfill']) expect(dup[s]?.duplicates, s).to.be.greaterThan(0);
    for (const d of e.deliveriesBySource) expect(d.delivered).to.equal(d.inserted + d.duplicates);
    expect(e.webhook.some((w) => w.duplicateEvent)).to.equal(true);
    expect(e.crash.killedBy).to.equal('SIGKILL');
    expect(e.crash.receiptsAfterKill).to.equal(0);
    expect(e.crash.checkpointAfterKill).to.equal(e.crash.checkpointBefore);
    expect(e.crash.restartExitCode).to.equal(0);
    expect(e.crash.receiptsAfterRestart).to.equal(1);
  });

  it('delivers each fulfilment once per invoice with one Idempotency-Key; the failed one is retried with the same key', () => {
    const e = result.evidence;
    for (const inv of e.invoices) {
      expect(inv.fulfilmentIds).to.have.length(1);
      expect(inv.outboxStates).to.deep.equal(['delivered']);
      expect(inv.applied).to.equal(1);
      expect(new Set(inv.deliveries.map((d) => d.key))).to.deep.equal(new Set(inv.fulfilmentIds));
    }
    const failed = e.invoices.find((i) => i.id === e.failOnceInvoice)!;
    expect(failed.deliveries.map((d) => d.status)).to.deep.equal([503, 200]);
    expect(failed.deliveries[0].key).to.equal(failed.deliveries[1].key);
  });

  it('answers the replayed API request with the original and the conflicting one with 409', () => {
    const api = result.evidence.api;
    const replay = api.find((a) => a.replayed)!;
    const original = api.find((a) => a.idempotencyKey === replay.idempotencyKey && a.status === 201 && !a.replayed)!;
    expect(replay.rowId).to.equal(original.rowId);
    expect(api.some((a) => a.status === 409 && a.code === 'IDEMPOTENCY_CONFLICT')).to.equal(true);
    expect(result.evidence.payoutRows).to.equal(2);
  });

  it('executes each payout on chain exactly once, despite a dropped response, an expired blockhash and a racing worker', () => {
    const e = result.evidence;
    expect(e.payouts).to.have.length(2);
    let paid = 0n;
    for (const p of e.payouts) {
      expect(p.state).to.equal('succeeded');
      expect(p.successfulOpTransactions).to.deep.equal([p.signature]);
      expect(p.opAccount?.amount).to.equal(p.amount);
      expect(p.opAccount?.recipient).to.equal(p.recipient);
      expect(p.recipientBalance).to.equal(p.amount);
      expect(p.workerSignatures).to.deep.equal([p.signature, p.signature]);
      paid += BigInt(p.amount);
    }
    expect(BigInt(e.vault.funded) - paid).to.equal(BigInt(e.vault.balance));
    const expired = e.payouts.find((p) => p.payoutId === 'payout-2002')!;
    expect(expired.attempts.map((a) => a.status)).to.deep.equal(['expired', 'landed']);
  });
});

describe('oncepay demo --ci --keep', function () {
  this.timeout(300_000);

  after(() => {
    running?.kill('SIGTERM');
  });

  it('leaves the checkout page and the console serving (200) until it is stopped', async () => {
    requireProgramSo();
    const answers: Array<{ url: string; status: number; finalUrl: string; text: string }> = [];
    let asked = false;
    const run = await runDemo({ DATABASE_URL: resolveDatabaseUrl() }, ['--keep'], (stdout) => {
      // The keep section's lines: the checkout link, then the console line with how to add an operator.
      const kept = stdout.slice(stdout.indexOf('Still running (--keep)'));
      const links = printedLinks(kept);
      if (asked || !stdout.includes('Still running (--keep)') || !/operator add <name>\)$/m.test(kept)) return;
      asked = true;
      void (async () => {
        for (const url of [links.checkout[0], links.console[0]]) {
          const res = await fetch(url);
          answers.push({ url, status: res.status, finalUrl: res.url, text: await res.text() });
        }
      })()
        .catch((e: Error) => answers.push({ url: '', status: 0, finalUrl: '', text: e.message }))
        .finally(() => running?.kill('SIGTERM'));
    });
    expect(asked, `the keep section never printed both links:\n${run.stdout.slice(-3000)}`).to.equal(true);
    expect(answers.map((a) => [a.status, a.text.slice(0, 200)])).to.have.length(2);
    const [checkout, console] = answers;
    expect(checkout.status, checkout.text).to.equal(200);
    expect(checkout.text).to.include('Pay oncepay demo shop');
    expect(checkout.text.replace(/<[^>]+>/g, '')).to.include('15 tokens of mint'); // as a reader sees it, tags aside
    // The console answers its login page to a stranger.
    expect(console.status, console.text).to.equal(200);
    expect(console.finalUrl).to.match(/\/console\/login$/);
    // Stopped by SIGTERM: it stopped everything it started and exited.
    expect(run.signal ?? String(run.code)).to.match(/^(130|SIGTERM)$/);
  });
});
