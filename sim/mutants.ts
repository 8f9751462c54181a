// Known bugs, each patched into the cores in memory (nothing on disk changes), to show the simulation catches
// them: `make sim-mutants` (sim/run.ts --mutants) and tests/sim/mutants.test.ts count the schedules each one took
// to be caught. Each is a bug this kind of system has shipped, or one the design rules exist to prevent.
import type { Action } from '../app/payout/next-action';
import type { Cores } from './cores';
import { REAL_CORES } from './cores';
import { OncepayError, SIM_CODES } from '../common/errors';

export interface Mutant {
  name: string;
  /** The bug, in one sentence. */
  bug: string;
  /** The invariant expected to catch it. */
  caughtBy: string;
  patch(real: Readonly<Cores>): Cores;
}

type NextAction = Cores['nextAction'];

/** nextAction with `swap` applied to the action the real rules name. */
function swapAction(real: Readonly<Cores>, swap: (a: Action, ...args: Parameters<NextAction>) => Action): Cores {
  const nextAction: NextAction = (p, attempts, o) => swap(real.nextAction(p, attempts, o), p, attempts, o);
  return { ...real, nextAction };
}

export const MUTANTS: readonly Mutant[] = [
  {
    name: 'resign-after-expiry-without-op-read',
    bug: 'after an attempt expires unseen, sign a new one without reading the op account at finalized',
    caughtBy: 'op-guard-never-needed',
    patch: (real) =>
      swapAction(real, (a, _p, attempts, o) => {
        if (a.kind === 'read_expired_op') return { kind: 'settle_expired', attempt: a.attempt };
        if (a.kind !== 'read_op_before_signing') return a;
        const lifetime = o.round.lifetime;
        if (!lifetime) return { kind: 'read_blockhash' };
        return attempts.some((x) => x.blockhash === lifetime.blockhash) ? { kind: 'wait' } : { kind: 'sign', lifetime };
      }),
  },
  {
    name: 'resign-instead-of-rebroadcast',
    bug: 'an attempt not found while its blockhash is still valid is signed anew instead of sent again as the same bytes',
    caughtBy: 'op-guard-never-needed',
    patch: (real) =>
      swapAction(real, (a, _p, attempts, o) => {
        if (a.kind !== 'send' || a.first) return a;
        const lifetime = o.round.lifetime;
        if (!lifetime) return { kind: 'read_blockhash' };
        return attempts.some((x) => x.blockhash === lifetime.blockhash) ? { kind: 'wait' } : { kind: 'sign', lifetime };
      }),
  },
  {
    name: 'send-before-journal',
    bug: 'an attempt is handed to a node before it is journaled',
    caughtBy: 'sent-attempt-journaled',
    patch: (real) => ({ ...real, sendBeforeJournal: true }),
  },
  {
    name: 'claim-without-lock',
    bug: 'a worker claims a payout another worker is running (no advisory lock)',
    caughtBy: 'op-guard-never-needed',
    patch: (real) => ({ ...real, claimTakesLock: false }),
  },
  {
    name: 'failed-history-read-as-empty',
    bug: "a failed read of the op account's history is taken as no history: the attempt that paid is settled as superseded, the payout succeeds without its proof (the bug this simulation found in run-payout.ts)",
    caughtBy: 'funded-payout-eventually-paid',
    patch: (real) => ({ ...real, failedHistoryIsEmpty: true }),
  },
  {
    name: 'credit-on-conflict',
    bug: 'the ledger credits every distinct receipt delivered, also those the unique constraint refused (already in)',
    caughtBy: 'finalized-transfer-credited-once',
    patch: (real) => ({ ...real, creditable: (distinct) => distinct }),
  },
  {
    name: 'checkpoint-past-failed-slot',
    bug: "the scanner's checkpoint moves to the end of a chunk even when a block in it could not be read",
    caughtBy: 'checkpoint-covers-delivered',
    patch: (real) => ({
      ...real,
      planChunk: (outcomes, opts) => {
        const plan = real.planChunk(outcomes, opts);
        if (!plan.stoppedAt) return plan;
        const after = outcomes.filter((o) => o.status === 'ok' && o.slot > plan.stoppedAt!.slot);
        return {
          ...plan,
          receipts: [...plan.receipts, ...after.flatMap((o) => (o.status === 'ok' ? o.receipts : []))],
          checkpoint: opts.nextListed === null ? opts.end : opts.nextListed - 1,
          stoppedAt: null,
        };
      },
    }),
  },
  {
    name: 'fresh-key-per-delivery',
    bug: 'the outbox sends a new Idempotency-Key on each delivery attempt (a key made at call time)',
    caughtBy: 'one-fulfilment-per-paid-invoice',
    patch: (real) => ({ ...real, deliveryKey: (row) => `${row.idempotencyKey}:${row.attempts}` }),
  },
];

export function mutant(name: string): Mutant {
  const m = MUTANTS.find((x) => x.name === name);
  if (!m)
    throw new OncepayError(
      SIM_CODES.MUTANT_UNKNOWN,
      `no mutant ${name}; known: ${MUTANTS.map((x) => x.name).join(', ')}`,
    );
  return m;
}

export const mutatedCores = (name: string): Cores => mutant(name).patch(REAL_CORES);
