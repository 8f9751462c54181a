// The fault space, in one place: every named failpoint (a crash point `failpoint()` knows, common/failpoint.ts), the
// window of the flow it names, and which kinds of fault matter there. The code reads the names from here (a
// misspelt failpoint does not compile), the simulation (sim/) and the chaos runs (sim/chaos/) say which cells they
// reached, and `make bench` prints the share of all cells a model run reached. A cell is (failpoint, fault kind):
// a fault of that kind while some process was inside that failpoint's window (passed the point, not yet at its
// next durable step). Pure data, no I/O.

/** The kinds of fault the simulation and the chaos runs inject. */
export const FAULT_KINDS = {
  crash: 'the process is killed (SIGKILL): its memory and its open transaction are lost',
  'db-restart': 'PostgreSQL restarts: every session, open transaction and advisory lock is dropped',
  'rpc-response-dropped': 'the node executes a request and its answer is lost',
  'rpc-failed': 'a request fails before the node executes it (429, 500, timeout)',
  'rpc-history-missing': 'a node answers without the transaction history: a landed transaction looks unknown',
  'blockhash-expired': 'blocks pass until every blockhash handed out so far is expired',
  'duplicate-delivery': 'a source delivers again what it delivered before (redelivery, replay, re-scan)',
  'merchant-failed': 'the merchant endpoint answers 5xx, or applies the request and its answer is lost',
} as const;
export type FaultKind = keyof typeof FAULT_KINDS;

export interface FailpointSpec {
  /** The process that reaches it. */
  process: string;
  /** What is durable and what is not while a process is past this point. */
  window: string;
  /** The fault kinds that can change what happens next in this window. */
  faults: readonly FaultKind[];
}

const PAYOUT_FAULTS = [
  'crash',
  'db-restart',
  'rpc-response-dropped',
  'rpc-failed',
  'rpc-history-missing',
  'blockhash-expired',
] as const;

/** Every failpoint of the code base. */
export const FAILPOINTS = {
  'payout.after_persist_before_send': {
    process: 'payout worker / payout execute',
    window: 'an attempt is journaled (signed, committed) and not yet handed to a node',
    faults: PAYOUT_FAULTS,
  },
  'payout.after_send_before_record': {
    process: 'payout worker / payout execute',
    window: 'an attempt was handed to a node; the send is not recorded in the journal',
    faults: PAYOUT_FAULTS,
  },
  'ledger.after_insert_before_commit': {
    process: 'any ledger writer (scanner, stream, webhook, ingest)',
    window: "a batch's receipts, credits and checkpoint are written and not committed",
    faults: ['crash', 'db-restart', 'duplicate-delivery'],
  },
  'ledger.after_commit': {
    process: 'any ledger writer',
    window: 'a batch committed; the source has not moved on from it',
    faults: ['crash', 'db-restart', 'duplicate-delivery'],
  },
  'scanner.after_batch_commit': {
    process: 'indexer run / backfill',
    window: "a chunk of blocks committed with its checkpoint; the pass's next chunk not read",
    faults: ['crash', 'db-restart', 'duplicate-delivery', 'rpc-failed'],
  },
  'webhook.after_hints_stored': {
    process: 'indexer webhook',
    window: "a delivery's event and hints are stored; nothing is verified or credited",
    faults: ['crash', 'db-restart', 'duplicate-delivery', 'rpc-failed'],
  },
  'webhook.after_hints_leased': {
    process: 'indexer webhook',
    window: 'hints are leased to this verifier; none is checked or credited yet',
    faults: ['crash', 'db-restart', 'duplicate-delivery', 'rpc-failed'],
  },
  'webhook.after_apply': {
    process: 'indexer webhook',
    window: "a hint's receipts are credited; the hint is not marked done",
    faults: ['crash', 'db-restart', 'duplicate-delivery'],
  },
  'outbox.after_response_before_mark': {
    process: 'outbox run',
    window: 'the merchant answered a delivery; the outbox row is not marked',
    faults: ['crash', 'db-restart', 'merchant-failed'],
  },
  'exception.refund_after_link': {
    process: 'exception refund',
    window: 'an exception is linked to its refund payout; the payout is not executed',
    faults: ['crash', 'db-restart'],
  },
  'localnet.after_execute_before_seal': {
    process: 'localnet',
    window: 'a transaction executed in the pending slot; the slot is not sealed',
    faults: ['crash'],
  },
  'localnet.after_snapshot_before_append': {
    process: 'localnet',
    window: "a block's state snapshot is written; the block is not appended to the ledger file",
    faults: ['crash'],
  },
} as const satisfies Record<string, FailpointSpec>;

export type FailpointName = keyof typeof FAILPOINTS;

export const FAILPOINT_NAMES = Object.keys(FAILPOINTS) as FailpointName[];

/** One cell of the fault space: `fault` while a process was in `failpoint`'s window. */
export interface FaultCell {
  failpoint: FailpointName;
  fault: FaultKind;
}

/** Every cell: each failpoint with each fault kind that matters in its window. */
export function faultCells(): FaultCell[] {
  return FAILPOINT_NAMES.flatMap((failpoint) =>
    (FAILPOINTS[failpoint].faults as readonly FaultKind[]).map((fault) => ({ failpoint, fault })),
  );
}

export const cellKey = (c: FaultCell): string => `${c.failpoint} × ${c.fault}`;

export function isFailpointName(name: string): name is FailpointName {
  return Object.prototype.hasOwnProperty.call(FAILPOINTS, name);
}
