// One chaos run of the real processes (the system layer of the simulation): set the stage, start the processes,
// play the seed's plan — the workload and the faults at their times — then stop the faults, let everything finish
// (the refund run again until it completes, every payout final, every landed transaction final and scanned, every
// fulfilment delivered), stop the processes and check the invariants of sim/invariants.ts on the evidence gathered
// from the chain, PostgreSQL and the merchant endpoint. A failing seed says what broke; `make chaos SEEDS=<seed>`
// plays the same plan again (the processes' own interleaving around it is the machine's).
import type { FailpointName, FaultKind } from '../../common/fault-space';
import type { LocalnetHandle } from '../../localnet';
import { checkInvariants } from '../invariants';
import { type Clients, createClients } from './clients';
import { gatherEvidence } from './evidence';
import { type ChaosEvent, type ChaosPlan, describeEvent } from './plan';
import { APPLICATION_NAME, superviseProcesses, type Supervisor } from './processes';
import { CHAOS_CLUSTER, setUpStage, type Stage } from './stage';
import { sleep } from '../../common/sleep';

export interface ChaosReport {
  seed: number;
  problems: string[];
  /** The plan as played, the processes' starts and deaths, the quiescence. */
  log: string[];
  /** Failpoints a process died at. */
  fired: FailpointName[];
  /** Faults injected, by kind. */
  injected: Partial<Record<FaultKind, number>>;
  ms: number;
}

export interface ChaosOptions {
  /** A localnet to share between runs (each run has its own merchant and mint on it). */
  net?: LocalnetHandle;
  /** How long the run may take to finish its work once the faults stop. */
  quietTimeoutMs?: number;
  /** Called with each line of the log as it happens. */
  say?: (line: string) => void;
}

interface Settling {
  done: boolean;
  detail: string;
}

/**
 * Everything finished: payouts final, landed transactions final and scanned, fulfilments delivered. (Webhook hints
 * are not waited for: a hint a killed receiver held stays leased for a minute, by design, and anything it names is
 * final and scanned already.)
 */
async function settled(s: Stage, slots: number[]): Promise<Settling> {
  const one = async <T>(text: string, values: unknown[] = []) => (await s.db.pool.query(text, values)).rows[0] as T;
  const p = await one<{ open: number; last: string | null }>(
    `SELECT count(*) FILTER (WHERE state <> 'succeeded')::int AS open, max(result_slot)::text AS last FROM payouts`,
  );
  const outbox = await one<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE state <> 'delivered'`);
  const cp = await one<{ slot: string | null }>(
    `SELECT max(slot)::text AS slot FROM checkpoints WHERE cluster = $1 AND source = 'scanner'`,
    [CHAOS_CLUSTER],
  );
  const last = Math.max(0, ...slots, Number(p.last ?? 0));
  const finalized = s.net.chain.finalizedSlot();
  const scanned = Number(cp.slot ?? -1);
  const detail = `${p.open} payouts not succeeded, ${outbox.n} outbox rows not delivered, last landed slot ${last}, finalized ${finalized}, scanner at ${scanned}`;
  return { done: p.open === 0 && outbox.n === 0 && finalized >= last && scanned >= last, detail };
}

/** What the plan's events act on while it plays: the stage, the processes, the clients and the run's tallies. */
interface Play {
  s: Stage;
  sup: Supervisor;
  c: Clients;
  /** The faults have stopped: waits give up and the provider stops delivering again. */
  over: boolean;
  refunds: Array<ReturnType<Clients['refund']>>;
  count: (k: FaultKind) => void;
  /** One database fault at a time (a restart while one is under way would stop the server it is starting). */
  dbFault: Promise<unknown>;
}

function onDatabase(p: Play, f: () => Promise<unknown>): Promise<unknown> {
  return (p.dbFault = p.dbFault.then(f, f));
}

/** One event of the plan: a client's action or a fault. */
async function perform(p: Play, e: ChaosEvent): Promise<void> {
  const { s, sup, c, count } = p;
  switch (e.kind) {
    case 'pay':
      return c.pay(e.payment);
    case 'create-payout':
      await c.createPayout(e.payout);
      if (e.twice) await c.createPayout(e.payout);
      return;
    case 'conflicting-create':
      await c.createPayout(e.payout, { amountDelta: 1n });
      return;
    case 'deliver': {
      // The provider sends an event once the transactions it names exist.
      while (!p.over && s.plan.events[e.event].some((i) => !c.payments.has(i))) await sleep(100);
      if (c.webhook.some((w) => w.event === e.event)) count('duplicate-delivery');
      return c.deliver(e.event, () => p.over);
    }
    case 'refund':
      p.refunds.push(c.refund(e.failpoint ? 'exception.refund_after_link' : null));
      return;
    case 'kill':
      count('crash');
      return sup.kill(e.process, e.failpoint, e.nth);
    case 'outage':
      count('crash');
      sup.kill('worker-0', null, 1, e.downMs);
      sup.kill('worker-1', null, 1, e.downMs);
      return;
    case 'forget':
      count('rpc-history-missing');
      return s.net.faults.forgetHistory({ count: e.count });
    case 'lagging':
      count('rpc-history-missing');
      s.net.faults.forgetHistory({ count: e.count, unseen: true });
      await sleep(e.expireAfterMs);
      if (p.over) return;
      count('blockhash-expired');
      return s.net.faults.expireBlockhashesNow();
    case 'db-restart':
      count('db-restart');
      await onDatabase(p, () => s.db.restart(async () => void (await sleep(e.downMs))));
      return;
    case 'terminate':
      count('db-restart');
      await onDatabase(p, () => s.db.terminate(APPLICATION_NAME[e.process]));
      return;
    case 'rpc':
      if (e.fault === 'drop') {
        count('rpc-response-dropped');
        return s.net.faults.dropNextResponses({ method: e.method, count: e.count });
      }
      count('rpc-failed');
      return s.net.faults.failNext({ kind: e.fault, method: e.method, count: e.count, delayMs: 1000 });
    case 'expire':
      count('blockhash-expired');
      return s.net.faults.expireBlockhashesNow();
    case 'merchant':
      count('merchant-failed');
      for (let i = 0; i < e.count; i++) s.endpointFaults.push(e.fault);
      return;
  }
}

/** Plays the plan's timeline, each event at its time, then waits out the window and the events still under way. */
async function playTimeline(p: Play, plan: ChaosPlan, say: (line: string) => void): Promise<void> {
  const inflight: Array<Promise<unknown>> = [];
  const start = performance.now();
  for (const e of plan.timeline) {
    const wait = e.at - (performance.now() - start);
    if (wait > 0) await sleep(wait);
    say(describeEvent(e));
    inflight.push(perform(p, e).catch((err: Error) => say(`  ${e.kind} failed: ${err.message}`)));
  }
  await sleep(Math.max(0, plan.windowMs - (performance.now() - start)));

  say('-- the faults stop --');
  p.over = true;
  p.s.net.faults.clear();
  p.s.endpointFaults.length = 0;
  await Promise.all(inflight);
}

/**
 * Lets everything finish once the faults stop: the refund run again until it completes, then settled(). Returns the
 * problem if quiescence is not reached in time.
 */
async function quiesce(p: Play, opts: ChaosOptions, say: (line: string) => void): Promise<string | null> {
  const { s, c } = p;
  const refundDone = (r: Awaited<ReturnType<Clients['refund']>>) => {
    if (r) say(`refund: ${r.signal ?? `exit ${r.code}`}${r.code === 0 ? '' : ` ${r.tail.replace(/\s+/g, ' ')}`}`);
    else say('refund: the exception is not in the ledger yet');
    return r?.code === 0;
  };
  // The refund ran once in the window (maybe killed at its failpoint, maybe before its exception existed): the
  // operator runs it again until it completes.
  let refunded = (await Promise.all(p.refunds)).map(refundDone).includes(true);
  const deadline = performance.now() + (opts.quietTimeoutMs ?? 180_000);
  let last: Settling = { done: false, detail: '' };
  let told = performance.now();
  while (performance.now() < deadline) {
    if (!refunded) refunded = refundDone(await c.refund(null));
    last = await settled(
      s,
      [...c.payments.values()].map((x) => x.slot),
    );
    if (refunded && last.done) break;
    if (performance.now() - told > 10_000) {
      told = performance.now();
      say(`settling: ${last.detail}`);
    }
    await sleep(500);
  }
  say(`quiescence: ${last.detail}${refunded ? '' : ', refund not completed'}`);
  if (last.done && refunded) return null;
  return `quiescence: not reached in ${opts.quietTimeoutMs ?? 180_000} ms (${last.detail}${refunded ? '' : '; the refund did not complete'})`;
}

export async function runChaos(plan: ChaosPlan, opts: ChaosOptions = {}): Promise<ChaosReport> {
  const t0 = performance.now();
  const log: string[] = [];
  const say = (line: string) => {
    const l = `${String(Math.round(performance.now() - t0)).padStart(6)} ms ${line}`;
    log.push(l);
    opts.say?.(l);
  };
  const injected: ChaosReport['injected'] = {};
  const count = (k: FaultKind) => (injected[k] = (injected[k] ?? 0) + 1);
  const problems: string[] = [];

  const s = await setUpStage(plan, { net: opts.net });
  say(`stage: merchant ${s.m.merchant.toBase58()}, ${s.invoices.length} invoices, from slot ${s.firstSlot}`);
  const sup = await superviseProcesses(s);
  try {
    await sup.ready();
    say('processes ready');
    const c = createClients(s, { api: sup.port('api'), webhook: sup.port('webhook') });
    const p: Play = { s, sup, c, over: false, refunds: [], count, dbFault: Promise.resolve() };
    await playTimeline(p, plan, say);
    const stuck = await quiesce(p, opts, say);
    if (stuck) problems.push(stuck);

    // Every process stopped first: the evidence is read from a database nothing writes to any more.
    await sup.stopAll();
    const evidence = await gatherEvidence(s);
    evidence.api = c.api;
    problems.push(...checkInvariants(evidence));
    say(
      `checked: ${evidence.payouts.length} payouts, ${evidence.opTransactions.length} op transactions, ${evidence.receipts.length} receipts, ` +
        `${evidence.merchant.requests.length} merchant requests, ${c.api.length} API answers, ${c.webhook.length} webhook deliveries`,
    );
  } finally {
    await sup.stopAll();
    log.push(...sup.events.map((e) => `  process ${e}`));
    await s.close();
  }
  return { seed: plan.seed, problems, log, fired: [...sup.fired], injected, ms: performance.now() - t0 };
}
