// Runs one instruction of a program loaded from a `.so` in LiteSVM (Agave 3.x runtime).
import { readFileSync } from 'node:fs';
import {
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type TransactionSigner,
} from '@solana/kit';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';
import { deployTransactions, type PlainIx } from '../upgradeable-loader';

export interface RunResult {
  ok: boolean;
  logs: string[];
  returnData: Buffer;
  computeUnits: bigint;
  error: string | null;
}

export interface LiteSvmHarness {
  svm: LiteSVM;
  payer: TransactionSigner;
  /** Signers travel inside the instructions' account metas (kit). */
  send(instructions: Instruction[]): Promise<RunResult>;
  invoke(programId: string, data: Uint8Array): Promise<RunResult>;
  /** Deploys through the upgradeable loader (deploy-time verification); returns the failing step, if any. */
  deployUpgradeable(elf: Buffer): Promise<Deployed>;
  /** deployUpgradeable for each ELF in turn, all executable once the last is deployed. */
  deployAll(elfs: Buffer[]): Promise<Deployed[]>;
}

/** A program deployed through the upgradeable loader, or the step that failed (then it is not deployed). */
export interface Deployed {
  programId: string;
  failure: RunResult | null;
}

const ROLE_READONLY = 0;
const ROLE_WRITABLE = 1;
const ROLE_READONLY_SIGNER = 2;
const ROLE_WRITABLE_SIGNER = 3;

/** A fresh LiteSVM with a funded payer; `programs` maps program id → `.so` path (loaded with the default loader). */
export async function createLiteSvm(programs: Record<string, string> = {}): Promise<LiteSvmHarness> {
  const svm = new LiteSVM();
  for (const [id, path] of Object.entries(programs)) svm.addProgram(address(id), readFileSync(path));
  const payer = await generateKeyPairSigner();
  svm.airdrop(payer.address, lamports(100_000_000_000n));

  async function send(instructions: Instruction[]): Promise<RunResult> {
    const blockhash = svm.latestBlockhash();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash, lastValidBlockHeight: 1_000_000n } as never, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    const tx = await signTransactionMessageWithSigners(message);
    const result = svm.sendTransaction(tx as never);
    svm.expireBlockhash(); // identical later transactions must not collide
    if (result instanceof FailedTransactionMetadata) {
      const meta = result.meta();
      return {
        ok: false,
        logs: meta.logs(),
        returnData: Buffer.from(meta.returnData().data()),
        computeUnits: meta.computeUnitsConsumed(),
        error: String(result.err()),
      };
    }
    return {
      ok: true,
      logs: result.logs(),
      returnData: Buffer.from(result.returnData().data()),
      computeUnits: result.computeUnitsConsumed(),
      error: null,
    };
  }

  function toKit(ix: PlainIx, signers: Map<string, TransactionSigner>): Instruction {
    return {
      programAddress: address(ix.programId),
      accounts: ix.keys.map((k) => {
        const role = k.isSigner
          ? k.isWritable
            ? ROLE_WRITABLE_SIGNER
            : ROLE_READONLY_SIGNER
          : k.isWritable
            ? ROLE_WRITABLE
            : ROLE_READONLY;
        const signer = k.isSigner ? signers.get(k.pubkey) : undefined;
        return signer ? { address: address(k.pubkey), role, signer } : { address: address(k.pubkey), role };
      }),
      data: ix.data,
    } as Instruction;
  }

  async function deploySteps(elf: Buffer): Promise<Deployed> {
    const buffer = await generateKeyPairSigner();
    const program = await generateKeyPairSigner();
    const signers = new Map<string, TransactionSigner>([
      [payer.address, payer],
      [buffer.address, buffer],
      [program.address, program],
    ]);
    const txs = deployTransactions({
      payer: payer.address,
      buffer: buffer.address,
      program: program.address,
      elf,
      rent: (space) => svm.minimumBalanceForRentExemption(space),
    });
    for (const tx of txs) {
      const r = await send(tx.map((ix) => toKit(ix, signers)));
      if (!r.ok) return { programId: program.address, failure: r };
    }
    return { programId: program.address, failure: null };
  }

  async function deployAll(elfs: Buffer[]): Promise<Deployed[]> {
    const out: Deployed[] = [];
    for (const elf of elfs) out.push(await deploySteps(elf));
    // A program deployed in slot N becomes executable from slot N + 1.
    if (out.some((d) => d.failure === null)) svm.warpToSlot(svm.getClock().slot + 1n);
    return out;
  }

  return {
    svm,
    payer,
    send,
    deployUpgradeable: async (elf) => (await deployAll([elf]))[0],
    deployAll,
    invoke: (programId, data) => send([{ programAddress: programId as Address, accounts: [], data }]),
  };
}
