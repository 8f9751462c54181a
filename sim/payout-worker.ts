// A payout worker of the model: the shell of app/payout/worker.ts and run-payout.ts around the real rules
// (cores.nextAction, which calls decideAttempt), one action per step. It claims a due payout with its advisory
// lock, reads the journal once, then asks nextAction, performs the one thing it names (a chain call, a journal
// write, a send, a pause), records what it saw in the round or what it wrote in its journal copy, and asks again
// at its next step. What run-payout.ts does, in the same order: an attempt is persisted (a flushed commit) before
// it is sent; a round starts empty after every write that settles something and after every pause; the send is
// recorded later (bookkeeping, no flush wait), as is a success; a chain call that fails decides nothing (after
// MAX_CHAIN_FAILURES in a row the payout is handed back with a backoff); a database error ends the run (the
// connection and its lock are gone; the row stays due). The operator's `payout execute --retry-failed` is the same
// shell with `retryFailed` and the failed payouts to claim.
import type { AttemptRow, PayoutOutcome, PayoutRow } from '../app/payout/store';
import type { Action, Lifetime, OpLook, Round, Winner } from '../app/payout/next-action';
import type { OpAccount } from '../app/payout/program';
import type { SignatureStatus } from '../app/payout/chain';
import type { Signature } from '../app/types';
import { backoffDelay } from '../common/backoff';
import { type PayoutTx, RpcFailure } from './chain';
import { ConstraintViolation, DatabaseGone, type Tables } from './database';
import { type Actor, Killed, kill, note, pass, type World } from './world';
import { OncepayError, SIM_CODES } from '../common/errors';

/** Chain calls failing in a row before the payout is handed back (worker --max-chain-failures). */
export const MAX_CHAIN_FAILURES = 3;
/** Between two sends of the same bytes while the blockhash is valid (simulated ms). */
export const REBROADCAST_MS = 400;
const CHAIN_BACKOFF = { baseMs: 1000, capMs: 300_000 };

interface LiveRound extends Round {
  statuses?: Map<string, SignatureStatus>;
  expired: Map<string, boolean>;
  sent: Set<string>;
  op?: OpLook;
  lifetime?: Lifetime;
  winner?: Winner | null;
}

interface Run {
  payoutId: string;
  journal?: { p: PayoutRow; attempts: AttemptRow[] };
  unsent: Set<string>;
  lastSend: Map<string, number>;
  reopened: boolean;
  awaitingWinner: boolean;
  round: LiveRound;
  /** Sends not yet written to the journal (attempt id → how many; since when). */
  unrecorded: Map<string, { sends: number; since: number }>;
  chainFailures: number;
}

const emptyRound = (): LiveRound => ({ expired: new Map(), sent: new Set() });

/** A signed attempt's signature: a function of its exact bytes (the payout's terms and the blockhash). */
export const attemptSignature = (payoutRow: string, blockhash: string) => `tx:${payoutRow}:${blockhash}` as Signature;

export interface PayoutWorkerOptions {
  /** Which payouts this shell may take: a worker's due payouts, or the operator's failed ones. */
  claims: 'due' | 'failed';
  retryFailed: boolean;
  /** Only this payout (`exception refund` runs the one it stored). */
  only?: () => string | undefined;
}

/** One worker's shell: the world, its actor, its options and the payout it runs (if any). */
interface Shell {
  w: World;
  a: Actor;
  opts: PayoutWorkerOptions;
  run?: Run;
}

type Journal = { p: PayoutRow; attempts: AttemptRow[] };

function claimable(sh: Shell, t: Readonly<Tables>): PayoutRow[] {
  const only = sh.opts.only?.();
  if (sh.opts.only && only === undefined) return [];
  return [...t.payouts.values()].filter(
    (p) =>
      (only === undefined || p.id === only) &&
      (sh.opts.claims === 'due'
        ? (p.state === 'pending' || p.state === 'executing') && p.nextAttemptAt.getTime() <= sh.w.now
        : p.state === 'failed') &&
      (sh.w.db.lockedBy(p.id) === undefined || !sh.w.cores.claimTakesLock),
  );
}

/** claimDuePayout: the next due payout, with its advisory lock, on this worker's connection. */
function claim(sh: Shell): void {
  const { w, a } = sh;
  if (!w.db.alive(a.session)) a.session = w.db.connect();
  const due = claimable(
    sh,
    w.db.read(a.session, (t) => t),
  ).sort((x, y) => x.nextAttemptAt.getTime() - y.nextAttemptAt.getTime() || Number(x.id) - Number(y.id));
  const p = due[0];
  if (!p) return;
  if (w.cores.claimTakesLock && !w.db.tryLock(a.session, p.id)) return;
  sh.run = {
    payoutId: p.id,
    // A pending row has no attempt yet (insertAttempt moves it to executing): no need to read the journal.
    journal: p.state === 'pending' ? { p, attempts: [] } : undefined,
    unsent: new Set(),
    lastSend: new Map(),
    reopened: false,
    awaitingWinner: false,
    round: emptyRound(),
    unrecorded: new Map(),
    chainFailures: 0,
  };
  note(w, `${a.name} claims payout ${p.id} (${p.state})`);
}

function readJournal(sh: Shell, r: Run): void {
  r.journal = sh.w.db.read(sh.a.session, (t) => ({
    p: t.payouts.get(r.payoutId)!,
    attempts: [...(t.attempts.get(r.payoutId) ?? [])],
  }));
}

/** The run is over (final, or handed back): the lock goes with it. */
function end(sh: Shell): void {
  if (sh.run) sh.w.db.unlock(sh.a.session, sh.run.payoutId);
  sh.run = undefined;
  sh.a.window = null;
}

/** A chain call: a failure decides nothing; after MAX_CHAIN_FAILURES in a row the payout is handed back. */
function chain<T>(sh: Shell, r: Run, call: () => T): T | undefined {
  try {
    const out = call();
    r.chainFailures = 0;
    return out;
  } catch (e) {
    if (!(e instanceof RpcFailure)) throw e;
    r.chainFailures += 1;
    if (r.chainFailures >= MAX_CHAIN_FAILURES) handBack(sh, r);
    else r.round = emptyRound(); // a pause, then a new round
    return undefined;
  }
}

function handBack(sh: Shell, r: Run): void {
  recordSends(sh, r, () => true);
  sh.w.db.write(sh.a.session, true, (t) => {
    const row = t.payouts.get(r.payoutId)!;
    if (row.state !== 'pending' && row.state !== 'executing') return;
    const delay = backoffDelay(row.retries + 1, CHAIN_BACKOFF, 0.5);
    t.payouts.set(row.id, { ...row, retries: row.retries + 1, nextAttemptAt: new Date(sh.w.now + delay) });
  });
  note(sh.w, `${sh.a.name} hands payout ${r.payoutId} back (chain unavailable)`);
  end(sh);
}

/** The deferred markAttemptSent of the sends `due` picks (no flush wait). */
function recordSends(sh: Shell, r: Run, due: (since: number) => boolean): void {
  for (const [id, u] of r.unrecorded) {
    if (!due(u.since)) continue;
    r.unrecorded.delete(id);
    sh.w.db.write(sh.a.session, false, (t) =>
      updateAttempt(t, r.payoutId, id, (x) =>
        x.status === 'built' || x.status === 'sent' ? { ...x, status: 'sent', sendCount: x.sendCount + u.sends } : null,
      ),
    );
  }
  if (r.unrecorded.size === 0 && sh.a.window === 'payout.after_send_before_record') sh.a.window = null;
}

function takeUnrecorded(r: Run, id: string): number {
  const n = r.unrecorded.get(id)?.sends ?? 0;
  r.unrecorded.delete(id);
  return n;
}

/** settleAttempt: only an open attempt is settled (it keeps its first outcome); the journal is read again if not. */
function settle(
  sh: Shell,
  r: Run,
  at: AttemptRow,
  s: { status: 'landed' | 'failed' | 'expired'; slot?: bigint | null; error?: string },
): void {
  const sends = takeUnrecorded(r, at.id);
  const row = sh.w.db.write(sh.a.session, true, (t) =>
    updateAttempt(t, r.payoutId, at.id, (x) =>
      x.status === 'built' || x.status === 'sent'
        ? { ...x, status: s.status, slot: s.slot ?? null, error: s.error ?? null, sendCount: x.sendCount + sends }
        : null,
    ),
  );
  sh.a.window = null; // the send, if any, is recorded
  const j = r.journal!;
  r.journal = row ? { ...j, attempts: j.attempts.map((x) => (x.id === row.id ? row : x)) } : undefined;
}

/** finishPayout: final states are final (a late writer changes nothing and gets no row). */
function finish(sh: Shell, r: Run, o: PayoutOutcome, flush: boolean): PayoutRow | null {
  const row = sh.w.db.write(sh.a.session, flush, (t) => {
    const p = t.payouts.get(r.payoutId)!;
    if (p.state !== 'pending' && p.state !== 'executing') return null;
    const done: PayoutRow = {
      ...p,
      state: o.state,
      resultSignature: (o.signature ?? null) as Signature | null,
      resultSlot: o.slot ?? null,
      conflict: o.conflict ?? null,
      lastError: o.error ?? null,
    };
    t.payouts.set(p.id, done);
    return done;
  });
  if (row) note(sh.w, `${sh.a.name}: payout ${r.payoutId} ${o.state}${o.signature ? ` by ${o.signature}` : ''}`);
  return row;
}

/** insertAttempt: UNIQUE (signature), UNIQUE (payout_id, attempt_no) (attempt_no is max + 1 in the statement). */
function insertAttempt(t: Tables, w: World, p: PayoutRow, signature: Signature, lifetime: Lifetime): AttemptRow {
  const list = t.attempts.get(p.id) ?? [];
  for (const other of t.attempts.values())
    if (other.some((y) => y.signature === signature))
      throw new ConstraintViolation(`payout_attempts: signature ${signature} exists`);
  const x: AttemptRow = {
    id: String(++t.seq),
    payoutId: p.id,
    attemptNo: list.reduce((n, y) => Math.max(n, y.attemptNo), 0) + 1,
    signature,
    blockhash: lifetime.blockhash,
    lastValidBlockHeight: lifetime.lastValidBlockHeight,
    txBytes: Buffer.alloc(0),
    status: 'built',
    slot: null,
    error: null,
    sendCount: 0,
    createdAt: new Date(w.now),
    updatedAt: new Date(w.now),
  };
  t.attempts.set(p.id, [...list, x]);
  const row = t.payouts.get(p.id)!;
  if (row.state === 'pending') t.payouts.set(p.id, { ...row, state: 'executing' });
  return x;
}

function sign(sh: Shell, r: Run, p: PayoutRow, attempts: readonly AttemptRow[], lifetime: Lifetime): void {
  const { w, a } = sh;
  const signature = attemptSignature(p.id, lifetime.blockhash);
  const { opId, recipientToken: recipient, mint, amount } = p;
  const tx: PayoutTx = {
    kind: 'payout',
    signature,
    blockhash: lifetime.blockhash,
    payoutRow: p.id,
    opId,
    recipient,
    mint,
    amount,
  };
  w.attemptTx.set(signature, tx);
  if (w.cores.sendBeforeJournal) send(sh, tx);
  const row = w.db.write(a.session, true, (t) => insertAttempt(t, w, p, signature, lifetime));
  note(
    w,
    `${a.name}: attempt ${row.attemptNo} of payout ${p.id} persisted (${signature}, lvbh ${lifetime.lastValidBlockHeight})`,
  );
  r.journal = { p: { ...p, state: 'executing' }, attempts: [...attempts, row] };
  r.unsent.add(row.id);
  r.round = emptyRound();
  pass(w, a, 'payout.after_persist_before_send');
}

/** Hand the exact bytes to a node; a failed answer is not a failed send (the node may have executed it). */
function send(sh: Shell, tx: PayoutTx): void {
  const journaled = (sh.w.db.peek().attempts.get(tx.payoutRow) ?? []).some((x) => x.signature === tx.signature);
  if (!journaled) {
    sh.w.sentUnjournaled.push(tx.signature);
    note(sh.w, `${sh.a.name}: ${tx.signature} sent before it was journaled`);
  }
  try {
    sh.w.chain.send(tx);
  } catch (e) {
    if (!(e instanceof RpcFailure)) throw e;
  }
}

/** An observation nextAction asked for: into this round (a failed chain call: a pause, the round empty). */
function observe(sh: Shell, r: Run, { p, attempts }: Journal, action: Action): void {
  const { w } = sh;
  const round = r.round;
  switch (action.kind) {
    case 'read_op_before_signing': {
      const got = chain(sh, r, () => ({
        account: w.chain.opAccount(p.opId, 'finalized'),
        lifetime: w.chain.latestBlockhash(),
      }));
      if (got) round.op = { read: 'before_signing', ...got };
      return;
    }
    case 'read_blockhash': {
      const lifetime = chain(sh, r, () => w.chain.latestBlockhash());
      if (lifetime) round.lifetime = lifetime;
      return;
    }
    case 'look': {
      const statuses = chain(sh, r, () => w.chain.statuses(action.attempts.map((x) => x.signature)));
      if (statuses) round.statuses = new Map(action.attempts.map((x, i) => [x.id, statuses[i]]));
      return;
    }
    case 'check_expiry': {
      const expired = chain(sh, r, () => w.chain.blockhashExpired(action.attempt.lastValidBlockHeight));
      if (expired !== undefined) round.expired.set(action.attempt.id, expired);
      return;
    }
    case 'read_winner_op': {
      // A failed read is only a later look (run-payout.ts).
      let account = null;
      try {
        account = w.chain.opAccount(p.opId, 'confirmed');
      } catch (e) {
        if (!(e instanceof RpcFailure)) throw e;
      }
      round.op = { read: 'winner', account };
      return;
    }
    case 'read_expired_op': {
      const account = chain(sh, r, () => w.chain.opAccount(p.opId, 'finalized'));
      if (account !== undefined) round.op = { read: 'expired', account, attemptId: action.attempt.id };
      return;
    }
    case 'find_winner':
      return findWinner(sh, r, p, attempts, action.op);
    default:
      throw new OncepayError(SIM_CODES.ACTION_INVALID, `not an observation: ${action.kind}`);
  }
}

/** Who executed the op: among our attempts' statuses, else the op account's history (a failed read: a pause). */
function findWinner(sh: Shell, r: Run, p: PayoutRow, attempts: readonly AttemptRow[], op: OpAccount): void {
  const { w } = sh;
  let winner: Winner | null = null;
  if (attempts.length > 0) {
    const statuses = chain(sh, r, () => w.chain.statuses(attempts.map((x) => x.signature)));
    if (statuses === undefined) return;
    winner = w.cores.winnerAmongAttempts(attempts, statuses);
  }
  if (!winner) {
    // A failed history read is a failed chain call, as in run-payout.ts (read as "no history" it settled the
    // attempt that paid as superseded: the bug this model found).
    let history: ReturnType<World['chain']['opAccountSignatures']> | undefined = [];
    if (w.cores.failedHistoryIsEmpty) {
      try {
        history = w.chain.opAccountSignatures(p.opId);
      } catch (e) {
        if (!(e instanceof RpcFailure)) throw e;
      }
    } else history = chain(sh, r, () => w.chain.opAccountSignatures(p.opId));
    if (history === undefined) return;
    winner = w.cores.winnerInHistory(history, op);
  }
  r.round.winner = winner;
}

/** A send or a journal write nextAction named, and what follows it for the round (run-payout.ts playRound). */
function change(sh: Shell, r: Run, { p, attempts }: Journal, action: Action): void {
  const { w, a } = sh;
  switch (action.kind) {
    case 'done':
      return end(sh);
    case 'reopen': {
      r.reopened = true;
      const row = w.db.write(a.session, true, (t) => {
        const x = t.payouts.get(p.id)!;
        if (x.state !== 'failed') return null;
        const open: PayoutRow = { ...x, state: 'executing', lastError: null };
        t.payouts.set(p.id, open);
        return open;
      });
      r.journal = row ? { p: row, attempts } : undefined;
      r.round = emptyRound();
      return;
    }
    case 'sign':
      return sign(sh, r, p, attempts, action.lifetime);
    case 'send': {
      const x = action.attempt;
      r.lastSend.set(x.id, w.now);
      r.unsent.delete(x.id);
      r.round.sent.add(x.id);
      send(sh, w.attemptTx.get(x.signature)!);
      const u = r.unrecorded.get(x.id);
      r.unrecorded.set(x.id, { sends: (u?.sends ?? 0) + 1, since: u?.since ?? w.now });
      const sent = (y: AttemptRow): AttemptRow =>
        y.id === x.id ? { ...y, status: 'sent', sendCount: y.sendCount + 1 } : y;
      r.journal = { p, attempts: attempts.map(sent) };
      pass(w, a, 'payout.after_send_before_record');
      return;
    }
    case 'settle_landed':
      return settleLanded(sh, r, p, attempts, action.attempt, action.slot);
    case 'settle_consumed':
      settle(sh, r, action.attempt, { status: 'failed', slot: action.slot, error: 'OperationAlreadyConsumed' });
      r.awaitingWinner = true;
      r.round = emptyRound();
      return;
    case 'settle_failed':
      settle(sh, r, action.attempt, { status: 'failed', slot: action.slot, error: action.error });
      if (action.failPayout && r.journal) {
        const row = finish(sh, r, { state: 'failed', error: action.error }, true);
        r.journal = row ? { ...r.journal, p: row } : undefined;
      }
      r.round = emptyRound();
      return;
    case 'settle_expired':
      settle(sh, r, action.attempt, { status: 'expired' });
      r.round = emptyRound();
      return;
    case 'settle_from_op': {
      // One statement per step, as run-payout.ts writes them one after another: each open attempt, then the row.
      const next = action.attempts[0];
      if (next) {
        const s =
          next.status === 'landed'
            ? { status: 'landed' as const, slot: next.slot }
            : { status: 'failed' as const, error: next.error };
        return settle(sh, r, next.attempt, s);
      }
      r.awaitingWinner = false;
      const row = finish(sh, r, action.outcome, true);
      r.journal = row ? { p: row, attempts } : undefined;
      r.round = emptyRound();
      return;
    }
    case 'wait':
      // The pause: sends out for a rebroadcast interval are recorded; the next round starts empty.
      recordSends(sh, r, (since) => w.now - since >= REBROADCAST_MS);
      r.round = emptyRound();
      return;
    default:
      return observe(sh, r, { p, attempts }, action);
  }
}

/** finishLanded: the attempt and the payout in one statement, without waiting for its flush. */
function settleLanded(sh: Shell, r: Run, p: PayoutRow, attempts: AttemptRow[], x: AttemptRow, slot: bigint): void {
  const sends = takeUnrecorded(r, x.id);
  const done = sh.w.db.write(sh.a.session, false, (t) => {
    updateAttempt(t, p.id, x.id, (y) =>
      y.status === 'built' || y.status === 'sent'
        ? { ...y, status: 'landed', slot, sendCount: y.sendCount + sends }
        : null,
    );
    const row = t.payouts.get(p.id)!;
    if (row.state !== 'pending' && row.state !== 'executing') return null;
    const fin: PayoutRow = { ...row, state: 'succeeded', resultSignature: x.signature, resultSlot: slot };
    t.payouts.set(p.id, fin);
    return fin;
  });
  sh.a.window = null;
  if (done) {
    note(sh.w, `${sh.a.name}: payout ${p.id} succeeded by ${x.signature}`);
    r.journal = { p: done, attempts: attempts.map((y) => (y.id === x.id ? { ...y, status: 'landed', slot } : y)) };
  } else r.journal = undefined;
  r.round = emptyRound();
}

/** One action: nextAction on the journal copy and this round, then the observation or the change it names. */
function act(sh: Shell, r: Run, j: Journal): void {
  const action = sh.w.cores.nextAction(j.p, j.attempts, {
    now: sh.w.now,
    rebroadcastMs: REBROADCAST_MS,
    retryFailed: sh.opts.retryFailed,
    reopened: r.reopened,
    unsent: r.unsent,
    lastSend: r.lastSend,
    awaitingWinner: r.awaitingWinner,
    round: r.round,
  });
  change(sh, r, j, action);
}

export function createPayoutWorker(w: World, name: string, opts: PayoutWorkerOptions): Actor {
  const sh: Shell = { w, opts, a: undefined as unknown as Actor };
  const a: Actor = {
    name,
    kind: opts.claims === 'due' ? 'payout' : 'operator',
    alive: true,
    session: null,
    window: null,
    forget: () => {
      sh.run = undefined;
    },
    idle: () => sh.run === undefined && !claimable(sh, w.db.peek()).length,
    step() {
      if (!a.alive) {
        a.alive = true;
        note(w, `${name} starts`);
        return;
      }
      try {
        if (!sh.run) return claim(sh);
        if (!sh.run.journal) return readJournal(sh, sh.run);
        act(sh, sh.run, sh.run.journal);
      } catch (e) {
        if (e instanceof Killed) return kill(w, a);
        if (!(e instanceof DatabaseGone || e instanceof ConstraintViolation)) throw e;
        // The connection that held the lock is gone (or a statement was refused): the run ends here; the row
        // stays due and the next claim resolves it from the journal and the chain.
        note(w, `${name}: ${e.message}; the run ends`);
        w.db.disconnect(a.session);
        a.session = null;
        a.window = null;
        sh.run = undefined;
      }
    },
  };
  sh.a = a;
  return a;
}

/** Replace one attempt of a payout by `f(attempt)` (null: leave it); the attempt as written, or null. */
function updateAttempt(
  t: Tables,
  payoutId: string,
  id: string,
  f: (x: AttemptRow) => AttemptRow | null,
): AttemptRow | null {
  const list = t.attempts.get(payoutId) ?? [];
  const i = list.findIndex((x) => x.id === id);
  if (i < 0) return null;
  const next = f(list[i]);
  if (!next) return null;
  t.attempts.set(
    payoutId,
    list.map((x, k) => (k === i ? next : x)),
  );
  return next;
}
