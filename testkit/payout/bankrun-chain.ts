// The payout executor's PayoutChain over solana-bankrun's BanksClient (the compiled program in a real bank), and
// the setup I/O for it. Bankrun has no address index, so opAccountSignatures returns nothing: a winner outside
// this journal is then recorded without a signature (the op account's slot still proves it).
import * as fs from 'fs';
import * as path from 'path';
import { Keypair, PublicKey, SystemProgram, Transaction, TransactionError } from '@solana/web3.js';
import { ProgramTestContext, start } from 'solana-bankrun';
import { PayoutChain, SignatureStatus } from '../../app/payout/chain';
import { decodeOpAccount } from '../../app/payout/program';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { SetupIo } from './setup';
import { requireProgramSo } from '../../common/program-binary';

/**
 * Bankrun reports errors as text (`Error processing Instruction 0: custom program error: 0x1770`); turn that
 * back into the JSON-RPC shape `{ InstructionError: [0, { Custom: 6000 }] }` a node returns.
 */
export function parseBankrunError(err: string | null): TransactionError | null {
  if (err === null) return null;
  const hex = /Instruction (\d+): custom program error: 0x([0-9a-f]+)/i.exec(err);
  if (hex) return { InstructionError: [Number(hex[1]), { Custom: parseInt(hex[2], 16) }] };
  const dbg = /InstructionError\((\d+), Custom\((\d+)\)\)/.exec(err);
  if (dbg) return { InstructionError: [Number(dbg[1]), { Custom: Number(dbg[2]) }] };
  return err;
}

/** bankrun with the program binary ONCEPAY_PROGRAM selects (common/program-binary.ts). */
export async function startBankrun(so: string = requireProgramSo()): Promise<ProgramTestContext> {
  // A missing program makes bankrun hang rather than fail: check first.
  if (!fs.existsSync(so)) throw new Error(`${so} is missing: run \`make program\``);
  process.env.RUST_LOG ??= 'error'; // bankrun logs every instruction at debug otherwise
  // bankrun loads `<name>.so` from SBF_OUT_DIR.
  process.env.SBF_OUT_DIR = path.dirname(so);
  process.env.BPF_OUT_DIR = path.dirname(so);
  return start([{ name: path.basename(so, '.so'), programId: new PublicKey(ONCEPAY_PROGRAM_ID) }], []);
}

/** Re-submissions of a transaction the bank refused as "Account in use" (see sendRawTransaction). */
const ACCOUNT_IN_USE_TRIES = 1000;

export function bankrunChain(ctx: ProgramTestContext): PayoutChain {
  const banks = ctx.banksClient;
  // Bankrun retires blockhashes (after ~1,400 transactions here) while its block height stays put, so height
  // alone never shows expiry. The bank is the only node and everything it does is final: a blockhash it
  // refused as not found is expired for good.
  const retired = new Set<string>();
  return {
    async latestBlockhash() {
      const r = await banks.getLatestBlockhash('confirmed');
      if (!r) throw new Error('no blockhash');
      return { blockhash: r[0], lastValidBlockHeight: r[1] };
    },
    async sendRawTransaction(bytes) {
      const tx = Transaction.from(bytes);
      for (let tries = 1; ; tries++) {
        const r = await banks.tryProcessTransaction(tx);
        if (r.result && /BlockhashNotFound|Blockhash not found/i.test(r.result)) retired.add(tx.recentBlockhash!);
        // The bank runs concurrent transactions side by side and refuses one whose writable accounts (the vault,
        // the fee payer) another holds at that moment, recording nothing: a node's scheduler would queue it, so
        // this one does. (Left as is, the sender waits a rebroadcast interval, and a one-shot sender forever.)
        if (!(r.result && /account in use/i.test(r.result)) || tries >= ACCOUNT_IN_USE_TRIES) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    async signatureStatuses(signatures) {
      const r = await banks.getTransactionStatuses(signatures);
      return r.map((s): SignatureStatus => {
        if (!s) return { found: false };
        return { found: true, settled: true, slot: s.slot, err: parseBankrunError(s.err) };
      });
    },
    async blockhashExpired({ blockhash, lastValidBlockHeight }) {
      return retired.has(blockhash) || (await banks.getBlockHeight('finalized')) > lastValidBlockHeight;
    },
    async getOpAccount(pda, programId, commitment) {
      const a = await banks.getAccount(new PublicKey(pda), commitment);
      if (!a || !a.owner.equals(new PublicKey(programId))) return null;
      return decodeOpAccount(a.data);
    },
    async opAccountsData(pdas, programId, commitment) {
      // The bank has no getMultipleAccounts: one getAccount each, side by side (in this process, no round trip).
      const program = new PublicKey(programId);
      const accounts = await Promise.all(pdas.map((pda) => banks.getAccount(new PublicKey(pda), commitment)));
      return accounts.map((a) => (a && a.owner.equals(program) ? a.data : null));
    },
    async opAccountSignatures() {
      return [];
    },
  };
}

export function bankrunIo(ctx: ProgramTestContext): SetupIo {
  const banks = ctx.banksClient;
  return {
    async send(ixs, signers) {
      const [blockhash] = (await banks.getLatestBlockhash())!;
      const tx = new Transaction({ feePayer: signers[0].publicKey, recentBlockhash: blockhash }).add(...ixs);
      tx.sign(...signers);
      await banks.processTransaction(tx);
    },
    async rent(space) {
      return Number((await banks.getRent()).minimumBalance(BigInt(space)));
    },
    async fund(to) {
      await this.send(
        [SystemProgram.transfer({ fromPubkey: ctx.payer.publicKey, toPubkey: to, lamports: 10_000_000_000 })],
        [ctx.payer],
      );
    },
  };
}

export async function bankrunTokenBalance(ctx: ProgramTestContext, account: PublicKey): Promise<bigint> {
  const a = await ctx.banksClient.getAccount(account);
  if (!a) throw new Error(`no token account ${account.toBase58()}`);
  return Buffer.from(a.data).readBigUInt64LE(64);
}

export { Keypair };
