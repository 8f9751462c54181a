// One interface over the two Solana runtimes the program is tested in, so every case runs in both:
// solana-bankrun 0.4.0 (Solana 1.18, legacy SPL Token) and LiteSVM 1.5.0 (Agave 3, p-token). In each, the binary
// under test (tests/programs/binaries.ts: the Anchor program and its lean twin) is deployed at the program id through
// the BPF upgradeable loader's DeployWithMaxDataLen, which runs the loader's deploy-time ELF verification.
// Transactions are built and signed with @solana/web3.js v1 (as the SDK does) and handed to LiteSVM as wire bytes.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Keypair, PublicKey, Transaction, TransactionInstruction, type AccountInfo } from '@solana/web3.js';
import {
  Clock as BankrunClock,
  Rent as BankrunRent,
  start,
  type AddedAccount,
  type ProgramTestContext,
} from 'solana-bankrun';
import { Clock as LiteSvmClock, FailedTransactionMetadata, LiteSVM, Rent as LiteSvmRent } from 'litesvm';
import { address, getTransactionDecoder, lamports as kitLamports, type Address } from '@solana/kit';
import { deployWithMaxDataLenIx, LOADER_V3 } from '../upgradeable-loader';
import type { ProgramBinary } from '../../common/program-binary';
import { until } from '../until';
import { requireBinary } from './binaries';
import { keypair } from './keys';
import { recordRuntime, recordTransactions } from './differential';

// bankrun logs every program log line to stderr at DEBUG unless told otherwise (read when it first starts).
process.env.RUST_LOG ??= 'error';

export const PROGRAM_ID = new PublicKey('5EjQQXLjWwmaZXgrv8tnwG7Gqwwrdzvcn7KjL1eAySUj');
export const REPO_ROOT = resolve(__dirname, '../..');

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
  /** The program binary deployed at PROGRAM_ID. */
  binary: ProgramBinary;
  /** A key the runtime itself funded (bankrun's genesis payer, a LiteSVM airdrop): no account was written. */
  payer: Keypair;
  /**
   * Moves to a later slot, and at least one epoch on (the program reads both from the Clock sysvar). LiteSVM warps
   * and sets the Clock's epoch. bankrun 0.4 cannot warp here: once a program deployed by a transaction has run, its
   * next transaction after a warp never returns ("the request exceeded its deadline"), and a warp after setAccount
   * panics; so bankrun moves the Clock sysvar, which is what the program observes.
   */
  warpToSlot(slot: bigint): Promise<void>;
  /** A recent blockhash, distinct from the one of the last `send`/`sendAll`, so retries are new transactions. */
  blockhash(): Promise<string>;
  send(tx: Transaction): Promise<TxResult>;
  /** Submits every transaction before any result is awaited (they were all built against the same state). */
  sendAll(txs: Transaction[]): Promise<TxResult[]>;
  getAccount(key: PublicKey): Promise<AccountInfo<Buffer> | null>;
  setAccount(
    key: PublicKey,
    info: { lamports: bigint; data: Uint8Array; owner: PublicKey; executable?: boolean },
  ): void;
  /** The Rent sysvar: lamports per byte-year and the exemption threshold in years. */
  rent(): Promise<{ lamportsPerByteYear: bigint; exemptionThreshold: number }>;
  /** Overwrites the Rent sysvar (lamports per byte-year, exemption threshold in years). */
  setRent(lamportsPerByteYear: bigint, exemptionThreshold: number): Promise<void>;
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

/**
 * The accounts a deploy starts from, written directly: the program account (loader-owned, `Uninitialized`, as a
 * `CreateAccount` signed by the program's keypair would leave it; nobody holds that keypair for this id) and a
 * buffer holding the ELF under `authority` (what `InitializeBuffer` + `Write`s would leave). The deploy itself is a
 * real DeployWithMaxDataLen transaction (see deployInstruction).
 */
function deployAccounts(programId: PublicKey, elf: Buffer, authority: PublicKey, buffer: PublicKey) {
  const lamports = 1_000_000_000_000n; // plenty: rent-exempt for any size
  const bufferData = Buffer.alloc(37 + elf.length);
  bufferData.writeUInt32LE(1, 0); // UpgradeableLoaderState::Buffer
  bufferData[4] = 1; // Some(authority)
  authority.toBuffer().copy(bufferData, 5);
  elf.copy(bufferData, 37);
  const owner = new PublicKey(LOADER_V3);
  return [
    { key: programId, lamports, data: Buffer.alloc(36), owner }, // UpgradeableLoaderState::Uninitialized
    { key: buffer, lamports, data: bufferData, owner },
  ];
}

function deployInstruction(
  payer: PublicKey,
  program: Deploy,
  buffer: PublicKey,
  authority: PublicKey,
): TransactionInstruction {
  const ix = deployWithMaxDataLenIx(
    payer.toBase58(),
    program.programId.toBase58(),
    buffer.toBase58(),
    authority.toBase58(),
    BigInt(program.elf.length),
  );
  return new TransactionInstruction({
    programId: new PublicKey(ix.programId),
    keys: ix.keys.map((k) => ({ pubkey: new PublicKey(k.pubkey), isSigner: k.isSigner, isWritable: k.isWritable })),
    data: ix.data,
  });
}

/** Fails the deploy loudly, with the loader's logs. */
function mustDeploy(r: TxResult, program: Deploy, runtime: RuntimeName): void {
  if (!r.ok)
    throw new Error(
      `deploying ${program.name} through the upgradeable loader failed in ${runtime}: ${r.error}\n${r.logs.join('\n')}`,
    );
}

/** Another program deployed beside the payout program (a test program that calls it, tests/programs/cpi.test.ts). */
export interface OtherProgram {
  programId: PublicKey;
  /** Its `.so`. */
  so: string;
}

/** A program to deploy: its id, its ELF and a name for errors. */
interface Deploy {
  programId: PublicKey;
  elf: Buffer;
  name: string;
}

/** A runtime of its own for the current case (a bank nobody else writes to). Prefer sharedRuntime. */
export async function createRuntime(name: RuntimeName, binary: ProgramBinary): Promise<Runtime> {
  const rt = await newRuntime(name, binary);
  recordRuntime(rt);
  return rt;
}

function newRuntime(name: RuntimeName, binary: ProgramBinary, others: OtherProgram[] = []): Promise<Runtime> {
  const programs: Deploy[] = [
    { programId: PROGRAM_ID, elf: readFileSync(requireBinary(binary)), name: `the ${binary} program` },
    ...others.map((o) => ({ programId: o.programId, elf: readFileSync(o.so), name: o.so })),
  ];
  return name === 'bankrun' ? createBankrun(binary, programs) : createLiteSvm(binary, programs);
}

const shared = new Map<string, Promise<Runtime>>();

/**
 * The one runtime of `name` with `binary` deployed that every case of the process shares. A solana-bankrun bank is
 * never freed: each `start()` leaves 8 threads (accounts-db index flushers among them) running until the process
 * ends, even once nothing refers to it, so a bank per case filled the programs group's process with hundreds of
 * threads. A case on the shared runtime isolates itself the way a case on a real cluster does: its keys are its own
 * (keys.ts seeds them with its runtime and title), so every account it creates is new, and a case that changes
 * what every account sees (the Rent sysvar) puts it back before it ends.
 */
export async function sharedRuntime(
  name: RuntimeName,
  binary: ProgramBinary,
  others: OtherProgram[] = [],
): Promise<Runtime> {
  const key = [name, binary, ...others.map((o) => o.programId.toBase58())].join(' ');
  let made = shared.get(key);
  if (!made) {
    made = newRuntime(name, binary, others);
    shared.set(key, made);
    made.catch(() => shared.delete(key)); // a failed deploy fails this case and is tried again by the next
  }
  const rt = await made;
  recordRuntime(rt);
  return rt;
}

async function createBankrun(binary: ProgramBinary, programs: Deploy[]): Promise<Runtime> {
  const authority = keypair();
  const buffers = programs.map(() => keypair().publicKey);
  // Genesis accounts, not setAccount: bankrun's warp (needed once, to make the deployed programs visible) panics
  // after an account was written with setAccount.
  const genesis: AddedAccount[] = programs
    .flatMap((p, i) => deployAccounts(p.programId, p.elf, authority.publicKey, buffers[i]))
    .map((a) => ({
      address: a.key,
      info: { lamports: Number(a.lamports), data: a.data, owner: a.owner, executable: false },
    }));
  const context: ProgramTestContext = await start([], genesis);
  const client = context.banksClient;
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
  const latestBlockhash = async () => {
    // Not context.lastBlockhash: it goes stale after a few hundred transactions and after a warp.
    const latest = await client.getLatestBlockhash();
    if (!latest) throw new Error('bankrun: no latest blockhash');
    return latest[0];
  };
  // The bank registers a new blockhash every few milliseconds of wall time (6-8 ms measured here), not after each
  // transaction: a repeat built right after a send could get the same one, be the same bytes, and be refused as
  // "already processed" instead of running (LiteSVM expires its blockhash after each send for the same reason).
  // So wait for the next one.
  let lastSent: string | undefined;
  const blockhash = () =>
    until(
      `a bankrun blockhash after ${lastSent}`,
      async () => {
        const latest = await latestBlockhash();
        return latest !== lastSent && latest;
      },
      { timeoutMs: 30_000, intervalMs: 2 },
    );

  // A blockhash is valid only for the next few hundred the bank registers (one every few milliseconds, above): a
  // process starved for seconds between reading a blockhash and sending (the niced programs group on a machine at
  // load 30+) gets "Blockhash not found". The deploy is set-up, not a case: it is signed again with a fresh one.
  for (const [i, program] of programs.entries()) {
    let deployed: TxResult;
    for (let attempt = 1; ; attempt++) {
      const deploy = new Transaction({ feePayer: context.payer.publicKey, recentBlockhash: await blockhash() });
      deploy.add(deployInstruction(context.payer.publicKey, program, buffers[i], authority.publicKey));
      deploy.sign(context.payer, authority);
      lastSent = deploy.recentBlockhash;
      deployed = toResult(await client.tryProcessTransaction(deploy));
      if (deployed.ok || attempt === 3 || !String(deployed.error).includes('Blockhash not found')) break;
    }
    mustDeploy(deployed, program, 'bankrun');
  }
  // Deployed in slot N, executable from slot N + 1 (one slot: larger warps time out in bankrun 0.4).
  context.warpToSlot((await client.getSlot()) + 1n);

  const runtime: Runtime = {
    name: 'bankrun',
    binary,
    payer: context.payer,
    blockhash,
    async send(tx) {
      lastSent = tx.recentBlockhash;
      const r = toResult(await client.tryProcessTransaction(tx));
      recordTransactions(runtime, [tx], [r]);
      return r;
    },
    async sendAll(txs) {
      lastSent = txs.at(-1)?.recentBlockhash;
      const results = await Promise.all(txs.map((tx) => client.tryProcessTransaction(tx)));
      // bankrun runs concurrent transactions in parallel batches; one that loses an account lock is refused with
      // "Account in use" without executing. A client rebroadcasts the same bytes, so do that (bounded).
      for (let i = 0; i < txs.length; i++) {
        for (let tries = 0; tries < 20 && /Account in use/.test(results[i].result ?? ''); tries++) {
          results[i] = await client.tryProcessTransaction(txs[i]);
        }
      }
      const out = results.map(toResult);
      recordTransactions(runtime, txs, out);
      return out;
    },
    async getAccount(key) {
      const a = await client.getAccount(key);
      return a ? { ...a, data: Buffer.from(a.data) } : null;
    },
    setAccount(key, info) {
      context.setAccount(key, {
        lamports: Number(info.lamports),
        data: info.data,
        owner: info.owner,
        executable: info.executable ?? false,
      });
    },
    async rent() {
      const r = await client.getRent();
      return { lamportsPerByteYear: r.lamportsPerByteYear, exemptionThreshold: r.exemptionThreshold };
    },
    async setRent(lamportsPerByteYear, exemptionThreshold) {
      const current = await client.getRent();
      context.setRent(new BankrunRent(lamportsPerByteYear, exemptionThreshold, current.burnPercent));
    },
    async slot() {
      return (await client.getClock()).slot;
    },
    async epoch() {
      return (await client.getClock()).epoch;
    },
    async warpToSlot(slot) {
      // Not context.warpToSlot: see Runtime.warpToSlot.
      const c = await client.getClock();
      const epoch = laterEpoch(c.slot, c.epoch, slot);
      context.setClock(new BankrunClock(slot, c.unixTimestamp, epoch, epoch + 1n, c.unixTimestamp + 400_000n));
    },
  };
  return runtime;
}

async function createLiteSvm(binary: ProgramBinary, programs: Deploy[]): Promise<Runtime> {
  const svm = new LiteSVM();
  const decoder = getTransactionDecoder();
  const payer = keypair();
  svm.airdrop(address(payer.publicKey.toBase58()), kitLamports(1_000_000_000_000n));
  const setAccount: Runtime['setAccount'] = (key, info) => {
    svm.setAccount({
      address: address(key.toBase58()) as Address,
      data: info.data,
      executable: info.executable ?? false,
      lamports: kitLamports(info.lamports),
      programAddress: address(info.owner.toBase58()),
      space: BigInt(info.data.length),
    } as never);
  };
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
        if (inner && typeof inner === 'object' && 'code' in inner)
          customCode = Number((inner as { code: number }).code);
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

  const authority = keypair();
  for (const program of programs) {
    const buffer = keypair().publicKey;
    for (const a of deployAccounts(program.programId, program.elf, authority.publicKey, buffer)) setAccount(a.key, a);
    const deploy = new Transaction({ feePayer: payer.publicKey, recentBlockhash: svm.latestBlockhash() });
    deploy.add(deployInstruction(payer.publicKey, program, buffer, authority.publicKey));
    deploy.sign(payer, authority);
    mustDeploy(sendOne(deploy), program, 'litesvm');
    svm.expireBlockhash();
  }
  // Deployed in slot N, executable from slot N + 1.
  svm.warpToSlot(svm.getClock().slot + 1n);
  svm.expireBlockhash();

  const runtime: Runtime = {
    name: 'litesvm',
    binary,
    payer,
    async blockhash() {
      return svm.latestBlockhash();
    },
    async send(tx) {
      const r = sendOne(tx);
      svm.expireBlockhash(); // a retry must be a new transaction, as on a real cluster
      recordTransactions(runtime, [tx], [r]);
      return r;
    },
    async sendAll(txs) {
      // LiteSVM executes synchronously; every transaction was signed before the first one runs.
      const results = txs.map(sendOne);
      svm.expireBlockhash();
      recordTransactions(runtime, txs, results);
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
    setAccount,
    async rent() {
      const r = svm.getRent();
      return { lamportsPerByteYear: r.lamportsPerByteYear, exemptionThreshold: r.exemptionThreshold };
    },
    async setRent(lamportsPerByteYear, exemptionThreshold) {
      const current = svm.getRent();
      svm.setRent(new LiteSvmRent(lamportsPerByteYear, exemptionThreshold, current.burnPercent));
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
  return runtime;
}
