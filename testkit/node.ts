// The node an end-to-end suite runs against, by the Anchor convention: with ANCHOR_PROVIDER_URL (and ANCHOR_WALLET, a
// keypair file) set — as `anchor test` and `make test-validator` set them — the suites use that node, on which the
// programs are already deployed (solana-test-validator with both in genesis); without them each suite starts its own
// `localnet` as before. Cases that need localnet's admin API (faults, restarts, slot control, the geyser server, the
// LiteSVM inside) call `requireLocalnet`, which skips them on an external node with a printed reason (mocha counts
// them as pending, never as passed).
//
// Environment (external node only):
//   ANCHOR_PROVIDER_URL      the node's JSON-RPC URL
//   ANCHOR_WALLET            a funded keypair file (the fallback when the node has no faucet)
//   ONCEPAY_TEST_WS_URL      its websocket URL (default: the RPC port + 1, the Solana convention)
//   ONCEPAY_TEST_LITE_PROGRAM_ID  where the lean twin is loaded (default ONCEPAY_LITE_TEST_PROGRAM_ID)
//   ONCEPAY_TEST_WAIT_SCALE  how much longer than on localnet a wait may take (default 20: 400 ms slots, ~32-slot
//                            finality on a real validator against 20 ms slots and a few slots on the suites' localnet)
import * as fs from 'node:fs';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram } from '@solana/web3.js';
import type { Context } from 'mocha';
import { LocalnetHandle, LocalnetOptions, ONCEPAY_PROGRAM_ID, startLocalnet } from '../localnet';
import { programSoPath } from '../common/program-binary';
import { airdrop as airdropConfirmed, send } from './cluster';

/**
 * Where the suites find the lean twin (programs/oncepay-lite) beside the Anchor program: both binaries declare the
 * canonical id, but the twin takes its id from the runtime, so a node can carry it at a second address (genesis
 * `--bpf-program <this id> target/deploy/oncepay_lite.so`). No one holds a key for it; it is only an address.
 */
export const ONCEPAY_LITE_TEST_PROGRAM_ID = 'oncepayLiteTwin1111111111111111111111111111';

export interface TestNode {
  readonly url: string;
  readonly wsUrl: string;
  /** true when the suites were given a node (ANCHOR_PROVIDER_URL), false on their own localnet. */
  readonly external: boolean;
  /** The localnet and its admin API, or null on an external node (see requireLocalnet). */
  readonly localnet: LocalnetHandle | null;
  /** A timeout for a wait that takes `localMs` on the suites' localnet, scaled for a real validator. */
  wait(localMs: number): number;
  /** A Connection at `confirmed` (preflight and reads), websocket at wsUrl. */
  connection(): Connection;
  /** Stops the localnet the node started; nothing on an external node. */
  stop(): Promise<void>;
}

export function externalNodeUrl(env: NodeJS.ProcessEnv = process.env): string | null {
  const url = env.ANCHOR_PROVIDER_URL;
  return url === undefined || url === '' ? null : url;
}

/** True when the suites run against a node they were given. */
export function onExternalNode(env: NodeJS.ProcessEnv = process.env): boolean {
  return externalNodeUrl(env) !== null;
}

/** The websocket URL of an RPC URL by the Solana convention: same host, port + 1 (ws/wss for http/https). */
export function wsUrlOf(rpcUrl: string): string {
  const u = new URL(rpcUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  if (u.port !== '') u.port = String(Number(u.port) + 1);
  return u.toString().replace(/\/$/, '');
}

function waitScale(env: NodeJS.ProcessEnv): number {
  const v = Number(env.ONCEPAY_TEST_WAIT_SCALE ?? '20');
  return Number.isFinite(v) && v >= 1 ? v : 20;
}

/** A timeout for a wait that takes `localMs` on the suites' localnet: as is there, scaled on an external node. */
export function scaledWait(localMs: number, env: NodeJS.ProcessEnv = process.env): number {
  return onExternalNode(env) ? Math.ceil(localMs * waitScale(env)) : localMs;
}

/** The node the suite runs against: the given one, or a localnet started with `localnetOptions`. */
export async function startTestNode(localnetOptions: LocalnetOptions = {}): Promise<TestNode> {
  const url = externalNodeUrl();
  if (url !== null) {
    const wsUrl = process.env.ONCEPAY_TEST_WS_URL || wsUrlOf(url);
    return {
      url,
      wsUrl,
      external: true,
      localnet: null,
      wait: (ms) => scaledWait(ms),
      connection: () => connectionTo(url, wsUrl),
      stop: async () => {},
    };
  }
  const net = await startLocalnet({ wsOnNextPort: false, ...localnetOptions });
  return {
    url: net.url,
    wsUrl: net.wsUrl,
    external: false,
    localnet: net,
    wait: (ms) => ms,
    connection: () => connectionTo(net.url, net.wsUrl),
    stop: () => net.stop(),
  };
}

function connectionTo(url: string, wsUrl: string): Connection {
  return new Connection(url, { commitment: 'confirmed', wsEndpoint: wsUrl, disableRetryOnRateLimit: true });
}

/**
 * The localnet of `node`, for a case that needs its admin API; on an external node the case (or, from a hook, the
 * suite) is skipped after printing why.
 */
export function requireLocalnet(ctx: Context, node: TestNode, why: string): LocalnetHandle {
  if (node.localnet) return node.localnet;
  skipOnExternalNode(ctx, why);
  throw new Error('unreachable: mocha skip() throws');
}

/** Skip the running case (or the suite, from a hook) with a printed reason, when the node is external. */
export function skipOnExternalNode(ctx: Context, why: string): void {
  if (!onExternalNode()) return;
  // The reason travels with the case, or from a hook with its suite (tests/reporter.js lists it beside the case).
  // A `before all` hook skips its whole suite (mocha also sets currentTest there: the next case, not the only one).
  type Holder = { skipReason?: string };
  const runnable = ctx.test as unknown as ({ type?: string; title: string; parent?: Holder } & Holder) | undefined;
  const holder =
    runnable?.type === 'test'
      ? runnable
      : runnable?.title.startsWith('"before all"')
        ? runnable.parent
        : ((ctx.currentTest as unknown as Holder | undefined) ?? runnable?.parent);
  if (holder) holder.skipReason = why;
  console.log(`    skipped on an external node: ${why}`);
  ctx.skip();
}

/** The program ids on the node: the Anchor program at the canonical id, the lean twin at a second id. */
export function testProgramIds(): { anchor: string; lite: string } {
  return {
    anchor: ONCEPAY_PROGRAM_ID,
    lite: process.env.ONCEPAY_TEST_LITE_PROGRAM_ID || ONCEPAY_LITE_TEST_PROGRAM_ID,
  };
}

/** The localnet program list that mirrors the validator's genesis: Anchor at the canonical id, the twin beside it. */
export function bothPrograms(): { programId: string; path: string }[] {
  const ids = testProgramIds();
  return [
    { programId: ids.anchor, path: programSoPath('anchor') },
    { programId: ids.lite, path: programSoPath('lite') },
  ].filter((p) => fs.existsSync(p.path));
}

/** ANCHOR_WALLET's keypair (the Anchor convention), or null when unset. */
export function providerWallet(env: NodeJS.ProcessEnv = process.env): Keypair | null {
  const file = env.ANCHOR_WALLET;
  if (!file) return null;
  const p = file.startsWith('~/') ? `${env.HOME}/${file.slice(2)}` : file;
  return Keypair.fromSecretKey(Uint8Array.from(JSON.parse(fs.readFileSync(p, 'utf8')) as number[]));
}

/**
 * `lamports` to `to`: an airdrop from the node's faucet (localnet and solana-test-validator have one), or, when the
 * faucet refuses, a transfer from ANCHOR_WALLET.
 */
export async function fund(connection: Connection, to: PublicKey, lamports = 10 * LAMPORTS_PER_SOL): Promise<void> {
  try {
    await airdropConfirmed(connection, to, lamports);
    return;
  } catch (e) {
    const wallet = providerWallet();
    if (!wallet) throw e;
  }
  const wallet = providerWallet()!;
  await send(connection, [SystemProgram.transfer({ fromPubkey: wallet.publicKey, toPubkey: to, lamports })], [wallet]);
}
