// Runs programs built from `.so` files in solana-bankrun (Solana 1.18 runtime).
import { readFileSync } from 'node:fs';
import { Keypair, PublicKey, Transaction, TransactionInstruction } from '@solana/web3.js';
import { start, type ProgramTestContext } from 'solana-bankrun';
import { deployTransactions, type PlainIx } from '../upgradeable-loader';
import type { Deployed, RunResult } from './litesvm-run';

// bankrun logs every program log line to stdout at debug level; results are
// read from the transaction metadata instead (only when the caller set nothing).
process.env.RUST_LOG ??= 'error';

// Programs placed in genesis as executable accounts of BPF loader v2, so no
// tests/fixtures/<name>.so is needed (a missing fixture hangs bankrun).
const LOADER_V2 = new PublicKey('BPFLoader2111111111111111111111111111111111');

export interface BankrunHarness {
  context: ProgramTestContext;
  send(instructions: TransactionInstruction[], signers?: Keypair[]): Promise<RunResult>;
  invoke(programId: string, data: Uint8Array): Promise<RunResult>;
  deployUpgradeable(elf: Buffer): Promise<Deployed>;
  deployAll(elfs: Buffer[]): Promise<Deployed[]>;
}

export async function startBankrun(programs: Record<string, string> = {}): Promise<BankrunHarness> {
  const accounts = Object.entries(programs).map(([id, path]) => {
    const data = readFileSync(path);
    return {
      address: new PublicKey(id),
      info: { lamports: 1_000_000_000_000, data, owner: LOADER_V2, executable: true },
    };
  });
  const context = await start([], accounts);
  const payer = context.payer;

  async function send(instructions: TransactionInstruction[], signers: Keypair[] = []): Promise<RunResult> {
    const tx = new Transaction();
    tx.add(...instructions);
    // A fresh blockhash each time: reusing lastBlockhash fails after ~200 transactions.
    const latest = await context.banksClient.getLatestBlockhash();
    tx.recentBlockhash = latest ? latest[0] : context.lastBlockhash;
    tx.feePayer = payer.publicKey;
    tx.sign(payer, ...signers);
    const r = await context.banksClient.tryProcessTransaction(tx);
    const meta = r.meta;
    return {
      ok: r.result === null,
      logs: meta ? meta.logMessages : [],
      returnData: Buffer.from(meta?.returnData?.data ?? []),
      computeUnits: meta ? meta.computeUnitsConsumed : 0n,
      error: r.result,
    };
  }

  const toWeb3 = (ix: PlainIx) =>
    new TransactionInstruction({
      programId: new PublicKey(ix.programId),
      keys: ix.keys.map((k) => ({ pubkey: new PublicKey(k.pubkey), isSigner: k.isSigner, isWritable: k.isWritable })),
      data: ix.data,
    });

  /** The buffer, write and deploy transactions of one program, up to the first that fails. */
  async function deploySteps(elf: Buffer): Promise<Deployed> {
    const buffer = Keypair.generate();
    const program = Keypair.generate();
    const rent = await context.banksClient.getRent();
    const txs = deployTransactions({
      payer: payer.publicKey.toBase58(),
      buffer: buffer.publicKey.toBase58(),
      program: program.publicKey.toBase58(),
      elf,
      rent: (space) => rent.minimumBalance(space),
    });
    for (const tx of txs) {
      const needs = new Set(tx.flatMap((ix) => ix.keys.filter((k) => k.isSigner).map((k) => k.pubkey)));
      const signers = [buffer, program].filter((k) => needs.has(k.publicKey.toBase58()));
      const r = await send(tx.map(toWeb3), signers);
      if (!r.ok) return { programId: program.publicKey.toBase58(), failure: r };
    }
    return { programId: program.publicKey.toBase58(), failure: null };
  }

  /**
   * Deploys every ELF, then moves one slot on: deployed in slot N, executable from slot N + 1. One warp for them all,
   * before any of them runs: larger warps made the next transaction time out in bankrun 0.4, and so does a warp
   * once a program deployed by a transaction has run (a harness's programs are deployed together, up front).
   */
  async function deployAll(elfs: Buffer[]): Promise<Deployed[]> {
    const out: Deployed[] = [];
    for (const elf of elfs) out.push(await deploySteps(elf));
    if (out.some((d) => d.failure === null)) context.warpToSlot((await context.banksClient.getSlot()) + 1n);
    return out;
  }

  return {
    context,
    send,
    invoke: (programId, data) =>
      send([new TransactionInstruction({ programId: new PublicKey(programId), keys: [], data: Buffer.from(data) })]),
    deployUpgradeable: async (elf) => (await deployAll([elf]))[0],
    deployAll,
  };
}
