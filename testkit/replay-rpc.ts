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

export async function startReplayRpc(): Promise<ReplayRpc> {
  const blocks = new Map<number, unknown>();
  const skipped = new Set<number>();
  let tip = { finalized: 0, confirmed: 0, processed: 0 };
  let faults: Fault[] = [];
  const calls: Record<string, number> = {};
  const served: Record<string, number> = {};
  const held = new Set<http.ServerResponse>();

  function takeFault(method: string, slot: number | undefined): Fault | undefined {
    const f = faults.find(
      (x) =>
        x.times > 0 && (x.method === undefined || x.method === method) && (x.slot === undefined || x.slot === slot),
    );
    if (!f) return undefined;
    f.times -= 1;
    served[f.kind] = (served[f.kind] ?? 0) + 1;
    return f;
  }

  function tipFor(params: unknown[]): number {
    const cfg = params.find((p) => p && typeof p === 'object') as { commitment?: string } | undefined;
    const c = cfg?.commitment ?? 'finalized';
    return c === 'processed' ? tip.processed : c === 'confirmed' ? tip.confirmed : tip.finalized;
  }

  function answer(method: string, params: unknown[]): { result?: unknown; error?: { code: number; message: string } } {
    switch (method) {
      case 'getSlot':
        return { result: tipFor(params) };
      case 'getBlockHeight':
        return { result: tipFor(params) };
      case 'getHealth':
        return { result: 'ok' };
      case 'getBlocks': {
        const start = Number(params[0]);
        const top = tipFor(params);
        const end = typeof params[1] === 'number' ? Math.min(params[1], top) : top;
        const out: number[] = [];
        for (const s of [...blocks.keys()].sort((a, b) => a - b))
          if (s >= start && s <= end && !skipped.has(s)) out.push(s);
        return { result: out };
      }
      case 'getBlock': {
        const slot = Number(params[0]);
        if (slot > tipFor(params))
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
      case 'getTransaction': {
        // The transaction with this first signature in a stored block at or below the asked commitment's tip.
        const signature = String(params[0]);
        const top = tipFor(params);
        for (const [slot, block] of blocks) {
          if (slot > top || skipped.has(slot)) continue;
          const b = block as { blockTime?: number; transactions?: Array<{ transaction?: { signatures?: string[] } }> };
          const tx = b.transactions?.find((t) => t.transaction?.signatures?.[0] === signature);
          if (tx) return { result: { slot, blockTime: b.blockTime ?? null, ...tx } };
        }
        return { result: null };
      }
      case 'getSignatureStatuses': {
        // Each signature's transaction in a stored block, with the highest commitment its slot has reached.
        const sigs = Array.isArray(params[0]) ? (params[0] as unknown[]).map(String) : [];
        const context = { slot: tip.processed || tip.confirmed || tip.finalized };
        const statusOf = (signature: string) => {
          for (const [slot, block] of blocks) {
            if (skipped.has(slot) || slot > Math.max(tip.processed, tip.confirmed, tip.finalized)) continue;
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
      default:
        return { error: { code: -32601, message: 'Method not found' } };
    }
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: { id?: unknown; method?: string; params?: unknown[] };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
        return;
      }
      const method = String(body.method);
      const params = Array.isArray(body.params) ? body.params : [];
      calls[method] = (calls[method] ?? 0) + 1;
      const fault = takeFault(method, method === 'getBlock' ? Number(params[0]) : undefined);
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
          held.add(res);
          res.on('close', () => held.delete(res));
          return;
        case 'invalidJson':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end('{"jsonrpc":"2.0","res');
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
      send({ jsonrpc: '2.0', id: body.id, ...answer(method, params) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    setBlock: (slot, block) => {
      blocks.set(slot, block);
      skipped.delete(slot);
    },
    setSkipped: (slot) => {
      skipped.add(slot);
      blocks.delete(slot);
    },
    setTip: (t) => {
      tip = {
        finalized: t.finalized,
        confirmed: t.confirmed ?? t.finalized,
        processed: t.processed ?? t.confirmed ?? t.finalized,
      };
    },
    inject: (f) => faults.push({ ...f }),
    clearFaults: () => {
      faults = [];
    },
    calls,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of held) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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
