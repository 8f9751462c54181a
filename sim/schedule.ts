// A schedule: the world it starts from (SimConfig) and the steps that happen in it, in order — a process taking its
// next step, the chain sealing a slot, a customer paying, a provider delivering, and every fault: a process killed
// between any two steps or at a named failpoint, the database restarted (or crashed), a chain call failing or its
// answer lost, a send held in a mempool, blockhashes expired, a slot skipped, the merchant paused, the stream
// dropped or repeating, the merchant endpoint failing. fast-check generates schedules and shrinks a failing one to
// a short one; a schedule is plain data, printed as JSON, and replays exactly.
import fc from 'fast-check';
import { FAILPOINT_NAMES, type FailpointName } from '../common/fault-space';
import { RPC_FAULTS, RPC_METHODS, type RpcFault, type RpcMethod } from './chain';
import type { MerchantFault } from './outbox';
import type { ScannerParams } from './scanner';

export interface PaymentSpec {
  /** Each transfer of the transaction (ix_index in order): to invoice `to`'s address (-1: an address nobody watches). */
  transfers: Array<{ to: number; amount: number; wrongMint: boolean; wrongReference: boolean }>;
  /** The transaction fails on chain: it lands with an error and moves nothing. */
  fails: boolean;
}

export interface SimConfig {
  workers: number;
  /** Payout amounts (base units). */
  payouts: number[];
  /** The vault starts short of the payouts' total (topped up once the faults stop). */
  vaultShort: boolean;
  invoices: Array<{ amount: number; byReference: boolean }>;
  payments: PaymentSpec[];
  finalityDepth: number;
  lifetime: number;
  scanner: ScannerParams;
  /** The schedule's mix of steps (printed with a failure; the steps are what replays). */
  swarm?: Swarm;
}

export type Step =
  | { k: 'worker'; w: number; n: number }
  | { k: 'operator'; n: number }
  | { k: 'scanner'; n: number }
  | { k: 'stream'; n: number }
  | { k: 'webhook'; n: number }
  | { k: 'outbox'; o: number; n: number }
  | { k: 'refund'; i: number; by: number }
  | { k: 'seal' }
  | { k: 'skip-slot' }
  | { k: 'expire' }
  | { k: 'pay'; i: number }
  | { k: 'deliver'; event: number }
  | { k: 'kill'; actor: number }
  | { k: 'arm'; failpoint: FailpointName }
  | { k: 'db-restart'; crash: boolean }
  | { k: 'rpc'; method: RpcMethod; fault: RpcFault; count: number }
  | { k: 'mempool'; land: boolean }
  | { k: 'pause'; on: boolean }
  | { k: 'stream-drop' }
  | { k: 'stream-repeat' }
  | { k: 'merchant'; fault: MerchantFault };

export interface Schedule {
  config: SimConfig;
  steps: Step[];
}

/**
 * The failpoints a model process passes. Not in the model: the localnet's own crash points, the webhook's
 * trust-provider mode (after_apply) and the verifier's hint lease (after_hints_leased: the model's verifier checks a
 * hint in one step, with no lease).
 */
export const MODEL_FAILPOINTS: readonly FailpointName[] = FAILPOINT_NAMES.filter(
  (f) => !f.startsWith('localnet.') && f !== 'webhook.after_apply' && f !== 'webhook.after_hints_leased',
);

const configArb: fc.Arbitrary<Omit<SimConfig, 'swarm'>> = fc.record({
  workers: fc.integer({ min: 2, max: 3 }),
  payouts: fc.array(
    fc.integer({ min: 1, max: 9 }).map((n) => n * 100),
    { minLength: 1, maxLength: 4 },
  ),
  vaultShort: fc.boolean(),
  invoices: fc.array(
    fc.record({ amount: fc.integer({ min: 1, max: 9 }).map((n) => n * 10), byReference: fc.boolean() }),
    {
      minLength: 1,
      maxLength: 3,
    },
  ),
  payments: fc.array(
    fc.record({
      transfers: fc.array(
        fc.record({
          to: fc.integer({ min: -1, max: 2 }),
          amount: fc.integer({ min: 1, max: 9 }).map((n) => n * 10),
          wrongMint: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
          wrongReference: fc.boolean(),
        }),
        { minLength: 1, maxLength: 2 },
      ),
      fails: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    }),
    { minLength: 0, maxLength: 5 },
  ),
  finalityDepth: fc.integer({ min: 1, max: 3 }),
  lifetime: fc.integer({ min: 3, max: 8 }),
  scanner: fc.record({
    rescanWindow: fc.integer({ min: 0, max: 3 }),
    maxSlotsPerPass: fc.integer({ min: 1, max: 6 }),
    chunkSize: fc.integer({ min: 1, max: 3 }),
  }),
});

/**
 * The kinds of step, in families. Swarm testing (Groce et al., ISSTA 2012): each schedule draws its own weight for
 * every family — a fault family may be off, on, or frequent — and its own subset of chain calls and ways to fail
 * them, so some schedules pile up one kind of fault where an even mix would dilute it (a status forgotten by the
 * node AND an expiry AND an operator's retry, say).
 */
/** How many steps a process takes in a row when it gets the CPU (1 mostly). */
const burst = fc.constantFrom(1, 1, 1, 2, 3, 5);

const FAMILIES = {
  worker: {
    weight: 30,
    fault: false,
    arb: fc.record({ k: fc.constant('worker' as const), w: fc.integer({ min: 0, max: 2 }), n: burst }),
  },
  operator: { weight: 2, fault: false, arb: fc.record({ k: fc.constant('operator' as const), n: burst }) },
  scanner: { weight: 6, fault: false, arb: fc.record({ k: fc.constant('scanner' as const), n: burst }) },
  stream: { weight: 5, fault: false, arb: fc.record({ k: fc.constant('stream' as const), n: burst }) },
  webhook: { weight: 5, fault: false, arb: fc.record({ k: fc.constant('webhook' as const), n: burst }) },
  outbox: {
    weight: 5,
    fault: false,
    arb: fc.record({ k: fc.constant('outbox' as const), o: fc.integer({ min: 0, max: 1 }), n: burst }),
  },
  refund: {
    weight: 3,
    fault: false,
    arb: fc.record({
      k: fc.constant('refund' as const),
      i: fc.integer({ min: 0, max: 3 }),
      by: fc.integer({ min: 0, max: 1 }),
    }),
  },
  seal: { weight: 12, fault: false, arb: fc.constant({ k: 'seal' as const }) },
  pay: {
    weight: 4,
    fault: false,
    arb: fc.record({ k: fc.constant('pay' as const), i: fc.integer({ min: 0, max: 4 }) }),
  },
  deliver: {
    weight: 4,
    fault: false,
    arb: fc.record({ k: fc.constant('deliver' as const), event: fc.integer({ min: 0, max: 7 }) }),
  },
  skip: { weight: 1, fault: true, arb: fc.constant({ k: 'skip-slot' as const }) },
  expire: { weight: 2, fault: true, arb: fc.constant({ k: 'expire' as const }) },
  kill: {
    weight: 4,
    fault: true,
    arb: fc.record({ k: fc.constant('kill' as const), actor: fc.integer({ min: 0, max: 10 }) }),
  },
  arm: {
    weight: 3,
    fault: true,
    arb: fc.record({ k: fc.constant('arm' as const), failpoint: fc.constantFrom(...MODEL_FAILPOINTS) }),
  },
  restart: { weight: 2, fault: true, arb: fc.record({ k: fc.constant('db-restart' as const), crash: fc.boolean() }) },
  rpc: { weight: 8, fault: true, arb: undefined },
  mempool: { weight: 2, fault: true, arb: fc.record({ k: fc.constant('mempool' as const), land: fc.boolean() }) },
  pause: { weight: 1, fault: true, arb: fc.record({ k: fc.constant('pause' as const), on: fc.boolean() }) },
  streamDrop: { weight: 1, fault: true, arb: fc.constant({ k: 'stream-drop' as const }) },
  streamRepeat: { weight: 1, fault: true, arb: fc.constant({ k: 'stream-repeat' as const }) },
  merchant: {
    weight: 2,
    fault: true,
    arb: fc.record({
      k: fc.constant('merchant' as const),
      fault: fc.constantFrom<MerchantFault>('fail', 'lose-answer'),
    }),
  },
} as const;
export type Family = keyof typeof FAMILIES;
const FAMILY_NAMES = Object.keys(FAMILIES) as Family[];

/** A schedule's own mix: each family's weight multiplier (0: never) and the chain calls its rpc faults hit. */
export interface Swarm {
  weights: Record<Family, number>;
  rpcMethods: RpcMethod[];
  rpcFaults: RpcFault[];
}

const swarmArb: fc.Arbitrary<Swarm> = fc.record({
  weights: fc.record(
    Object.fromEntries(
      FAMILY_NAMES.map((f) => [f, FAMILIES[f].fault ? fc.constantFrom(0, 1, 1, 3) : fc.constantFrom(1, 1, 3)]),
    ) as Record<Family, fc.Arbitrary<number>>,
  ),
  rpcMethods: fc.subarray([...RPC_METHODS], { minLength: 1 }),
  rpcFaults: fc.subarray([...RPC_FAULTS], { minLength: 1 }),
});

function stepArb(sw: Swarm): fc.Arbitrary<Step> {
  const rpc = fc.record({
    k: fc.constant('rpc' as const),
    method: fc.constantFrom(...sw.rpcMethods),
    fault: fc.constantFrom(...sw.rpcFaults),
    count: fc.integer({ min: 1, max: 4 }),
  });
  const parts = FAMILY_NAMES.filter((f) => sw.weights[f] > 0).map((f) => ({
    weight: FAMILIES[f].weight * sw.weights[f],
    arbitrary: (FAMILIES[f].arb ?? rpc) as fc.Arbitrary<Step>,
  }));
  return fc.oneof(...parts);
}

export const scheduleArb = (maxSteps = 160): fc.Arbitrary<Schedule> =>
  swarmArb.chain((swarm) =>
    fc.record({
      config: configArb.map((c) => ({ ...c, swarm })),
      steps: fc.array(stepArb(swarm), { minLength: 1, maxLength: maxSteps, size: 'max' }),
    }),
  );

/** One line per step, for a failure report. */
export function describeStep(s: Step): string {
  const { k, ...rest } = s;
  const args = Object.entries(rest)
    .map(([key, v]) => `${key}=${String(v)}`)
    .join(' ');
  return args ? `${k} ${args}` : k;
}
