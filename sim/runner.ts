// Runs one schedule: builds its world (a funded merchant and its payouts, invoices, customers' payments, the
// processes: ≥ 2 payout workers, the scanner, the stream, the webhook receiver and verifier, the outbox worker,
// the merchant endpoint), applies each step, then lets the faults stop and quiesces — every process restarted, the
// merchant unpaused and its vault funded, the operator retrying failed payouts and replaying dead letters, slots
// sealed, each process stepped round after round until none has anything left to do (or a bound is hit: then the
// `eventually` invariants say what never happened). Then it gathers the Evidence and checks every invariant.
import type { PayoutRow } from '../app/payout/store';
import type { Address, PayoutId } from '../app/types';
import type { OpId } from '../app/op-id';
import { createChain, type PaymentTx } from './chain';
import { type Cores, REAL_CORES } from './cores';
import { createDatabase, identityKey, newPayoutRow } from './database';
import type { Evidence } from './evidence';
import { checkInvariants } from './invariants';
import { createMerchantEndpoint, createOutboxWorker, replayDead } from './outbox';
import { createPayoutWorker } from './payout-worker';
import { createRefunder, type RefundActor } from './refund';
import { createScanner } from './scanner';
import { describeStep, type Schedule, type SimConfig, type Step } from './schedule';
import { createStream, type StreamControl } from './stream';
import { createWebhook, type WebhookActor, type WebhookEvent } from './webhook';
import { type Actor, faultReached, kill, note, stepActor, type World } from './world';

export const MINT = 'USDC';
const OTHER_MINT = 'EURC';
const MERCHANT = 'merchant' as Address;
/** Simulated time per schedule step, and per round once the faults stopped. */
const STEP_MS = 50;
const QUIET_ROUND_MS = 250;
const MAX_QUIET_ROUNDS = 600;

export interface RunResult {
  problems: string[];
  trace: string[];
  cells: Set<string>;
  quietRounds: number;
}

interface Sim {
  w: World;
  workers: Actor[];
  scanner: Actor;
  stream: StreamControl;
  webhook: WebhookActor;
  outboxes: Actor[];
  refunders: RefundActor[];
  /** `payout execute --retry-failed` on each failed payout: an operator's explicit decision (also mid-incident). */
  operator: Actor;
  payments: PaymentTx[];
  events: WebhookEvent[];
  paid: Set<number>;
}

const deposit = (i: number) => `dep${i}`;
const reference = (i: number) => `ref${i}`;

function payoutRow(i: number, amount: bigint): PayoutRow {
  return newPayoutRow(
    {
      id: String(i + 1),
      merchantPayoutId: `po-${i}` as PayoutId,
      recipientToken: `rcpt-${i}` as Address,
      mint: MINT as Address,
      amount,
      opId: `op-${i}` as OpId,
      opPda: `oppda-${i}` as Address,
    },
    new Date(0),
  );
}

function paymentTxs(c: SimConfig): PaymentTx[] {
  return c.payments.map((p, j) => ({
    kind: 'payment',
    signature: `pay${j}` as PaymentTx['signature'],
    fails: p.fails,
    transfers: p.transfers.map((t, ix) => {
      const inv = t.to >= 0 ? c.invoices[t.to % c.invoices.length] : undefined;
      const to = t.to >= 0 ? t.to % c.invoices.length : -1;
      const references = inv?.byReference ? [t.wrongReference ? `ref-none-${j}` : reference(to)] : undefined;
      return {
        ixIndex: ix,
        innerIndex: -1,
        source: `customer${j}`,
        destination: to >= 0 ? deposit(to) : 'stranger',
        destinationOwner: null,
        mint: t.wrongMint ? OTHER_MINT : MINT,
        amount: BigInt(t.amount),
        ...(references ? { references } : {}),
      };
    }),
  }));
}

/** The provider's events: one per payment, one naming two payments, one naming a signature never on chain. */
function webhookEvents(payments: readonly PaymentTx[]): WebhookEvent[] {
  const events = payments.map((p, j) => ({ eventId: `evt${j}`, signatures: [p.signature as string] }));
  if (payments.length >= 2)
    events.push({ eventId: 'evt-pair', signatures: [payments[1].signature, payments[0].signature] });
  events.push({ eventId: 'evt-bogus', signatures: ['never-on-chain'] });
  return events;
}

export function buildSim(c: SimConfig, cores: Cores = REAL_CORES): Sim {
  const total = c.payouts.reduce((n, a) => n + BigInt(a), 0n);
  const chain = createChain({
    finalityDepth: c.finalityDepth,
    lifetime: c.lifetime,
    vault: c.vaultShort ? total - BigInt(c.payouts[0]) : total,
    vaultAddress: 'vault',
    merchant: MERCHANT,
  });
  const db = createDatabase();
  db.seed((t) => {
    c.payouts.forEach((amount, i) => t.payouts.set(String(i + 1), payoutRow(i, BigInt(amount))));
    t.seq = c.payouts.length;
    c.invoices.forEach((inv, i) =>
      t.invoices.set(`inv${i}`, {
        id: `inv${i}`,
        merchant: 'default',
        mint: MINT,
        expectedAmount: BigInt(inv.amount),
        creditedAmount: 0n,
        depositAddress: deposit(i),
        referenceKey: inv.byReference ? reference(i) : null,
        status: 'open',
        createdSeq: i,
      }),
    );
  });
  const w: World = {
    cores,
    chain,
    db,
    merchant: createMerchantEndpoint(),
    cluster: 'sim',
    now: 0,
    actors: [],
    attemptTx: new Map(),
    armed: new Set(),
    cells: new Set(),
    sentUnjournaled: [],
    delivered: new Map(),
    trace: [],
  };
  const watched = new Set([...c.invoices.map((_, i) => deposit(i)), ...c.invoices.map((_, i) => reference(i))]);
  const workers = Array.from({ length: c.workers }, (_, i) =>
    createPayoutWorker(w, `worker-${i}`, { claims: 'due', retryFailed: false }),
  );
  const scanner = createScanner(w, c.scanner);
  const stream = createStream(w, () => watched);
  const webhook = createWebhook(w);
  // Two of each process that may run side by side: outbox workers (SKIP LOCKED) and operators refunding.
  const outboxes = [createOutboxWorker(w, 'outbox-0'), createOutboxWorker(w, 'outbox-1')];
  const refunders = [createRefunder(w, 'refund-0'), createRefunder(w, 'refund-1')];
  const operator = createPayoutWorker(w, 'operator', { claims: 'failed', retryFailed: true });
  w.actors = [...workers, scanner, stream, webhook, ...outboxes, ...refunders, operator];
  const payments = paymentTxs(c);
  return {
    w,
    workers,
    scanner,
    stream,
    webhook,
    outboxes,
    refunders,
    operator,
    payments,
    events: webhookEvents(payments),
    paid: new Set(),
  };
}

function pay(s: Sim, i: number): void {
  const tx = s.payments[i];
  if (!tx || s.paid.has(i)) return;
  s.paid.add(i);
  s.w.chain.submit(tx);
  note(s.w, `customer sends ${tx.signature}`);
}

/** `n` steps of one process in a row (it got the CPU for a while). */
function steps(w: World, a: Actor, n: number): void {
  for (let i = 0; i < n; i++) stepActor(w, a);
}

export function applyStep(s: Sim, step: Step): void {
  const { w } = s;
  w.now += STEP_MS;
  note(w, `> ${describeStep(step)}`);
  switch (step.k) {
    case 'worker':
      return steps(w, s.workers[step.w % s.workers.length], step.n);
    case 'operator':
      return steps(w, s.operator, step.n);
    case 'scanner':
      return steps(w, s.scanner, step.n);
    case 'stream':
      return steps(w, s.stream, step.n);
    case 'webhook':
      return steps(w, s.webhook, step.n);
    case 'outbox':
      return steps(w, s.outboxes[step.o % s.outboxes.length], step.n);
    case 'refund': {
      // The operator refunds one of the exceptions kept in the vault's mint (the others are resolved, not paid).
      const t = w.db.peek();
      const refundable = t.exceptions.filter((x) => t.receipts.get(x.receipt)?.receipt.mint === MINT);
      const e = refundable[step.i % Math.max(1, refundable.length)];
      if (e) s.refunders[step.by % s.refunders.length].request(e);
      return stepActor(w, s.refunders[step.by % s.refunders.length]);
    }
    case 'seal':
      return w.chain.seal();
    case 'skip-slot':
      return w.chain.skipNextSlot();
    case 'expire':
      faultReached(w, 'blockhash-expired', w.actors);
      return w.chain.expireBlockhashesNow();
    case 'pay':
      return pay(s, step.i);
    case 'deliver': {
      const e = s.events[step.event % s.events.length];
      s.webhook.receive(e);
      return;
    }
    case 'kill': {
      const a = w.actors[step.actor % w.actors.length];
      if (a.alive) kill(w, a);
      return;
    }
    case 'arm':
      w.armed.add(step.failpoint);
      return;
    case 'db-restart':
      faultReached(w, 'db-restart', w.actors);
      return w.db.restart(step.crash);
    case 'rpc':
      for (let i = 0; i < step.count; i++) w.chain.arm(step.method, step.fault);
      return;
    case 'mempool':
      w.chain.mempoolStep(step.land);
      return;
    case 'pause':
      return w.chain.setPaused(step.on);
    case 'stream-drop':
      return s.stream.drop();
    case 'stream-repeat':
      return s.stream.repeatNext();
    case 'merchant':
      return w.merchant.arm(step.fault);
  }
}

/** The faults stop; everything runs until nothing is left to do. Returns the rounds it took (or the bound). */
export function quiesce(s: Sim): number {
  const { w } = s;
  note(w, '-- the faults stop --');
  w.armed.clear();
  w.chain.clearFaults();
  w.merchant.clearFaults();
  w.chain.setPaused(false);
  while (w.chain.mempoolSize() > 0) w.chain.mempoolStep(true);
  s.payments.forEach((_, i) => pay(s, i));
  const everyone = w.actors;
  for (let round = 1; round <= MAX_QUIET_ROUNDS; round++) {
    w.now += QUIET_ROUND_MS;
    fundVault(w);
    // Slots go on while something waits on the chain (a landing, finality, a blockhash's expiry), then stop, so the
    // sources can reach the tip.
    if (waitsOnChain(s)) w.chain.seal();
    for (const a of everyone) steps(w, a, a.kind === 'payout' || a.kind === 'operator' ? 3 : 2);
    replayDead(w);
    if (round > w.chain.params.finalityDepth + 2 && everyone.every((a) => a.alive && a.idle()) && settled(s))
      return round;
  }
  return MAX_QUIET_ROUNDS;
}

/** The merchant keeps the vault funded for every payout not yet paid (refunds stored meanwhile included). */
function fundVault(w: World): void {
  const owed = [...w.db.peek().payouts.values()]
    .filter((p) => p.state !== 'succeeded' && p.state !== 'conflict')
    .reduce((n, p) => n + p.amount, 0n);
  if (w.chain.vault() < owed) w.chain.fundVault(owed - w.chain.vault());
}

/** Something waits for slots: a transaction to become final, a payout to land or its blockhash to expire. */
function waitsOnChain(s: Sim): boolean {
  const { w } = s;
  const lastLanded = Math.max(0, ...[...w.chain.truth.landed().values()].map((l) => l.slot));
  const open = [...w.db.peek().payouts.values()].some((p) => p.state !== 'succeeded' && p.state !== 'conflict');
  return open || w.chain.finalizedSlot() < lastLanded || w.chain.pendingSlot() <= lastLanded;
}

/** Every landed transaction final, and the database with nothing half-done. */
function settled(s: Sim): boolean {
  const { w } = s;
  const t = w.db.peek();
  const lastLanded = Math.max(0, ...[...w.chain.truth.landed().values()].map((l) => l.slot));
  return (
    w.chain.finalizedSlot() >= lastLanded &&
    [...t.payouts.values()].every((p) => p.state === 'succeeded' || p.state === 'conflict') &&
    t.hints.every((h) => h.state !== 'pending') &&
    w.db.openTransaction() === undefined
  );
}

/** The Evidence of a world: the chain's truth, the tables, the merchant's record. */
export function evidenceOf(s: Sim): Evidence {
  const { w } = s;
  const t = w.db.peek();
  const truth = w.chain.truth;
  const invoices = [...t.invoices.values()];
  const watched = new Set(invoices.map((i) => i.depositAddress));
  const opTransactions = [...truth.opHistory()].flatMap(([opId, sigs]) =>
    sigs.map((sig) => {
      const l = truth.landed().get(sig)!;
      const custom =
        l.err && 'InstructionError' in (l.err as object)
          ? (l.err as { InstructionError: [number, { Custom: number }] }).InstructionError[1].Custom
          : null;
      return { opId, signature: sig, err: l.err === null ? null : (custom ?? -1) };
    }),
  );
  const transfers = [...truth.landed().values()].flatMap((l) =>
    truth.receiptsOf(l).map((r) => ({
      key: identityKey(r),
      amount: r.amount,
      watched: watched.has(r.destination) || (r.destinationOwner !== null && watched.has(r.destinationOwner)),
      final: truth.isFinal(l.slot),
    })),
  );
  const payouts = [...t.payouts.values()];
  const gaps: NonNullable<Evidence['checkpointGaps']> = [];
  for (const source of ['scanner', 'stream'] as const) {
    const checkpoint = t.checkpoints.get(source);
    if (checkpoint === undefined) continue;
    const mine = w.delivered.get(source) ?? new Set<string>();
    const watchedTx = new Set(transfers.filter((x) => x.watched).map((x) => x.key.split('/')[0]));
    const missing = [...truth.landed().values()]
      .filter((l) => l.slot <= checkpoint && truth.isFinal(l.slot))
      .flatMap((l) => truth.receiptsOf(l))
      .filter((r) => source === 'scanner' || watchedTx.has(r.signature))
      .map((r) => identityKey(r))
      .filter((k) => !mine.has(k));
    if (missing.length > 0) gaps.push({ source, checkpoint, missing });
  }
  const exceptionAmount = new Map(t.exceptions.map((x) => [`${x.receipt}#${x.kind}`, x]));
  return {
    cluster: w.cluster,
    payouts: payouts.map((p) => ({
      id: p.id,
      payoutId: p.merchantPayoutId,
      opId: p.opId,
      amount: p.amount,
      recipient: p.recipientToken,
      state: p.state,
      resultSignature: p.resultSignature,
      attempts: (t.attempts.get(p.id) ?? []).map((a) => ({ signature: a.signature, status: a.status })),
    })),
    opTransactions,
    recipientBalances: new Map(payouts.map((p) => [p.recipientToken as string, truth.balance(p.recipientToken)])),
    transfers,
    receipts: [...t.receipts.entries()].map(([key, r]) => ({ key, amount: r.receipt.amount, invoiceId: r.invoiceId })),
    invoices: invoices.map((i) => ({
      id: i.id,
      expected: i.expectedAmount,
      credited: i.creditedAmount,
      status: i.status,
    })),
    exceptions: t.exceptions.map((x) => ({
      receipt: x.receipt,
      kind: x.kind,
      amount: x.amount,
      invoiceId: x.invoiceId,
    })),
    fulfilments: [...t.fulfilments].map(([invoiceId, id]) => ({ invoiceId, id })),
    outbox: [...t.outbox.values()].map((o) => ({
      fulfilmentId: o.fulfilmentId,
      invoiceId: o.invoiceId,
      state: o.state,
    })),
    merchant: {
      applied: [...w.merchant.applied()].map(([key, invoiceId]) => ({ key, invoiceId })),
      requests: w.merchant.requests().map((r) => ({ key: r.key, invoiceId: r.invoiceId })),
    },
    counters: [...t.counters].map(([source, c]) => ({ source, ...c })),
    refunds: [...t.refunds].map(([key, payoutRow]) => {
      const x = exceptionAmount.get(key)!;
      return { receipt: x.receipt, kind: x.kind, amount: x.amount, payoutRow };
    }),
    checkpointGaps: gaps,
    sentUnjournaled: [...w.sentUnjournaled],
  };
}

/** Run a schedule and check every invariant on what it left. */
export function runSchedule(schedule: Schedule, cores: Cores = REAL_CORES): RunResult {
  const s = buildSim(schedule.config, cores);
  for (const step of schedule.steps) applyStep(s, step);
  const quietRounds = quiesce(s);
  const problems = checkInvariants(evidenceOf(s));
  if (quietRounds >= MAX_QUIET_ROUNDS) {
    const busy = [...s.w.actors].filter((a) => !a.alive || !a.idle()).map((a) => a.name);
    problems.push(`quiescence: not reached in ${MAX_QUIET_ROUNDS} rounds (still busy: ${busy.join(', ') || 'none'})`);
  }
  return { problems, trace: s.w.trace, cells: s.w.cells, quietRounds };
}
