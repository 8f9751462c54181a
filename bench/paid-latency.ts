// From a payment's finalized slot to the checkout page showing *paid* (not a test; `make bench`), beside the time
// from the same slot to the ledger's credit: the page should add little to the ledger's own latency.
// N invoices (BENCH_PAID_N or --count, default 300) created through the merchant API (`POST /v1/invoices`; the API is
// buildApiApp with checkout served, run as `oncepay payout serve` in its own process, or with BENCH_PAID_API=inline
// in this one), each paid in full on `oncepay localnet` (its own process, serving geyser) by a Solana Pay transfer
// carrying the invoice's reference key, PAYERS at a time, and credited at `finalized` by `oncepay indexer stream
// --grpc` (its own process, the real client) into PostgreSQL.
// Three moments per invoice, all read on this process's clock (performance.now()):
//   finalized — the node's rootNotification (websocket `rootSubscribe`, the node's own finalized slot) that first
//               reaches the slot holding the payment (the slot the ledger's receipt records);
//   credit    — the `oncepay_invoice_changed` NOTIFY of the invoice (migration 0301: sent when the ledger's credit
//               turns it paid, delivered at that transaction's commit), received on a LISTEN connection of ours;
//   page      — a client of the page's event stream (`/pay/<checkout id>/events`, opened before the payment and read
//               as the page's script reads it: testkit/checkout-events.ts) receiving `status: paid`.
// Prints p50/p99/max of finalized→credit and finalized→page side by side, and the page's extra (page − credit).
// BENCH_PAID_BROWSER=K (default 0) also opens the first K checkout pages in chromium (testkit/browser.ts): the moment
// the page's own script sets `data-status="paid"` (a MutationObserver calling back into this process), beside the
// stream client's moment for the same invoice, shows the client measures what the page shows.
// Exits non-zero unless every invoice is credited exactly its amount by its one transfer and every page saw paid.
// Slots of BENCH_PAID_SLOT_MS (default 100), finality BENCH_PAID_DEPTH slots deep (default 4). Uses DATABASE_URL,
// else the embedded server (stopped at the end if this run started it); its own schema, dropped at the end.
import { ChildProcess, spawn } from 'child_process';
import * as path from 'path';
import type { PoolClient } from 'pg';
import type { Browser } from 'puppeteer-core';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { createAssociatedTokenAccountIdempotentInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { buildApiApp } from '../app/api/build-api-app';
import { hashApiKey } from '../app/api/api-key-auth';
import { mintDecimalsFromChain } from '../app/invoice/mint-decimals-rpc';
import { ledgerInvoiceId } from '../app/invoice/prepare';
import { insertMerchant } from '../app/merchant/store';
import { address } from '../app/types';
import { INVOICE_CHANGED_CHANNEL } from '../app/invoice/invoice-events';
import { freePort } from '../common/free-port';
import { OncepayError, BENCH_CODES } from '../common/errors';
import { airdrop, mintWithSource, payInstruction, send, waitFinalized } from '../testkit/cluster';
import { launchBrowser, openPage } from '../testkit/browser';
import { CheckoutEvents, openCheckoutEvents } from '../testkit/checkout-events';
import { spawnLocalnet, LocalnetProcess } from '../testkit/localnet-process';
import { createTestDb, leavingServerAsFound, TestDb } from '../testkit/test-db';
import { until } from '../testkit/until';
import { quantile } from '../testkit/quantile';
import { machineLabel } from './machine';

function countArg(): number {
  const i = process.argv.indexOf('--count');
  const n = Number(i >= 0 ? process.argv[i + 1] : (process.env.BENCH_PAID_N ?? 300));
  if (!Number.isInteger(n) || n < 1)
    throw new OncepayError(BENCH_CODES.SETUP_FAILED, `--count / BENCH_PAID_N must be a positive integer, not ${n}`);
  return n;
}

const N = countArg();
const SLOT_MS = Number(process.env.BENCH_PAID_SLOT_MS ?? 100);
const DEPTH = Number(process.env.BENCH_PAID_DEPTH ?? 4);
/** Payments in flight at once (each sent, then confirmed, before its payer sends the next). */
const PAYERS = 4;
/** Invoices created through the API at once. */
const CREATORS = 8;
const DECIMALS = 6;
const CLUSTER = 'bench-paid';
const KEY = 'bench-paid-latency-api-key-0001';
const BIN = path.resolve(__dirname, '../bin/oncepay');
/** Where the API runs: `process` (`oncepay payout serve`, the deployed topology) or `inline` (buildApiApp here). */
const API = process.env.BENCH_PAID_API ?? 'process';
/** Checkout pages also opened in chromium (0: none, and chromium is not needed). */
const BROWSER = Number(process.env.BENCH_PAID_BROWSER ?? 0);
if (API !== 'process' && API !== 'inline')
  throw new OncepayError(BENCH_CODES.SETUP_FAILED, `BENCH_PAID_API must be process or inline, not ${API}`);

/** One invoice as the API answered it, and the moments measured for it (ms, this process's clock). */
interface Invoice {
  invoiceId: string;
  ledgerId: string;
  checkoutUrl: string;
  reference: PublicKey;
  amount: bigint;
  signature?: string;
  events?: CheckoutEvents;
  creditAt?: number;
  pageAt?: number;
  /** When the page in chromium turned paid (BENCH_PAID_BROWSER); `browser` says whether it is open there. */
  browser?: boolean;
  browserAt?: number;
  /** A status the page showed other than open and paid (an exception, an expiry): the run fails at once. */
  unexpected?: string;
}

/** What the run set up: the chain's parties, the API and where it listens. */
interface World {
  connection: Connection;
  payer: Keypair;
  mint: PublicKey;
  source: PublicKey;
  /** The merchant's receiving wallet's associated token account: where every invoice is paid. */
  ata: PublicKey;
  merchantId: string;
  api: Api;
}

/** The merchant API, listening on loopback at `base`. */
interface Api {
  base: string;
  stop(): Promise<void>;
}

/** buildApiApp in this process: the API shares this process's event loop with the clients and the payers. */
async function inlineApi(db: TestDb, connection: Connection): Promise<Api> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const app = await buildApiApp({
    db: db.pool,
    invoices: { readMintDecimals: mintDecimalsFromChain(connection), publicUrl: base },
  });
  await app.listen({ host: '127.0.0.1', port });
  return { base, stop: () => app.close() };
}

/** `oncepay payout serve` (an API only: ONCEPAY_RPC_URL reads the mints' decimals, no worker pool). */
async function processApi(db: TestDb, net: LocalnetProcess): Promise<Api> {
  const child = spawn(process.execPath, [BIN, 'payout', 'serve', '--port', '0', '--no-console'], {
    env: { ...process.env, ...db.env, ONCEPAY_RPC_URL: net.rpc, ONCEPAY_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve((JSON.parse(out.slice(0, nl)) as { url: string }).url);
    });
    void exited.then(() => reject(new OncepayError(BENCH_CODES.SETUP_FAILED, 'payout serve exited')));
  });
  return {
    base,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function setUp(db: TestDb, net: LocalnetProcess): Promise<World> {
  const connection = new Connection(net.rpc, { commitment: 'confirmed', wsEndpoint: net.ws });
  const payer = Keypair.generate();
  await airdrop(connection, payer.publicKey, 100_000_000_000);
  const { mint, source } = await mintWithSource(connection, payer, DECIMALS, 10n ** 15n);
  const wallet = Keypair.generate().publicKey;
  const ata = getAssociatedTokenAddressSync(mint, wallet);
  const { slot } = await send(
    connection,
    [createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, wallet, mint)],
    [payer],
  );
  await waitFinalized(connection, slot); // the API reads the mint's decimals at `finalized`
  const pk = () => address(Keypair.generate().publicKey);
  const merchant = await insertMerchant(db.pool, {
    name: 'bench-paid',
    apiKeyHash: hashApiKey(KEY),
    programId: pk(),
    merchantAddress: pk(),
    vault: pk(),
    receivingAddress: address(wallet),
  });
  const api = API === 'inline' ? await inlineApi(db, connection) : await processApi(db, net);
  return { connection, payer, mint, source, ata, merchantId: merchant.id, api };
}

/** N invoices through `POST /v1/invoices`, CREATORS at a time; amounts differ, so a mixed-up credit shows. */
async function createInvoices(w: World): Promise<Invoice[]> {
  const invoices: Invoice[] = new Array(N);
  let next = 0;
  const creator = async () => {
    for (let i = next++; i < N; i = next++) {
      const invoiceId = `paid-${i}`;
      const amount = BigInt(1_000_000 + i);
      const res = await fetch(`${w.api.base}/v1/invoices`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': invoiceId, 'content-type': 'application/json' },
        body: JSON.stringify({ invoiceId, amount: String(amount), mint: w.mint.toBase58() }),
      });
      if (res.status !== 201)
        throw new OncepayError(BENCH_CODES.SETUP_FAILED, `POST /v1/invoices ${invoiceId}: ${res.status}`);
      const body = (await res.json()) as { checkoutUrl: string; reference: string; amount: string };
      if (BigInt(body.amount) !== amount)
        throw new OncepayError(BENCH_CODES.SETUP_FAILED, `${invoiceId}: amount ${body.amount}, asked ${amount}`);
      invoices[i] = {
        invoiceId,
        ledgerId: ledgerInvoiceId(w.merchantId, invoiceId),
        checkoutUrl: new URL(body.checkoutUrl, w.api.base).toString(), // a path when the API has no public URL
        reference: new PublicKey(body.reference),
        amount,
      };
    }
  };
  await Promise.all(Array.from({ length: CREATORS }, creator));
  return invoices;
}

/** Every invoice's page stream opened and showing `open`; `paid` stamps `pageAt` the moment it is parsed. */
async function openPages(invoices: Invoice[]): Promise<void> {
  for (const inv of invoices) {
    inv.events = await openCheckoutEvents(`${inv.checkoutUrl}/events`, (s) => {
      if (s === 'paid' && inv.pageAt === undefined) inv.pageAt = performance.now();
      else if (s !== 'open' && s !== 'paid') inv.unexpected ??= s;
    });
    if (inv.events.res.statusCode !== 200)
      throw new OncepayError(BENCH_CODES.SETUP_FAILED, `${inv.checkoutUrl}/events: ${inv.events.res.statusCode}`);
  }
  await Promise.all(invoices.map((inv) => inv.events!.next('open')));
}

/** Run in a checkout page: calls the exposed `benchPaid` when the page's script sets its status to paid. */
const WATCH_PAID = `(() => {
  const main = document.querySelector('main[data-checkout]');
  new MutationObserver(() => {
    if (main.getAttribute('data-status') === 'paid') window.benchPaid();
  }).observe(main, { attributes: true, attributeFilter: ['data-status'] });
})()`;

/** The first BROWSER invoices' pages in chromium, each in its own context (its own connections to the API);
 * the page's script setting data-status="paid" stamps `browserAt` here. Undefined when BROWSER is 0. */
async function openBrowserPages(invoices: Invoice[]): Promise<Browser | undefined> {
  if (BROWSER <= 0) return undefined;
  const browser = await launchBrowser();
  for (const inv of invoices.slice(0, BROWSER)) {
    const { page } = await openPage(browser, { isolated: true });
    await page.exposeFunction('benchPaid', () => {
      inv.browserAt ??= performance.now();
    });
    await page.goto(inv.checkoutUrl);
    await page.waitForSelector('main[data-status="open"]');
    await page.evaluate(WATCH_PAID); // a string: this project's TypeScript has no DOM types
    inv.browser = true;
  }
  return browser;
}

/** A LISTEN connection of ours: the first notification of an invoice (its credit's commit) stamps `creditAt`. */
async function listenForCredits(db: TestDb, invoices: Invoice[]): Promise<PoolClient> {
  const byLedgerId = new Map(invoices.map((inv) => [inv.ledgerId, inv]));
  const client = await db.pool.connect();
  client.on('notification', (n) => {
    const at = performance.now();
    if (n.channel !== INVOICE_CHANGED_CHANNEL || !n.payload) return;
    const space = n.payload.indexOf(' ');
    if (n.payload.slice(0, space) !== db.schema) return;
    const inv = byLedgerId.get(n.payload.slice(space + 1));
    if (inv && inv.creditAt === undefined) inv.creditAt = at;
  });
  await client.query(`LISTEN ${INVOICE_CHANGED_CHANNEL}`);
  return client;
}

/** The node's finalized slot as it moves (rootSubscribe), each with the moment its notification arrived. */
function watchRoots(connection: Connection): { roots: Array<[number, number]>; stop(): Promise<void> } {
  const roots: Array<[number, number]> = [];
  const id = connection.onRootChange((root) => roots.push([root, performance.now()]));
  return { roots, stop: () => connection.removeRootChangeListener(id) };
}

/** `oncepay indexer stream --grpc` from the node's finalized slot, ready once it applied one (its checkpoint). */
async function startStream(db: TestDb, net: LocalnetProcess, connection: Connection): Promise<ChildProcess> {
  const fromSlot = await connection.getSlot('finalized');
  const child = spawn(
    process.execPath,
    [BIN, 'indexer', 'stream', '--grpc', net.grpc!, '--cluster', CLUSTER, '--from-slot', String(fromSlot)],
    { env: { ...process.env, ...db.env, ONCEPAY_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  await until(
    'the stream source to apply its first finalized slot',
    async () => {
      if (child.exitCode !== null) throw new OncepayError(BENCH_CODES.SETUP_FAILED, 'indexer stream exited');
      return (await db.pool.query(`SELECT 1 FROM checkpoints WHERE cluster = $1 AND source = 'stream'`, [CLUSTER]))
        .rowCount;
    },
    { timeoutMs: 120_000, intervalMs: 20 },
  );
  return child;
}

/** Pays every invoice in full, PAYERS at a time, each a transfer to the merchant's account with its reference. */
async function payAll(w: World, invoices: Invoice[]): Promise<void> {
  let next = 0;
  const payer = async () => {
    for (let i = next++; i < invoices.length; i = next++) {
      const inv = invoices[i];
      const ix = payInstruction({
        from: w.source,
        mint: w.mint,
        to: w.ata,
        owner: w.payer.publicKey,
        amount: inv.amount,
        decimals: DECIMALS,
        reference: inv.reference,
      });
      inv.signature = (await send(w.connection, [ix], [w.payer])).signature;
    }
  };
  await Promise.all(Array.from({ length: PAYERS }, payer));
}

/** Waits (up to 5 minutes) until every page saw paid and every credit was notified; fails at once when a page shows
 * anything else than open or paid, and at the end with the counts that did not. */
async function waitForPages(invoices: Invoice[]): Promise<void> {
  const missing = () =>
    invoices.filter(
      (inv) => inv.pageAt === undefined || inv.creditAt === undefined || (inv.browser && inv.browserAt === undefined),
    );
  const done = async () => {
    const odd = invoices.find((inv) => inv.unexpected);
    if (odd) throw new OncepayError(BENCH_CODES.CHECK_FAILED, `${odd.invoiceId}: the page showed ${odd.unexpected}`);
    return missing().length === 0;
  };
  try {
    await until('every page to show paid', done, { timeoutMs: 300_000, intervalMs: 50 });
  } catch (e) {
    if (e instanceof OncepayError) throw e;
    const m = missing();
    throw new OncepayError(
      BENCH_CODES.CHECK_FAILED,
      `${m.filter((x) => x.pageAt === undefined).length} pages never saw paid, ` +
        `${m.filter((x) => x.creditAt === undefined).length} credits never notified, ` +
        `${m.filter((x) => x.browser && x.browserAt === undefined).length} chromium pages never paid ` +
        `(first: ${m[0].invoiceId})`,
    );
  }
}

/** Exact totals: each invoice's one receipt is its own transfer of its amount, each is paid with exactly that
 * credited, nothing else was credited and no exception was raised. Returns each invoice's payment slot. */
async function checkCredits(db: TestDb, invoices: Invoice[]): Promise<Map<string, number>> {
  const { rows } = await db.pool.query<{ signature: string; invoice_id: string; amount: string; slot: string }>(
    `SELECT signature, invoice_id, amount::text AS amount, slot::text AS slot FROM receipts WHERE cluster = $1`,
    [CLUSTER],
  );
  if (rows.length !== invoices.length)
    throw new OncepayError(BENCH_CODES.CHECK_FAILED, `${rows.length} receipts, ${invoices.length} transfers`);
  const byInvoice = new Map(rows.map((r) => [r.invoice_id, r]));
  const slots = new Map<string, number>();
  for (const inv of invoices) {
    const r = byInvoice.get(inv.ledgerId);
    if (!r || r.signature !== inv.signature || BigInt(r.amount) !== inv.amount)
      throw new OncepayError(BENCH_CODES.CHECK_FAILED, `${inv.invoiceId}: receipt ${JSON.stringify(r ?? null)}`);
    slots.set(inv.ledgerId, Number(r.slot));
  }
  const { rows: paid } = await db.pool.query<{ n: number; credited: string; expected: string; exceptions: number }>(
    `SELECT count(*) FILTER (WHERE status = 'paid' AND credited_amount = expected_amount)::int AS n,
            sum(credited_amount)::text AS credited, sum(expected_amount)::text AS expected,
            (SELECT count(*)::int FROM exceptions) AS exceptions
       FROM invoices WHERE id = ANY($1)`,
    [invoices.map((inv) => inv.ledgerId)],
  );
  const expected = invoices.reduce((a, inv) => a + inv.amount, 0n);
  const p = paid[0];
  if (p.n !== invoices.length || BigInt(p.credited) !== expected || BigInt(p.expected) !== expected || p.exceptions)
    throw new OncepayError(
      BENCH_CODES.CHECK_FAILED,
      `${p.n} of ${invoices.length} invoices credited exactly; credited ${p.credited}, expected ${expected}; ` +
        `${p.exceptions} exceptions`,
    );
  return slots;
}

/** When the node's finalized slot first reached `slot` (its first root notification at or above it). */
function finalizedAt(roots: Array<[number, number]>, slot: number): number {
  const hit = roots.find(([root]) => root >= slot);
  if (!hit) throw new OncepayError(BENCH_CODES.CHECK_FAILED, `no root notification reached slot ${slot}`);
  if (hit === roots[0] && roots[0][0] > slot)
    throw new OncepayError(BENCH_CODES.CHECK_FAILED, `slot ${slot} was final before the first root notification`);
  return hit[1];
}

interface Figures {
  credit: number[];
  page: number[];
  extra: number[];
  /** Chromium's page turning paid − the stream client seeing paid, for the invoices open in chromium. */
  browser: number[];
}

function figures(invoices: Invoice[], roots: Array<[number, number]>, slots: Map<string, number>): Figures {
  const f: Figures = { credit: [], page: [], extra: [], browser: [] };
  for (const inv of invoices) {
    const fin = finalizedAt(roots, slots.get(inv.ledgerId)!);
    f.credit.push(inv.creditAt! - fin);
    f.page.push(inv.pageAt! - fin);
    f.extra.push(inv.pageAt! - inv.creditAt!);
    if (inv.browser) f.browser.push(inv.browserAt! - inv.pageAt!);
  }
  for (const xs of [f.credit, f.page, f.extra, f.browser]) xs.sort((a, b) => a - b);
  return f;
}

function printFigures(f: Figures, seconds: number): void {
  const ms = (x: number) => `${x.toFixed(0).padStart(6)} ms`;
  console.log(
    `finalized slot → checkout page shows paid (machine ${machineLabel()}; API ${API === 'inline' ? 'in this process' : 'in its own process'}, ` +
      `localnet in its own process, ${SLOT_MS} ms ` +
      `slots, finality ${DEPTH} slots deep; indexer stream --grpc at finalized; ${N} invoices through the API, ` +
      `${PAYERS} payments in flight, paid in ${seconds.toFixed(1)} s; every invoice credited exactly its amount, ` +
      `every page saw paid):`,
  );
  console.log(`  finalized: the node's rootNotification; credit: the invoice's NOTIFY at the credit's commit;`);
  console.log(`  page: status "paid" on the page's event stream (/pay/<id>/events)`);
  console.log(`                          p50        p99        max`);
  const row = (name: string, xs: number[]) =>
    console.log(`  ${name.padEnd(20)} ${ms(quantile(xs, 0.5))} ${ms(quantile(xs, 0.99))} ${ms(xs[xs.length - 1])}`);
  row('finalized → credit', f.credit);
  row('finalized → page', f.page);
  row('page − credit', f.extra);
  if (f.browser.length > 0)
    console.log(
      `  chromium, ${f.browser.length} of the pages: page turned paid − stream client saw paid ` +
        `p50 ${quantile(f.browser, 0.5).toFixed(0)} ms, min ${f.browser[0].toFixed(0)}, ` +
        `max ${f.browser[f.browser.length - 1].toFixed(0)} ms`,
    );
}

async function main(): Promise<void> {
  const db = await createTestDb('bench_paid');
  const net = await spawnLocalnet({ slotMs: SLOT_MS, finalityDepth: DEPTH, grpc: true });
  let world: World | undefined;
  let listener: PoolClient | undefined;
  let stream: ChildProcess | undefined;
  let browser: Browser | undefined;
  let invoices: Invoice[] = [];
  try {
    world = await setUp(db, net);
    invoices = await createInvoices(world);
    await openPages(invoices);
    browser = await openBrowserPages(invoices);
    listener = await listenForCredits(db, invoices);
    const roots = watchRoots(world.connection);
    stream = await startStream(db, net, world.connection);
    await until('a root notification', async () => roots.roots.length > 0, { timeoutMs: 30_000, intervalMs: 20 });
    const t0 = performance.now();
    await payAll(world, invoices);
    const seconds = (performance.now() - t0) / 1000;
    await waitForPages(invoices);
    await roots.stop();
    const slots = await checkCredits(db, invoices);
    printFigures(figures(invoices, roots.roots, slots), seconds);
  } finally {
    if (stream && stream.exitCode === null && stream.signalCode === null) {
      const exited = new Promise((resolve) => stream!.once('exit', resolve));
      stream.kill('SIGKILL');
      await exited;
    }
    await browser?.close();
    for (const inv of invoices) inv?.events?.close();
    listener?.release(true);
    await world?.api.stop();
    await net.stop();
    await db.drop();
  }
}

leavingServerAsFound(main).catch((e) => {
  console.error(e);
  process.exit(1);
});
