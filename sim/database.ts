// The database model: the tables the model's processes share, the uniqueness rules PostgreSQL enforces for them,
// sessions (a process's connection: its advisory locks and its open transaction die with it) and durability.
// Every statement commits on its own (autocommit), except the ledger's batch: one open transaction held by one
// session (begin → commit), which a crash or a restart rolls back. A statement written without waiting for its
// WAL flush (`flush: false`, as the payout journal's bookkeeping and its success are, app/payout/queries.ts) is
// lost by a server crash unless a flushed commit came after it: the tables as of the last flushed commit are kept
// (a copy of the maps: rows are replaced, never changed in place) until a flushed commit makes them current.
import type { AttemptRow, PayoutRow } from '../app/payout/store';
import type { Address } from '../app/types';
import type { Receipt } from '../indexer/decode/receipt';
import type { ExceptionKind, InvoiceState } from '../indexer/match/types';
import type { ReceiptSource } from '../indexer/ledger/types';

// DatabaseGone and ConstraintViolation are not OncepayErrors: they model PostgreSQL's signals to its clients.

/** A statement on a session that is gone (the server restarted, the connection was dropped). */
export class DatabaseGone extends Error {
  constructor() {
    super('the database session is gone');
  }
}

/** A statement PostgreSQL refuses (a unique or check constraint): its transaction rolls back. */
export class ConstraintViolation extends Error {}

export interface ReceiptRow {
  receipt: Receipt;
  invoiceId: string | null;
  firstSource: ReceiptSource;
}

export interface ExceptionRow {
  kind: ExceptionKind;
  /** The receipt's identity key (identityKey). */
  receipt: string;
  invoiceId: string | null;
  amount: bigint;
}

export type InvoiceRow = InvoiceState;

export type OutboxState = 'pending' | 'delivering' | 'delivered' | 'dead';

export interface OutboxRow {
  fulfilmentId: string;
  invoiceId: string;
  idempotencyKey: string;
  state: OutboxState;
  attempts: number;
  nextAttemptAt: number;
  lockedUntil: number | null;
}

export interface HintRow {
  id: number;
  eventId: string;
  signature: string;
  state: 'pending' | 'credited' | 'dropped';
  /** Why it was dropped: `refuted` (failed on chain, refused) stays dropped; not_found / rpc_error come back. */
  dropReason?: string;
  checks: number;
  receivedAt: number;
  nextCheckAt: number;
  leasedUntil: number;
}

export interface Counter {
  delivered: number;
  inserted: number;
  duplicates: number;
}

export interface Tables {
  payouts: Map<string, PayoutRow>;
  attempts: Map<string, readonly AttemptRow[]>;
  receipts: Map<string, ReceiptRow>;
  invoices: Map<string, InvoiceRow>;
  exceptions: readonly ExceptionRow[];
  /** By invoice id: UNIQUE (invoice_id). */
  fulfilments: Map<string, string>;
  /** By fulfilment id: UNIQUE (fulfilment_id). */
  outbox: Map<string, OutboxRow>;
  counters: Map<ReceiptSource, Counter>;
  checkpoints: Map<ReceiptSource, number>;
  /** webhook_events: UNIQUE (event_id). */
  events: ReadonlySet<string>;
  hints: readonly HintRow[];
  /** exception_resolutions: the exception (`receipt#kind`) → its refund payout's row id (one link, ever). */
  refunds: Map<string, string>;
  seq: number;
}

/** The receipt's identity: (cluster, signature, ix_index, inner_index); one cluster here. */
export const identityKey = (r: Pick<Receipt, 'signature' | 'ixIndex' | 'innerIndex'>): string =>
  `${r.signature}/${r.ixIndex}/${r.innerIndex}`;

function emptyTables(): Tables {
  return {
    payouts: new Map(),
    attempts: new Map(),
    receipts: new Map(),
    invoices: new Map(),
    exceptions: [],
    fulfilments: new Map(),
    outbox: new Map(),
    counters: new Map(),
    checkpoints: new Map(),
    events: new Set(),
    hints: [],
    refunds: new Map(),
    seq: 0,
  };
}

function copy(t: Tables): Tables {
  return {
    payouts: new Map(t.payouts),
    attempts: new Map(t.attempts),
    receipts: new Map(t.receipts),
    invoices: new Map(t.invoices),
    exceptions: t.exceptions,
    fulfilments: new Map(t.fulfilments),
    outbox: new Map(t.outbox),
    counters: new Map(t.counters),
    checkpoints: new Map(t.checkpoints),
    events: t.events,
    hints: t.hints,
    refunds: new Map(t.refunds),
    seq: t.seq,
  };
}

/** The one open ledger transaction: its writes are applied at commit, on the tables as they are then. */
interface OpenTransaction {
  session: number;
  owner: string;
  apply: (t: Tables) => void;
}

/** A payout row as it is inserted (by the API, or by the refund): pending and due at `at`, for the one merchant. */
export function newPayoutRow(
  p: Pick<PayoutRow, 'id' | 'merchantPayoutId' | 'recipientToken' | 'mint' | 'amount' | 'opId' | 'opPda'>,
  at: Date,
): PayoutRow {
  return {
    ...p,
    merchantId: '1',
    programId: 'program' as Address,
    merchantAddress: 'merchant' as Address,
    vault: 'vault' as Address,
    tokenProgram: 'token' as Address,
    opBump: 255,
    state: 'pending',
    resultSignature: null,
    resultSlot: null,
    conflict: null,
    lastError: null,
    createdAt: at,
    updatedAt: at,
    finishedAt: null,
    nextAttemptAt: at,
    retries: 0,
    claimedBy: null,
  };
}

export function createDatabase() {
  let tables = emptyTables();
  /** The tables as of the last flushed commit, when a statement committed since did not wait for its flush. */
  let durable: Tables | undefined;
  const sessions = new Set<number>();
  let nextSession = 1;
  /** Advisory locks: payout id → the session holding it. */
  const locks = new Map<string, number>();
  let open: OpenTransaction | undefined;

  function check(session: number | null): asserts session is number {
    if (session === null || !sessions.has(session)) throw new DatabaseGone();
  }

  /**
   * One statement, committed on its own. `fn` changes the tables in place and refuses (throws) before it changes
   * anything, as a statement that fails leaves no trace; rows are replaced, never changed in place.
   */
  function write<T>(session: number | null, flush: boolean, fn: (t: Tables) => T): T {
    check(session);
    if (!flush) durable ??= copy(tables);
    const out = fn(tables);
    if (flush) durable = undefined;
    return out;
  }

  return {
    connect(): number {
      const s = nextSession++;
      sessions.add(s);
      return s;
    },
    alive: (session: number | null) => session !== null && sessions.has(session),
    /** The process holding `session` died, or dropped its connection: its locks and open transaction go. */
    disconnect(session: number | null): void {
      if (session === null) return;
      sessions.delete(session);
      for (const [id, s] of locks) if (s === session) locks.delete(id);
      if (open?.session === session) open = undefined;
    },
    /** Stop and start the server. `crash`: commits not flushed yet are lost (an immediate shutdown, kill -9). */
    restart(crash: boolean): void {
      sessions.clear();
      locks.clear();
      open = undefined;
      if (crash && durable) tables = durable;
      durable = undefined;
    },
    read<T>(session: number | null, fn: (t: Readonly<Tables>) => T): T {
      check(session);
      return fn(tables);
    },
    write,
    /** Without a session: the world's own set-up and the invariants' final read. */
    peek: (): Readonly<Tables> => tables,
    seed(fn: (t: Tables) => void): void {
      fn(tables);
    },

    // ---- advisory locks (pg_try_advisory_lock on the payout's key) ----
    tryLock(session: number | null, payoutId: string): boolean {
      check(session);
      const holder = locks.get(payoutId);
      if (holder !== undefined && holder !== session) return false;
      locks.set(payoutId, session);
      return true;
    },
    unlock(session: number | null, payoutId: string): void {
      if (session !== null && locks.get(payoutId) === session) locks.delete(payoutId);
    },
    lockedBy: (payoutId: string) => locks.get(payoutId),

    // ---- the ledger's batch transaction ----
    /** Begin a ledger transaction; false while another session holds one (it waits, as on the invoice locks). */
    begin(session: number | null, owner: string, stage: (t: Readonly<Tables>) => (t: Tables) => void): boolean {
      check(session);
      if (open) return false;
      open = { session, owner, apply: stage(tables) };
      return true;
    },
    /** Commit the session's open transaction (flushed). */
    commit(session: number | null): void {
      check(session);
      if (open?.session !== session) throw new DatabaseGone();
      const { apply } = open;
      open = undefined;
      write(session, true, apply);
    },
    rollback(session: number | null): void {
      if (open?.session === session) open = undefined;
    },
    openTransaction: () => (open ? { owner: open.owner, session: open.session } : undefined),
  };
}

export type Database = ReturnType<typeof createDatabase>;
