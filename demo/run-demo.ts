// `oncepay demo`: the whole story with real components — PostgreSQL, the localnet running the compiled program,
// the indexer (in process and as a real child process), the outbox, the merchant API and the payout SDK — ending
// in a table whose every line is checked against independent evidence. Stops everything it started on exit,
// unless --keep.
import { Connection, PublicKey } from '@solana/web3.js';
import * as fs from 'fs';
import * as path from 'path';
import { isOncepayError } from '../common/errors';
import { selectedProgramBinary } from '../common/program-binary';
import { projectRoot } from '../common/project-root';
import { logger } from '../common/log';
import { passwordFileOf, shellUrl } from '../db/local-server';
import { ONCEPAY_PROGRAM_ID } from '../app/program/idl';
import { createLedger } from '../indexer/ledger';
import { createIndexerMetrics } from '../indexer/metrics';
import { readOutboxStats } from '../indexer/outbox';
import { DECIMALS, setUpMerchantAndPay } from './act1-merchant-and-payments';
import { runIndexing } from './act2-indexing';
import { runFulfilment } from './act3-fulfilment';
import { runPayouts } from './act4-payouts';
import { gatherEvidence } from './act5-evidence';
import { createTeardown, SO_PATH, startDemoDb, startDemoLocalnet } from './infra';
import { checkInvariants } from './invariants';
import { serveDemoMetrics } from './metrics';
import { createNarrator } from './narrator';
import { createDemoPages } from './pages';
import { demoResult, renderTable } from './table';

export interface DemoOptions {
  keep: boolean;
  ci: boolean;
  json: boolean;
  /** Where the components' logs go (ONCEPAY_LOG_DIR, set by the caller); emptied first, named at the end. */
  logDir?: string;
}

/** The demo's log folder: one <component>.log per component (common/log.ts), fresh for each run. */
export function demoLogDir(): string {
  return path.join(projectRoot(), '.oncepay', 'demo', 'logs');
}

/** "component logs: <dir>/ (indexer.log, outbox.log, …)", the dir relative to the project when inside it. */
function logsLine(dir: string): string {
  let files: string[] = [];
  try {
    // A logger opens its file when made; only the files with lines are worth naming.
    files = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.log') && fs.statSync(path.join(dir, f)).size > 0)
      .sort();
  } catch {
    // No component logged anything: the folder may not exist.
  }
  const rel = path.relative(projectRoot(), dir);
  const shown = rel.startsWith('..') || path.isAbsolute(rel) ? dir : rel;
  return `component logs: ${shown}/ (${files.length > 0 ? files.join(', ') : 'none written'})`;
}

export const RESULT_PREFIX = 'DEMO_RESULT ';

/** Runs the story; resolves with the process exit code (0 = every guarantee it checked holds). */
export async function runDemo(o: DemoOptions): Promise<number> {
  const started = performance.now();
  if (o.logDir) {
    // Last run's logs go; this run's lines are appended by every process of the demo.
    fs.rmSync(o.logDir, { recursive: true, force: true });
    fs.mkdirSync(o.logDir, { recursive: true });
  }
  const say = createNarrator({ json: o.json });
  const log = logger('demo');
  const teardown = createTeardown();
  const children = new Map<number, () => void>();
  teardown.push('child processes', () => {
    for (const kill of children.values()) kill();
  });
  const trackChild = (pid: number | undefined, kill: () => void) => {
    if (pid !== undefined) children.set(pid, kill);
  };
  let stopping = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    say.raw(`\n${sig}: stopping everything the demo started…`);
    void teardown.run().then((errors) => {
      for (const e of errors) log.warn({ err: e }, 'teardown step failed');
      process.exit(130);
    });
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  let code: number;
  try {
    say.act('oncepay demo — payments observed once, fulfilled once, paid out once');
    const db = await startDemoDb(teardown, { keep: o.keep });
    say.step(
      `PostgreSQL ${db.dataDir ? `(embedded, data in ${db.dataDir}${db.ownServer ? '' : ', already running'})` : '(DATABASE_URL)'}: schema ${db.schema}, migrated`,
    );
    const net = await startDemoLocalnet(teardown, ONCEPAY_PROGRAM_ID);
    say.step(
      `localnet ${net.url}: LiteSVM running the ${selectedProgramBinary()} program (${path.relative(projectRoot(), SO_PATH())}) as ${ONCEPAY_PROGRAM_ID}`,
    );
    // The outbox gauges read the table at scrape time: the table is the truth.
    const metrics = createIndexerMetrics({
      outboxStats: () => readOutboxStats(db.pool),
    });
    const metricsServer = await serveDemoMetrics([metrics.registry]);
    teardown.push('metrics server', () => metricsServer.close());
    say.step(`metrics while it runs: ${metricsServer.url}`);
    const ledger = createLedger({ db: db.pool, log: logger('ledger'), metrics });
    const connection = new Connection(net.url, { commitment: 'confirmed', disableRetryOnRateLimit: true });

    say.act('1. Merchant, invoices, customers paying');
    const world = await setUpMerchantAndPay({ connection, programId: new PublicKey(ONCEPAY_PROGRAM_ID), ledger, say });

    say.act('2. The indexer: scanner, webhook redelivery, backfill, kill -9 and restart');
    const indexing = await runIndexing({
      world,
      net,
      db: db.pool,
      dbEnv: db.env,
      ledger,
      metrics,
      log: logger('indexer'),
      say,
      teardown,
      trackChild,
      interactive: process.stdout.isTTY === true && !o.ci && !o.json,
    });

    say.act('3. Fulfilment: the outbox delivers each paid invoice once');
    const fulfilment = await runFulfilment({ db: db.pool, metrics, log: logger('outbox'), say, teardown });

    say.act('4. Payouts: API idempotency, lost responses, expired blockhashes, racing workers');
    const payouts = await runPayouts({ world, net, db: db.pool, log: logger('payout'), say, teardown });
    const pages = await createDemoPages({ apiUrl: payouts.apiUrl, apiKey: payouts.apiKey, world, say });

    say.act('5. What the chain, the database and the merchant saw');
    const evidence = await gatherEvidence({ world, rpcUrl: net.url, db: db.pool, indexing, fulfilment, payouts });
    const result = demoResult(evidence, checkInvariants(evidence));
    const table = renderTable(result, DECIMALS);
    if (o.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    say.raw(table);
    if (o.ci) process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
    say.raw(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);
    if (o.logDir) say.raw(logsLine(o.logDir));
    code = result.verdict === 'HOLDS' ? 0 : 1;

    if (o.keep) {
      // The password stays in its file: the lines below read it when the person runs them.
      const dbUrl = shellUrl(db.url, db.dataDir ? passwordFileOf(db.dataDir) : null);
      const env = `DATABASE_URL=${dbUrl} ONCEPAY_DB_SCHEMA=${db.schema}`;
      say.act('Still running (--keep); Ctrl-C stops it');
      say.step(
        `localnet JSON-RPC: ${net.url}   (curl -s ${net.url} -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"getSlot"}')`,
      );
      say.step(
        `merchant API: ${payouts.apiUrl}/v1/payouts   (Authorization: Bearer ${payouts.apiKey}; OpenAPI at ${payouts.apiUrl}/openapi.json)`,
      );
      say.step(`checkout page: ${pages.checkoutUrl}`);
      say.step(
        `operator console: ${pages.consoleUrl}   (log in as an operator: ${env} node bin/oncepay operator add <name>)`,
      );
      say.step(`provider webhook: ${indexing.webhookUrl}   metrics: ${metricsServer.url}`);
      say.step(
        `psql: PGOPTIONS='-c search_path=${db.schema}' psql ${dbUrl} -c 'SELECT id, status, credited_amount FROM invoices'`,
      );
      say.step(`report: ${env} node bin/oncepay report`);
      await new Promise<never>(() => undefined); // until SIGINT / SIGTERM (onSignal exits)
    }
  } catch (e) {
    const msg = isOncepayError(e) ? `${e.code}: ${e.message}` : ((e as Error).stack ?? String(e));
    log.error({ err: (e as Error).message, code: (e as { code?: string }).code }, 'demo failed');
    say.raw(`\nguarantees: NOT ESTABLISHED — the demo failed before the final table\n  ${msg}`);
    if (o.logDir) say.raw(logsLine(o.logDir));
    if (o.ci)
      process.stdout.write(
        `${RESULT_PREFIX}${JSON.stringify({ verdict: 'BROKEN', broken: [`demo failed: ${(e as Error).message}`] })}\n`,
      );
    code = 1;
  } finally {
    if (!stopping) {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      const errors = await teardown.run();
      for (const e of errors) log.warn({ err: e }, 'teardown step failed');
    }
  }
  return code;
}
