// A loopback JSON-RPC server that replays blocks in the real Solana wire format (`getBlock` with `json`
// encoding), with faults injected on demand: HTTP 429/500, no response (timeout), -32007 slot skipped,
// -32004 block not available. It stands in for a remote RPC provider only; blocks are plain recorded data.
import * as http from 'http';
import * as crypto from 'crypto';
import { AddressInfo } from 'net';
import bs58 from 'bs58';

export type FaultKind = 'http429' | 'http500' | 'timeout' | 'slotSkipped' | 'blockNotAvailable' | 'invalidJson';

export interface Fault {
  kind: FaultKind;
  /** Only requests to this method (any if omitted). */
  method?: string;
  /** Only getBlock for this slot. */
  slot?: number;
  /** How many matching requests get the fault (then it is spent). Infinity = until cleared. */
  times: number;
}

export interface ReplayRpc {
  url: string;
  /** Put a block (a `getBlock` json-encoded result) at a slot. */
  setBlock(slot: number, block: unknown): void;
  /** A slot with no block: left out of getBlocks, getBlock answers -32007. */
  setSkipped(slot: number): void;
  /** The tips the node reports per commitment. */
  setTip(tip: { finalized: number; confirmed?: number; processed?: number }): void;
  inject(fault: Fault): void;
  clearFaults(): void;
  /** Requests seen, by method. */
  calls: Record<string, number>;
  /** Faults served, by kind. */
  served: Record<string, number>;
  close(): Promise<void>;
}

const SLOT_SKIPPED = -32007;
const BLOCK_NOT_AVAILABLE = -32004;

/** What the replayed node holds: its blocks, skipped slots and tips, the faults armed, and what it has seen. */
interface ReplayState {
  blocks: Map<number, unknown>;
  skipped: Set<number>;
  tip: { finalized: number; confirmed: number; processed: number };
  faults: Fault[];
  calls: Record<string, number>;
  served: Record<string, number>;
  /** Requests held unanswered (the timeout fault), released on close(). */
  held: Set<http.ServerResponse>;
}

type Answer = { result?: unknown; error?: { code: number; message: string } };

export async function startReplayRpc(): Promise<ReplayRpc> {
  const st: ReplayState = {
    blocks: new Map(),
    skipped: new Set(),
    tip: { finalized: 0, confirmed: 0, processed: 0 },
    faults: [],
    calls: {},
    served: {},
    held: new Set(),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(st, Buffer.concat(chunks), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    setBlock: (slot, block) => {
      st.blocks.set(slot, block);
      st.skipped.delete(slot);
    },
    setSkipped: (slot) => {
      st.skipped.add(slot);
      st.blocks.delete(slot);
    },
    setTip: (t) => {
      st.tip = {
        finalized: t.finalized,
        confirmed: t.confirmed ?? t.finalized,
        processed: t.processed ?? t.confirmed ?? t.finalized,
      };
    },
    inject: (f) => st.faults.push({ ...f }),
    clearFaults: () => {
      st.faults = [];
    },
    calls: st.calls,
    served: st.served,
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of st.held) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The first armed fault matching a request, spent by one and counted as served. */
function takeFault(st: ReplayState, method: string, slot: number | undefined): Fault | undefined {
  const f = st.faults.find(
    (x) => x.times > 0 && (x.method === undefined || x.method === method) && (x.slot === undefined || x.slot === slot),
  );
  if (!f) return undefined;
  f.times -= 1;
  st.served[f.kind] = (st.served[f.kind] ?? 0) + 1;
  return f;
}

/** The tip at the commitment a request asks for (finalized by default). */
function tipFor(st: ReplayState, params: unknown[]): number {
  const cfg = params.find((p) => p && typeof p === 'object') as { commitment?: string } | undefined;
  const c = cfg?.commitment ?? 'finalized';
  return c === 'processed' ? st.tip.processed : c === 'confirmed' ? st.tip.confirmed : st.tip.finalized;
}

/** One JSON-RPC request's body: its fault if one is armed for it, else its answer. */
function handle(st: ReplayState, raw: Buffer, res: http.ServerResponse): void {
  let body: { id?: unknown; method?: string; params?: unknown[] };
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
    return;
  }
  const method = String(body.method);
  const params = Array.isArray(body.params) ? body.params : [];
  st.calls[method] = (st.calls[method] ?? 0) + 1;
  const fault = takeFault(st, method, method === 'getBlock' ? Number(params[0]) : undefined);
  const send = (payload: unknown, status = 200) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  };
  switch (fault?.kind) {
    case 'http429':
      return send({ jsonrpc: '2.0', id: body.id, error: { code: 429, message: 'Too many requests' } }, 429);
    case 'http500':
      return send({ jsonrpc: '2.0', id: body.id, error: { code: -32603, message: 'Internal error' } }, 500);
    case 'timeout':
      // Hold the request without answering; the client's deadline fires. Released on close().
      st.held.add(res);
      res.on('close', () => st.held.delete(res));
      return;
    case 'invalidJson':
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{"jsonrpc":"2.0","res');
    case 'slotSkipped':
      return send({
        jsonrpc: '2.0',
        id: body.id,
        error: { code: SLOT_SKIPPED, message: `Slot ${params[0]} was skipped` },
      });
    case 'blockNotAvailable':
      return send({
        jsonrpc: '2.0',
        id: body.id,
        error: { code: BLOCK_NOT_AVAILABLE, message: `Block not available for slot ${params[0]}` },
      });
  }
  send({ jsonrpc: '2.0', id: body.id, ...answer(st, method, params) });
}

function answer(st: ReplayState, method: string, params: unknown[]): Answer {
  const { blocks, skipped } = st;
  switch (method) {
    case 'getSlot':
      return { result: tipFor(st, params) };
    case 'getBlockHeight':
      return { result: tipFor(st, params) };
    case 'getHealth':
      return { result: 'ok' };
    case 'getBlocks': {
      const start = Number(params[0]);
      const top = tipFor(st, params);
      const end = typeof params[1] === 'number' ? Math.min(params[1], top) : top;
      const out: number[] = [];
      for (const s of [...blocks.keys()].sort((a, b) => a - b))
        if (s >= start && s <= end && !skipped.has(s)) out.push(s);
      return { result: out };
    }
    case 'getBlock': {
      const slot = Number(params[0]);
      if (slot > tipFor(st, params))
        return { error: { code: BLOCK_NOT_AVAILABLE, message: `Block not available for slot ${slot}` } };
      if (skipped.has(slot) || !blocks.has(slot)) {
        return {
          error: {
            code: SLOT_SKIPPED,
            message: `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`,
          },
        };
      }
      return { result: blocks.get(slot) };
    }
    case 'getTransaction':
      return getTransaction(st, params);
    case 'getSignatureStatuses':
      return getSignatureStatuses(st, params);
    default:
      return { error: { code: -32601, message: 'Method not found' } };
  }
}

/** The transaction with this first signature in a stored block at or below the asked commitment's tip. */
function getTransaction(st: ReplayState, params: unknown[]): Answer {
  const signature = String(params[0]);
  const top = tipFor(st, params);
  for (const [slot, block] of st.blocks) {
    if (slot > top || st.skipped.has(slot)) continue;
    const b = block as { blockTime?: number; transactions?: Array<{ transaction?: { signatures?: string[] } }> };
    const tx = b.transactions?.find((t) => t.transaction?.signatures?.[0] === signature);
    if (tx) return { result: { slot, blockTime: b.blockTime ?? null, ...tx } };
  }
  return { result: null };
}

/** Each signature's transaction in a stored block, with the highest commitment its slot has reached. */
function getSignatureStatuses(st: ReplayState, params: unknown[]): Answer {
  const { tip } = st;
  const sigs = Array.isArray(params[0]) ? (params[0] as unknown[]).map(String) : [];
  const context = { slot: tip.processed || tip.confirmed || tip.finalized };
  const statusOf = (signature: string) => {
    for (const [slot, block] of st.blocks) {
      if (st.skipped.has(slot) || slot > Math.max(tip.processed, tip.confirmed, tip.finalized)) continue;
      const b = block as {
        transactions?: Array<{ transaction?: { signatures?: string[] }; meta?: { err?: unknown } }>;
      };
      const tx = b.transactions?.find((t) => t.transaction?.signatures?.[0] === signature);
      if (!tx) continue;
      const level = slot <= tip.finalized ? 'finalized' : slot <= tip.confirmed ? 'confirmed' : 'processed';
      const err = tx.meta?.err ?? null;
      return {
        slot,
        confirmations: level === 'finalized' ? null : 0,
        err,
        status: err === null ? { Ok: null } : { Err: err },
        confirmationStatus: level,
      };
    }
    return null;
  };
  return { result: { context, value: sigs.map(statusOf) } };
}

// ---------------------------------------------------------------------------------------------------------
// Blocks and transactions in the wire format of `getBlock` / `getTransaction` with `encoding: "json"`.

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const SYSTEM_PROGRAM = '11111111111111111111111111111111';

export function randomAddress(): string {
  return bs58.encode(crypto.randomBytes(32));
}

export function randomSignature(): string {
  return bs58.encode(crypto.randomBytes(64));
}

function u64le(x: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(x);
  return b;
}

export interface TransferSpec {
  amount: bigint;
  decimals?: number;
  mint?: string;
  owner?: string;
  source?: string;
  destination?: string;
  destinationOwner?: string;
  /** Solana Pay reference keys appended to the instruction's accounts. */
  references?: string[];
  signature?: string;
  /** Transaction version: 'legacy' (default) or 0. */
  version?: 'legacy' | 0;
}

/** A successful SPL Token `transferChecked` transaction, json-encoded as a block entry (no `slot`/`blockTime`). */
export function transferCheckedTx(spec: TransferSpec): { meta: unknown; transaction: unknown; version: 'legacy' | 0 } {
  const owner = spec.owner ?? randomAddress();
  const source = spec.source ?? randomAddress();
  const destination = spec.destination ?? randomAddress();
  const destinationOwner = spec.destinationOwner ?? randomAddress();
  const mint = spec.mint ?? randomAddress();
  const decimals = spec.decimals ?? 6;
  const refs = spec.references ?? [];
  // Account order: signer+writable, writable unsigned, then readonly unsigned (references, mint, program).
  const accountKeys = [owner, source, destination, ...refs, mint, TOKEN_PROGRAM];
  const iMint = 3 + refs.length;
  const iProgram = iMint + 1;
  const data = bs58.encode(Buffer.concat([Buffer.from([12]), u64le(spec.amount), Buffer.from([decimals])]));
  const before = 10n ** 12n;
  const tokenBalance = (accountIndex: number, who: string, amount: bigint) => ({
    accountIndex,
    mint,
    owner: who,
    programId: TOKEN_PROGRAM,
    uiTokenAmount: {
      amount: amount.toString(),
      decimals,
      uiAmount: Number(amount) / 10 ** decimals,
      uiAmountString: (Number(amount) / 10 ** decimals).toString(),
    },
  });
  const message: Record<string, unknown> = {
    accountKeys,
    header: { numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 2 + refs.length, numRequiredSignatures: 1 },
    instructions: [
      { accounts: [1, iMint, 2, 0, ...refs.map((_, k) => 3 + k)], data, programIdIndex: iProgram, stackHeight: null },
    ],
    recentBlockhash: randomAddress(),
  };
  const version = spec.version ?? 'legacy';
  if (version === 0) message.addressTableLookups = [];
  const lamports = accountKeys.map(() => 2_039_280);
  lamports[0] = 1_000_000_000;
  const post = [...lamports];
  post[0] -= 5000;
  const meta: Record<string, unknown> = {
    computeUnitsConsumed: 6200,
    err: null,
    fee: 5000,
    innerInstructions: [],
    logMessages: [
      `Program ${TOKEN_PROGRAM} invoke [1]`,
      'Program log: Instruction: TransferChecked',
      `Program ${TOKEN_PROGRAM} success`,
    ],
    postBalances: post,
    postTokenBalances: [tokenBalance(1, owner, before - spec.amount), tokenBalance(2, destinationOwner, spec.amount)],
    preBalances: lamports,
    preTokenBalances: [tokenBalance(1, owner, before), tokenBalance(2, destinationOwner, 0n)],
    rewards: [],
    status: { Ok: null },
  };
  if (version === 0) meta.loadedAddresses = { readonly: [], writable: [] };
  return { meta, transaction: { message, signatures: [spec.signature ?? randomSignature()] }, version };
}

/** A `getBlock` result (json encoding, full transaction details, no rewards). */
export function blockAt(slot: number, transactions: unknown[], opts: { parentSlot?: number; blockTime?: number } = {}) {
  return {
    blockHeight: slot,
    blockTime: opts.blockTime ?? 1_780_000_000 + slot,
    blockhash: randomAddress(),
    parentSlot: opts.parentSlot ?? Math.max(0, slot - 1),
    previousBlockhash: randomAddress(),
    transactions,
  };
}
