// The simulated world the model's processes share: the chain, the database, the merchant endpoint, the clock, the
// real cores they call, and what the run observes (the trace of steps, the fault-space cells reached, the safety
// violations seen as they happen). A process is an Actor: one atomic step at a time, killed between any two steps
// (its memory and open transaction lost), and armed failpoints kill it as it passes them, as ONCEPAY_FAILPOINT does.
import { cellKey, type FailpointName, FAILPOINTS, type FaultKind } from '../common/fault-space';
import type { Chain, PayoutTx, RpcFault } from './chain';
import type { Cores } from './cores';
import type { Database } from './database';
import type { MerchantEndpoint } from './outbox';
import type { Signature } from '../app/types';

/**
 * Thrown through an actor's step when it reaches an armed failpoint: it dies there. Not an OncepayError: it models
 * a process killed (SIGKILL), which no code of ours throws.
 */
export class Killed extends Error {
  constructor(readonly failpoint: FailpointName) {
    super(`killed at ${failpoint}`);
  }
}

export type ActorKind = 'payout' | 'scanner' | 'stream' | 'webhook' | 'outbox' | 'operator' | 'refund';

export interface Actor {
  readonly name: string;
  readonly kind: ActorKind;
  alive: boolean;
  /** Its database session (null: not connected). */
  session: number | null;
  /** The failpoint window it is in: passed that point, not yet at its next durable step. */
  window: FailpointName | null;
  /** One atomic step (a dead actor's step starts it again). */
  step(): void;
  /** Lose everything in memory (the caller drops its session). */
  forget(): void;
  /** Nothing left for it to do, as far as it knows (the quiesce phase asks). */
  idle(): boolean;
}

export interface World {
  readonly cores: Cores;
  readonly chain: Chain;
  readonly db: Database;
  readonly merchant: MerchantEndpoint;
  readonly cluster: string;
  /** Simulated milliseconds. */
  now: number;
  actors: Actor[];
  /** The exact transaction of each signed attempt (its bytes, as the chain model reads them). */
  readonly attemptTx: Map<Signature, PayoutTx>;
  /** Failpoints armed by the schedule: the next actor passing one dies there. */
  readonly armed: Set<FailpointName>;
  /** Fault-space cells reached (cellKey). */
  readonly cells: Set<string>;
  /** Attempts a process handed to the chain before they were journaled (seen at the send). */
  readonly sentUnjournaled: string[];
  /** Per source, the receipt identities it handed to the ledger in committed batches. */
  readonly delivered: Map<string, Set<string>>;
  readonly trace: string[];
}

export function note(w: World, line: string): void {
  if (w.trace.length < 2000) w.trace.push(`t=${w.now} ${line}`);
}

/** A fault of `kind` reached the given actors (each in its window, if any): the cells it covers. */
export function faultReached(w: World, kind: FaultKind, actors: readonly Actor[]): void {
  for (const a of actors) {
    if (a.window === null) continue;
    const spec = FAILPOINTS[a.window];
    if ((spec.faults as readonly FaultKind[]).includes(kind))
      w.cells.add(cellKey({ failpoint: a.window, fault: kind }));
  }
}

/** What a fault on a chain call is, in the fault space (a send held in a mempool, a stale blockhash: none). */
const RPC_FAULT_KIND: Partial<Record<RpcFault, FaultKind>> = {
  fail: 'rpc-failed',
  drop: 'rpc-response-dropped',
  forget: 'rpc-history-missing',
};

/**
 * One step of `a`: the chain faults its calls met are cells of the window it was in when the step began (a
 * `forget` is silent: the process only sees a transaction it cannot find).
 */
export function stepActor(w: World, a: Actor): void {
  const window = a.window;
  const fired = w.chain.fired.length;
  a.step();
  for (const f of w.chain.fired.slice(fired)) {
    const kind = RPC_FAULT_KIND[f.fault];
    if (kind) faultReached(w, kind, [{ ...a, window }]);
  }
}

/** The actor passes a failpoint: it is in that window now, and dies here if the schedule armed it. */
export function pass(w: World, a: Actor, name: FailpointName): void {
  a.window = name;
  if (w.armed.delete(name)) {
    note(w, `${a.name} reaches ${name}: SIGKILL`);
    throw new Killed(name);
  }
}

/** Kill an actor now (SIGKILL): memory gone, its session closed (locks released, open transaction rolled back). */
export function kill(w: World, a: Actor): void {
  faultReached(w, 'crash', [a]);
  w.db.disconnect(a.session);
  a.session = null;
  a.alive = false;
  a.window = null;
  a.forget();
}
