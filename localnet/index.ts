// startLocalnet: the real SVM (LiteSVM) behind our JSON-RPC layer, with a handle for tests (slots, faults, restart).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LiteSVM } from 'litesvm';
import { OncepayError } from '../common/errors';
import type { Logger } from 'pino';
import { logger } from '../common/log';
import { Chain, ProgramSpec, createChain } from './chain';
import { LOCALNET_CODES } from '../common/errors/codes';
import { DropRule, FailRule, ForgetRule, ResponseFaults, createResponseFaults } from './faults';
import type { GeyserDropRule, GeyserServer } from './geyser/server';
import { LedgerStore, createLedgerStore } from './persist';
import { RpcServer, startRpcServer } from './server';
import type { TokenProgramChoice } from './token-program';

export { MAX_BLOCKHASH_AGE } from './chain';
export { ONCEPAY_PROGRAM_ID } from './program-ids';
export type { ProgramSpec } from './chain';
export type { TokenProgramChoice } from './token-program';

export interface LocalnetOptions {
  /** 0 (default) = an ephemeral port. Always bound to 127.0.0.1. */
  port?: number;
  /** Slot duration; 0 = manual (advance with `advanceSlots`). Default 400. */
  slotMs?: number;
  /** Slots between the tip and the finalized block. Default 32. */
  finalityDepth?: number;
  programs?: ProgramSpec[];
  /** Ledger folder; default a temporary folder removed by stop(). */
  ledgerDir?: string;
  /** Start from an empty ledger even if ledgerDir holds one. */
  reset?: boolean;
  /** Also serve websockets on port+1 (web3.js's default). Default true. */
  wsOnNextPort?: boolean;
  /**
   * The SPL Token program: `p-token` (LiteSVM's, default) or `legacy` (spl_token-3.5.0, what a 3.1 validator runs:
   * its compute units and logs; toolchain/spl-token-legacy/fetch.sh provides it).
   */
  tokenProgram?: TokenProgramChoice;
  /** Also serve the Yellowstone gRPC (Geyser) Subscribe service on 127.0.0.1 (port 0 = ephemeral). Default off. */
  geyser?: { port?: number; xToken?: string; replaySlots?: number; serverPingMs?: number };
}

export interface LocalnetFaults {
  /** Execute, then destroy the socket (or delay the answer) for the next `count` requests calling `method`. */
  dropNextResponses(rule: DropRule): void;
  /** Answer the next `count` requests with 429 / 500, or hang them without executing (`timeout`). */
  failNext(rule: FailRule): void;
  /**
   * Answer the next `count` getSignatureStatuses requests as a node without the transaction history does: from
   * the status cache (the last 300 slots) alone, whatever searchTransactionHistory asks.
   */
  forgetHistory(rule?: ForgetRule): void;
  /** The given (future) slot produces no block; getBlock answers -32007 for it. */
  skipSlot(slot: number): void;
  /** Produce MAX_BLOCKHASH_AGE + 1 blocks now, so every blockhash handed out so far is expired. */
  expireBlockhashesNow(): void;
  /** End the open Yellowstone streams with UNAVAILABLE, now or after some more transaction updates each. */
  dropGeyserStreams(rule?: GeyserDropRule): void;
  /** End every open websocket abruptly (no close frame); returns how many. */
  dropWebsockets(): number;
  clear(): void;
}

export interface LocalnetHandle {
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  /** Ports serving websockets: the RPC port, and port+1 when it was free. */
  readonly wsPorts: number[];
  readonly ledgerDir: string;
  /** The Yellowstone gRPC endpoint (http://127.0.0.1:port), or null without `geyser`. */
  readonly grpcUrl: string | null;
  readonly geyser: GeyserServer | null;
  /** The live LiteSVM (a new instance after restart). */
  readonly svm: LiteSVM;
  readonly chain: Chain;
  readonly faults: LocalnetFaults;
  advanceSlots(n?: number): void;
  stop(): Promise<void>;
  /** Stop and start again on the same port; keepLedger=false starts from genesis. */
  restart(opts: { keepLedger: boolean }): Promise<void>;
}

/** What a localnet keeps across restarts: its options, ledger and faults, and the parts of the current run. */
interface LocalnetState {
  readonly opts: LocalnetOptions;
  readonly slotMs: number;
  readonly finalityDepth: number;
  readonly ownDir: boolean;
  readonly ledgerDir: string;
  readonly store: LedgerStore;
  readonly responseFaults: ResponseFaults;
  readonly log: Logger;
  chain: Chain | null;
  server: RpcServer | null;
  geyser: GeyserServer | null;
  port: number;
  grpcPort: number;
  running: boolean;
}

function checkTiming(opts: LocalnetOptions): { slotMs: number; finalityDepth: number } {
  const slotMs = opts.slotMs ?? 400;
  const finalityDepth = opts.finalityDepth ?? 32;
  if (!Number.isInteger(slotMs) || slotMs < 0)
    throw new OncepayError(LOCALNET_CODES.INVALID_OPTION, `slotMs must be a non-negative integer, got ${slotMs}`);
  if (!Number.isInteger(finalityDepth) || finalityDepth < 0) {
    throw new OncepayError(
      LOCALNET_CODES.INVALID_OPTION,
      `finalityDepth must be a non-negative integer, got ${finalityDepth}`,
    );
  }
  return { slotMs, finalityDepth };
}

/** The chain of the current (or last) run; set by the first boot, before any handle exists. */
function chainOf(state: LocalnetState): Chain {
  if (!state.chain) throw new OncepayError(LOCALNET_CODES.INVALID_OPTION, 'the localnet has not started');
  return state.chain;
}

function serverOf(state: LocalnetState): RpcServer {
  if (!state.server) throw new OncepayError(LOCALNET_CODES.INVALID_OPTION, 'the localnet has not started');
  return state.server;
}

function dropGeyser(state: LocalnetState, rule: GeyserDropRule = {}): void {
  if (!state.geyser) throw new OncepayError(LOCALNET_CODES.INVALID_OPTION, 'the geyser service is not running');
  state.geyser.dropStreams(rule);
}

async function boot(state: LocalnetState): Promise<void> {
  const { opts } = state;
  const chain = createChain({
    slotMs: state.slotMs,
    finalityDepth: state.finalityDepth,
    programs: opts.programs,
    ledger: state.store,
    tokenProgram: opts.tokenProgram,
  });
  state.chain = chain;
  const server = await startRpcServer({
    chain,
    faults: state.responseFaults,
    host: '127.0.0.1',
    port: state.port,
    wsOnNextPort: opts.wsOnNextPort ?? true,
    extraAdmin: (action, body) => {
      if (action !== 'drop-geyser-streams') return undefined;
      dropGeyser(state, { afterTransactions: Number(body.afterTransactions ?? 0) });
      return { ok: true };
    },
  });
  state.server = server;
  state.port = server.port;
  if (opts.geyser) {
    // Loaded only when asked for: it brings the Yellowstone client's native module.
    const { startGeyserServer } = await import('./geyser/server');
    state.geyser = await startGeyserServer({ chain, host: '127.0.0.1', ...opts.geyser, port: state.grpcPort });
    state.grpcPort = state.geyser.port;
  }
  chain.start();
  state.running = true;
  state.log.info(
    { url: `http://127.0.0.1:${state.port}`, ledgerDir: state.ledgerDir, slot: chain.tipSlot() },
    'localnet up',
  );
}

async function halt(state: LocalnetState): Promise<void> {
  if (!state.running) return;
  state.running = false;
  await state.geyser?.close();
  state.geyser = null;
  await serverOf(state).close();
  chainOf(state).stop();
}

function faultsOf(state: LocalnetState): LocalnetFaults {
  const { responseFaults } = state;
  return {
    dropNextResponses: (r) => responseFaults.dropNextResponses(r),
    failNext: (r) => responseFaults.failNext(r),
    forgetHistory: (r) => responseFaults.forgetHistory(r ?? {}),
    skipSlot: (slot) => chainOf(state).skipSlot(slot),
    expireBlockhashesNow: () => chainOf(state).expireBlockhashesNow(),
    dropGeyserStreams: (rule) => dropGeyser(state, rule),
    dropWebsockets: () => serverOf(state).dropWebsockets(),
    clear: () => responseFaults.clear(),
  };
}

function handleOf(state: LocalnetState): LocalnetHandle {
  return {
    get url() {
      return `http://127.0.0.1:${state.port}`;
    },
    get wsUrl() {
      return `ws://127.0.0.1:${state.port}`;
    },
    get port() {
      return state.port;
    },
    get wsPorts() {
      const { wsPort } = serverOf(state);
      return wsPort === state.port ? [state.port] : [state.port, wsPort];
    },
    ledgerDir: state.ledgerDir,
    get grpcUrl() {
      return state.geyser ? state.geyser.url : null;
    },
    get geyser() {
      return state.geyser;
    },
    get svm() {
      return chainOf(state).svm;
    },
    get chain() {
      return chainOf(state);
    },
    faults: faultsOf(state),
    advanceSlots(n = 1) {
      chainOf(state).advance(n);
    },
    async stop() {
      await halt(state);
      if (state.ownDir) fs.rmSync(state.ledgerDir, { recursive: true, force: true });
    },
    async restart({ keepLedger }) {
      await halt(state);
      if (!keepLedger) state.store.wipe();
      state.responseFaults.clear();
      await boot(state);
    },
  };
}

export async function startLocalnet(opts: LocalnetOptions = {}): Promise<LocalnetHandle> {
  const log = logger('localnet');
  const { slotMs, finalityDepth } = checkTiming(opts);
  const ownDir = opts.ledgerDir === undefined;
  const ledgerDir = opts.ledgerDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-localnet-'));
  const store = createLedgerStore(ledgerDir);
  if (opts.reset) store.wipe();
  const state: LocalnetState = {
    opts,
    slotMs,
    finalityDepth,
    ownDir,
    ledgerDir,
    store,
    responseFaults: createResponseFaults(),
    log,
    chain: null,
    server: null,
    geyser: null,
    port: opts.port ?? 0,
    grpcPort: opts.geyser?.port ?? 0,
    running: false,
  };
  try {
    await boot(state);
  } catch (e) {
    if (ownDir) fs.rmSync(ledgerDir, { recursive: true, force: true });
    throw e;
  }
  return handleOf(state);
}
