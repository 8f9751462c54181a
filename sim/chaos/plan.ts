// The system layer's plan (pure): from a seed, the workload — invoices, customers' transactions (exact, short then
// topped up, over, one paying two invoices, a late one), payouts created through the API (some requests sent
// twice, one with another body under a used key), provider deliveries and their repeats, an operator refunding an
// overpayment — and the faults at their times: processes killed at a named failpoint (armed with
// ONCEPAY_FAILPOINT when the process is started again) or with no warning, both payout workers down for seconds,
// PostgreSQL restarted, a process's sessions terminated, RPC answers dropped or failed by the localnet, status
// requests answered by a node without the history, blockhashes expired, the merchant endpoint failing. The same seed gives the same plan; the interleaving of real processes around it is the machine's.
import fc from 'fast-check';
import type { FailpointName } from '../../common/fault-space';

/** The long-running processes of a chaos run. */
export const CHAOS_PROCESSES = ['api', 'worker-0', 'worker-1', 'scanner', 'webhook', 'outbox'] as const;
export type ChaosProcess = (typeof CHAOS_PROCESSES)[number];

/** The failpoints each process passes (the API passes none: it only stores). */
export const FAILPOINTS_OF: Record<ChaosProcess, readonly FailpointName[]> = {
  api: [],
  'worker-0': ['payout.after_persist_before_send', 'payout.after_send_before_record'],
  'worker-1': ['payout.after_persist_before_send', 'payout.after_send_before_record'],
  scanner: ['ledger.after_insert_before_commit', 'ledger.after_commit', 'scanner.after_batch_commit'],
  webhook: ['webhook.after_hints_stored', 'ledger.after_insert_before_commit', 'ledger.after_commit'],
  outbox: ['outbox.after_response_before_mark'],
};

/** The localnet's JSON-RPC methods a fault is armed on (what the processes call). */
export const RPC_FAULT_METHODS = [
  'sendTransaction',
  'getSignatureStatuses',
  'getLatestBlockhash',
  'getMultipleAccounts',
  'getAccountInfo',
  'getBlockHeight',
  'getBlock',
  'getBlocks',
  'getSlot',
  'getTransaction',
] as const;
export type RpcFaultMethod = (typeof RPC_FAULT_METHODS)[number];

export type ChaosEvent =
  | { at: number; kind: 'pay'; payment: number }
  | { at: number; kind: 'create-payout'; payout: number; twice: boolean }
  | { at: number; kind: 'conflicting-create'; payout: number }
  | { at: number; kind: 'deliver'; event: number }
  | { at: number; kind: 'refund'; failpoint: boolean }
  | { at: number; kind: 'kill'; process: ChaosProcess; failpoint: FailpointName | null; nth: number }
  /** Both payout workers down for a while (the chain goes on), then started again. */
  | { at: number; kind: 'outage'; downMs: number }
  | { at: number; kind: 'db-restart'; downMs: number }
  | { at: number; kind: 'terminate'; process: ChaosProcess }
  | { at: number; kind: 'rpc'; method: RpcFaultMethod; fault: 'drop' | '429' | '500' | 'timeout'; count: number }
  /** The next `count` status requests are answered by a node without the history (a pruned RPC node). */
  | { at: number; kind: 'forget'; count: number }
  /**
   * The next `count` status requests are answered by a node behind the cluster (no status at all, even for what
   * just landed), and `expireAfterMs` later every blockhash expires: an attempt that landed meanwhile is not found
   * after its blockhash expired, the case journal rule 4 exists for (read the op account before anything new).
   */
  | { at: number; kind: 'lagging'; count: number; expireAfterMs: number }
  | { at: number; kind: 'expire' }
  | { at: number; kind: 'merchant'; fault: 'fail' | 'lose-answer'; count: number };

/** With the payment before it, this one overpays invoice 1: its excess is the exception the operator refunds. */
export const OVERPAYMENT = 2;

export interface ChaosPlan {
  seed: number;
  /** Invoice amounts (base units). */
  invoices: bigint[];
  /** Each customer transaction: its transfers, each to an invoice's deposit account. */
  payments: Array<Array<{ invoice: number; amount: bigint }>>;
  /** Payout amounts (base units). */
  payouts: bigint[];
  /** The provider's events: each names payments' signatures (by payment index). */
  events: number[][];
  /** Everything that happens, ordered by `at` (ms after the start). */
  timeline: ChaosEvent[];
  /** When the faults stop. */
  windowMs: number;
}

export interface PlanOptions {
  windowMs: number;
  /** How many faults in the window. */
  faults: number;
}

export const DEFAULT_PLAN: PlanOptions = { windowMs: 25_000, faults: 12 };

const killArb: fc.Arbitrary<Omit<Extract<ChaosEvent, { kind: 'kill' }>, 'at'>> = fc
  .constantFrom(...CHAOS_PROCESSES)
  .chain((process) =>
    fc.record({
      kind: fc.constant('kill' as const),
      process: fc.constant(process),
      // Armed at a failpoint it passes (most of the time), or killed now with no warning.
      failpoint:
        FAILPOINTS_OF[process].length === 0
          ? fc.constant(null)
          : fc.option(fc.constantFrom(...FAILPOINTS_OF[process]), { nil: null, freq: 3 }),
      nth: fc.integer({ min: 1, max: 3 }),
    }),
  );

const faultArb: fc.Arbitrary<Omit<ChaosEvent, 'at'>> = fc.oneof(
  { weight: 5, arbitrary: killArb },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('db-restart' as const), downMs: fc.integer({ min: 200, max: 2000 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('terminate' as const), process: fc.constantFrom(...CHAOS_PROCESSES) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('rpc' as const),
      method: fc.constantFrom(...RPC_FAULT_METHODS),
      fault: fc.constantFrom('drop' as const, 'drop' as const, '429' as const, '500' as const, 'timeout' as const),
      count: fc.integer({ min: 1, max: 4 }),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'expire' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('outage' as const), downMs: fc.integer({ min: 2000, max: 8000 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('forget' as const), count: fc.integer({ min: 5, max: 80 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('lagging' as const),
      count: fc.integer({ min: 20, max: 200 }),
      expireAfterMs: fc.integer({ min: 300, max: 3000 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('merchant' as const),
      fault: fc.constantFrom('fail' as const, 'lose-answer' as const),
      count: fc.integer({ min: 1, max: 3 }),
    }),
  },
);

/** The plan of a seed. */
export function planChaos(seed: number, o: PlanOptions = DEFAULT_PLAN): ChaosPlan {
  const arb = fc.record({
    invoices: fc.array(
      fc.integer({ min: 2, max: 9 }).map((n) => BigInt(n) * 1_000_000n),
      { minLength: 3, maxLength: 3 },
    ),
    payouts: fc.array(
      fc.integer({ min: 1, max: 9 }).map((n) => BigInt(n) * 100_000n),
      { minLength: 4, maxLength: 6 },
    ),
    faults: fc.array(fc.tuple(fc.integer({ min: 0, max: o.windowMs - 1 }), faultArb), {
      minLength: o.faults,
      maxLength: o.faults,
    }),
    // When each piece of the workload happens (in the first two thirds of the window).
    times: fc.array(fc.integer({ min: 0, max: Math.floor((o.windowMs * 2) / 3) }), { minLength: 32, maxLength: 32 }),
    twice: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    redeliveries: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 2, maxLength: 6 }),
    refundFailpoint: fc.boolean(),
  });
  const g = fc.sample(arb, { seed, numRuns: 1 })[0];
  const [a, b, c] = g.invoices;
  // Invoice 0 paid exactly; 1 paid short, then topped up with an overpayment (an exception, refunded); 2 paid
  // together with 0's late second payment in one transaction (a late payment: an exception).
  const payments: ChaosPlan['payments'] = [
    [{ invoice: 0, amount: a }],
    [{ invoice: 1, amount: b / 2n }],
    [{ invoice: 1, amount: b - b / 2n + 250_000n }],
    [
      { invoice: 2, amount: c },
      { invoice: 0, amount: 100_000n },
    ],
  ];
  const events = [[0], [1], [2], [3], [2, 3]];
  let t = 0;
  const at = () => g.times[t++ % g.times.length];
  const timeline: ChaosEvent[] = [
    ...payments.map((_, i) => ({ at: at(), kind: 'pay' as const, payment: i })),
    ...g.payouts.map((_, i) => ({ at: at(), kind: 'create-payout' as const, payout: i, twice: g.twice[i] ?? false })),
    { at: at(), kind: 'conflicting-create', payout: 0 },
    ...events.map((_, i) => ({ at: at(), kind: 'deliver' as const, event: i })),
    ...g.redeliveries.map((e) => ({ at: at(), kind: 'deliver' as const, event: e % events.length })),
    { at: Math.floor(o.windowMs * 0.7), kind: 'refund', failpoint: g.refundFailpoint },
    ...g.faults.map(([when, f]) => ({ ...f, at: when }) as ChaosEvent),
  ];
  timeline.sort((x, y) => x.at - y.at);
  return { seed, invoices: g.invoices, payments, payouts: g.payouts, events, timeline, windowMs: o.windowMs };
}

/** One line per event, for the run's log and a failure report. */
export function describeEvent(e: ChaosEvent): string {
  const { at, kind, ...rest } = e;
  const args = Object.entries(rest)
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
  return `${String(at).padStart(6)} ms ${kind}${args ? ` ${args}` : ''}`;
}
