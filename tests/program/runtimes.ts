// One interface over the two Solana runtimes the program is tested in, so every case runs in both:
// solana-bankrun 0.4.0 (Solana 1.18, legacy SPL Token) and LiteSVM 1.5.0 (Agave 3, p-token).
// Transactions are built and signed with @solana/web3.js v1 (as the SDK does) and handed to LiteSVM as wire bytes.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Keypair, PublicKey, type AccountInfo, type Transaction } from '@solana/web3.js';
import { Clock as BankrunClock, start, type ProgramTestContext } from 'solana-bankrun';
import { Clock as LiteSvmClock, FailedTransactionMetadata, LiteSVM } from 'litesvm';
import { address, getTransactionDecoder, lamports as kitLamports, type Address } from '@solana/kit';

// bankrun logs every program log line to stderr at DEBUG unless told otherwise (read when it first starts).
process.env.RUST_LOG ??= 'error';

export const PROGRAM_ID = new PublicKey('5EjQQXLjWwmaZXgrv8tnwG7Gqwwrdzvcn7KjL1eAySUj');
export const REPO_ROOT = resolve(__dirname, '../..');
export const PROGRAM_SO = join(REPO_ROOT, 'target/deploy/oncepay.so');
const FIXTURES_DIR = join(REPO_ROOT, 'tests/fixtures');

export type RuntimeName = 'bankrun' | 'litesvm';
export const RUNTIMES: RuntimeName[] = ['bankrun', 'litesvm'];

export interface TxResult {
  ok: boolean;
  /** Transaction-level error text as the runtime reports it; null on success. */
  error: string | null;
  /** The custom program error number (e.g. 6000), when the failure is one. */
  customCode: number | null;
  logs: string[];
  computeUnits: bigint;
}

export interface Runtime {
  name: RuntimeName;
  /** A key the runtime itself funded (bankrun's genesis payer, a LiteSVM airdrop): no account was written. */
  payer: Keypair;
  /**
   * Moves to a later slot, and at least one epoch on (the program reads both from the Clock sysvar). bankrun warps
   * for real unless an account was written with setAccount (then its warp panics the process, so the Clock sysvar
   * is moved instead); LiteSVM warps and sets the Clock's epoch.
   */
  warpToSlot(slot: bigint): Promise<void>;
  /** A recent blockhash; distinct after every `send` (LiteSVM) or warp, so retries are new transactions. */
  blockhash(): Promise<string>;
  send(tx: Transaction): Promise<TxResult>;
  /** Submits every transaction before any result is awaited (they were all built against the same state). */
  sendAll(txs: Transaction[]): Promise<TxResult[]>;
  getAccount(key: PublicKey): Promise<AccountInfo<Buffer> | null>;
  setAccount(key: PublicKey, info: { lamports: bigint; data: Uint8Array; owner: PublicKey; executable?: boolean }): void;
  slot(): Promise<bigint>;
  epoch(): Promise<bigint>;
}

/** Slots per epoch when a runtime does not say (mainnet's). */
const SLOTS_PER_EPOCH = 432_000n;

function laterEpoch(fromSlot: bigint, fromEpoch: bigint, toSlot: bigint): bigint {
  const more = (toSlot - fromSlot) / SLOTS_PER_EPOCH;
  return fromEpoch + (more > 0n ? more : 1n);
}

/** `custom program error: 0x1770` → 6000, from a runtime error string or log line. */
export function parseCustomCode(text: string | null | undefined): number | null {
  const m = /custom program error: (0x[0-9a-fA-F]+)/.exec(text ?? '') ?? /Custom\((\d+)\)/.exec(text ?? '');
  if (!m) return null;
  return m[1].startsWith('0x') ? parseInt(m[1], 16) : Number(m[1]);
}

/** Copies the built program where bankrun looks for it (a missing fixture hangs bankrun, so fail first). */
export function ensureProgramFixture(): string {
  if (!existsSync(PROGRAM_SO)) {
    throw new Error(`${PROGRAM_SO} is missing: build it with toolchain/sbf/build.sh (make program)`);
  }
  mkdirSync(FIXTURES_DIR, { recursive: true });
  const dest = join(FIXTURES_DIR, 'oncepay.so');
  copyFileSync(PROGRAM_SO, dest);
  return dest;
}

export async function createRuntime(name: RuntimeName): Promise<Runtime> {
  ensureProgramFixture();
  return name === 'bankrun' ? createBankrun() : createLiteSvm();
}

async function createBankrun(): Promise<Runtime> {
  // bankrun resolves `<name>.so` under tests/fixtures of the working directory.
  const cwd = process.cwd();
  process.chdir(REPO_ROOT);
  let context: ProgramTestContext;
  try {
    context = await start([{ name: 'oncepay', programId: PROGRAM_ID }], []);
  } finally {
    process.chdir(cwd);
  }
  const client = context.banksClient;
  let wroteAccounts = false;
  const toResult = (r: Awaited<ReturnType<typeof client.tryProcessTransaction>>): TxResult => {
    const logs = r.meta?.logMessages ?? [];
    return {
      ok: r.result === null,
      error: r.result,
      customCode: r.result === null ? null : parseCustomCode(r.result),
      logs,
      computeUnits: r.meta?.computeUnitsConsumed ?? 0n,
    };
  };
  return {
    name: 'bankrun',
    payer: context.payer,
    async blockhash() {
      // Not context.lastBlockhash: it goes stale after a few hundred transactions and after a warp.
      const latest = await client.getLatestBlockhash();
      if (!latest) throw new Error('bankrun: no latest blockhash');
      return latest[0];
    },
    async send(tx) {
      return toResult(await client.tryProcessTransaction(tx));
    },
    async sendAll(txs) {
      const results = await Promise.all(txs.map((tx) => client.tryProcessTransaction(tx)));
      // bankrun runs concurrent transactions in parallel batches; one that loses an account lock is refused with
      // "Account in use" without executing. A client rebroadcasts the same bytes, so do that (bounded).
      for (let i = 0; i < txs.length; i++) {
        for (let tries = 0; tries < 20 && /Account in use/.test(results[i].result ?? ''); tries++) {
          results[i] = await client.tryProcessTransaction(txs[i]);
        }
      }
      return results.map(toResult);
    },
    async getAccount(key) {
      const a = await client.getAccount(key);
      return a ? { ...a, data: Buffer.from(a.data) } : null;
    },
    setAccount(key, info) {
      wroteAccounts = true;
      context.setAccount(key, {
        lamports: Number(info.lamports),
        data: info.data,
        owner: info.owner,
        executable: info.executable ?? false,
      });
    },
    async slot() {
      return (await client.getClock()).slot;
    },
    async epoch() {
      return (await client.getClock()).epoch;
    },
    async warpToSlot(slot) {
      if (!wroteAccounts) {
        context.warpToSlot(slot);
        return;
      }
      // bankrun's own warpToSlot panics ("calculate_accounts_hash_with_verify mismatch") once accounts were
      // written with setAccount, so move the Clock sysvar instead: that is what the program observes.
      const c = await client.getClock();
      const epoch = laterEpoch(c.slot, c.epoch, slot);
      context.setClock(new BankrunClock(slot, c.unixTimestamp, epoch, epoch + 1n, c.unixTimestamp + 400_000n));
    },
  };
}

async function createLiteSvm(): Promise<Runtime> {
  const svm = new LiteSVM();
  svm.addProgramFromFile(address(PROGRAM_ID.toBase58()), PROGRAM_SO);
  const decoder = getTransactionDecoder();
  const payer = Keypair.generate();
  svm.airdrop(address(payer.publicKey.toBase58()), kitLamports(1_000_000_000_000n));
  const sendOne = (tx: Transaction): TxResult => {
    const kitTx = decoder.decode(tx.serialize({ requireAllSignatures: true, verifySignatures: false }));
    const r = svm.sendTransaction(kitTx as never);
    if (r instanceof FailedTransactionMetadata) {
      const meta = r.meta();
      const err: unknown = r.err();
      let customCode: number | null = null;
      // InstructionError(index, Custom(code)) is an object whose err() is an object with `code`.
      if (err && typeof err === 'object' && typeof (err as { err?: unknown }).err === 'function') {
        const inner: unknown = (err as { err(): unknown }).err();
        if (inner && typeof inner === 'object' && 'code' in inner) customCode = Number((inner as { code: number }).code);
      }
      const logs = meta.logs();
      return {
        ok: false,
        error: String(err),
        customCode: customCode ?? parseCustomCode(logs.join('\n')),
        logs,
        computeUnits: meta.computeUnitsConsumed(),
      };
    }
    return { ok: true, error: null, customCode: null, logs: r.logs(), computeUnits: r.computeUnitsConsumed() };
  };
  return {
    name: 'litesvm',
    payer,
    async blockhash() {
      return svm.latestBlockhash();
    },
    async send(tx) {
      const r = sendOne(tx);
      svm.expireBlockhash(); // a retry must be a new transaction, as on a real cluster
      return r;
    },
    async sendAll(txs) {
      // LiteSVM executes synchronously; every transaction was signed before the first one runs.
      const results = txs.map(sendOne);
      svm.expireBlockhash();
      return results;
    },
    async getAccount(key) {
      const a = svm.getAccount(address(key.toBase58()));
      if (!a.exists) return null;
      return {
        lamports: Number(a.lamports),
        data: Buffer.from(a.data),
        owner: new PublicKey(a.programAddress),
        executable: a.executable,
        rentEpoch: 0,
      };
    },
    setAccount(key, info) {
      svm.setAccount({
        address: address(key.toBase58()) as Address,
        data: info.data,
        executable: info.executable ?? false,
        lamports: kitLamports(info.lamports),
        programAddress: address(info.owner.toBase58()),
        space: BigInt(info.data.length),
      } as never);
    },
    async slot() {
      return svm.getClock().slot;
    },
    async epoch() {
      return svm.getClock().epoch;
    },
    async warpToSlot(slot) {
      const c = svm.getClock();
      svm.warpToSlot(slot);
      const epoch = laterEpoch(c.slot, c.epoch, slot);
      svm.setClock(new LiteSvmClock(slot, c.unixTimestamp, epoch, epoch + 1n, c.unixTimestamp + 400_000n));
      svm.expireBlockhash();
    },
  };
}

