// startLocalnet: the real SVM (LiteSVM) behind our JSON-RPC layer, with a handle for tests (slots, faults, restart).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LiteSVM } from 'litesvm';
import { OncepayError } from '../common/errors';
import { logger } from '../common/log';
import { Chain, ProgramSpec, createChain } from './chain';
import { LOCALNET_CODES } from '../common/errors/codes';
import { DropRule, FailRule, ForgetRule, createResponseFaults } from './faults';
import type { GeyserDropRule, GeyserServer } from './geyser/server';
import { createLedgerStore } from './persist';
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

export async function startLocalnet(opts: LocalnetOptions = {}): Promise<LocalnetHandle> {
  const log = logger('localnet');
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
  const ownDir = opts.ledgerDir === undefined;
  const ledgerDir = opts.ledgerDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-localnet-'));
  const store = createLedgerStore(ledgerDir);
  if (opts.reset) store.wipe();
  const responseFaults = createResponseFaults();

  let chain: Chain;
  let server: RpcServer;
  let geyser: GeyserServer | null = null;
  let port = opts.port ?? 0;
  let grpcPort = opts.geyser?.port ?? 0;
  const dropGeyser = (rule: GeyserDropRule = {}): void => {
    if (!geyser) throw new OncepayError(LOCALNET_CODES.INVALID_OPTION, 'the geyser service is not running');
    geyser.dropStreams(rule);
  };
  let running = false;

  const boot = async (): Promise<void> => {
    chain = createChain({
      slotMs,
      finalityDepth,
      programs: opts.programs,
      ledger: store,
      tokenProgram: opts.tokenProgram,
    });
    server = await startRpcServer({
      chain,
      faults: responseFaults,
      host: '127.0.0.1',
      port,
      wsOnNextPort: opts.wsOnNextPort ?? true,
      extraAdmin: (action, body) => {
        if (action !== 'drop-geyser-streams') return undefined;
        dropGeyser({ afterTransactions: Number(body.afterTransactions ?? 0) });
        return { ok: true };
      },
    });
    port = server.port;
    if (opts.geyser) {
      // Loaded only when asked for: it brings the Yellowstone client's native module.
      const { startGeyserServer } = await import('./geyser/server');
      geyser = await startGeyserServer({ chain, host: '127.0.0.1', ...opts.geyser, port: grpcPort });
      grpcPort = geyser.port;
    }
    chain.start();
    running = true;
    log.info({ url: `http://127.0.0.1:${port}`, ledgerDir, slot: chain.tipSlot() }, 'localnet up');
  };
  const halt = async (): Promise<void> => {
    if (!running) return;
    running = false;
    await geyser?.close();
    geyser = null;
    await server.close();
    chain.stop();
  };
  try {
    await boot();
  } catch (e) {
    if (ownDir) fs.rmSync(ledgerDir, { recursive: true, force: true });
    throw e;
  }

  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get wsUrl() {
      return `ws://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    get wsPorts() {
      return server.wsPort === port ? [port] : [port, server.wsPort];
    },
    ledgerDir,
    get grpcUrl() {
      return geyser ? geyser.url : null;
    },
    get geyser() {
      return geyser;
    },
    get svm() {
      return chain.svm;
    },
    get chain() {
      return chain;
    },
    faults: {
      dropNextResponses: (r) => responseFaults.dropNextResponses(r),
      failNext: (r) => responseFaults.failNext(r),
      forgetHistory: (r) => responseFaults.forgetHistory(r ?? {}),
      skipSlot: (slot) => chain.skipSlot(slot),
      expireBlockhashesNow: () => chain.expireBlockhashesNow(),
      dropGeyserStreams: (rule) => dropGeyser(rule),
      dropWebsockets: () => server.dropWebsockets(),
      clear: () => responseFaults.clear(),
    },
    advanceSlots(n = 1) {
      chain.advance(n);
    },
    async stop() {
      await halt();
      if (ownDir) fs.rmSync(ledgerDir, { recursive: true, force: true });
    },
    async restart({ keepLedger }) {
      await halt();
      if (!keepLedger) store.wipe();
      responseFaults.clear();
      await boot();
    },
  };
}
