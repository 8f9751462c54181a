// execute_payout called by another program: a small caller (tests/programs/caller, built here with the project's SBF
// toolchain) forwards it by CPI, on both binaries, in both runtimes. The payout works once when the payout authority
// signs through the caller (its wallet signs the transaction, or the authority is the caller's own PDA and the caller
// signs for it), and a caller cannot pay without that signature, replay an op_id, or pass a foreign op account.
import { join } from 'node:path';
import { expect } from 'chai';
import { PublicKey, SystemProgram, TransactionInstruction, type Keypair } from '@solana/web3.js';
import { buildCrate, ROOT } from '../../testkit/toolchain/build';
import { keypair } from '../../testkit/program/keys';
import {
  PROGRAM_ID,
  sharedRuntime,
  type OtherProgram,
  type Runtime,
  type TxResult,
} from '../../testkit/program/runtimes';
import { describeProgram } from './suite';
import {
  ANCHOR_ERRORS as A,
  createWorld,
  ERROR_CODES as E,
  fetchOperation,
  opIdFor,
  opPda,
  coder,
  payoutIx,
  program,
  tokenBalance,
  type World,
} from '../../testkit/program/world';

/** The caller's program id (any id: it signs only for its own PDAs, which the runtime derives from it). */
const CALLER_ID = new PublicKey('Ca11erProgram111111111111111111111111111111');
/** The caller's modes (tests/programs/caller/src/lib.rs). */
const FORWARD = 0;
const FORWARD_TWICE = 1;
const SIGN_AS_AUTHORITY = 2;
const CLAIM_SIGNATURE = 3;
const [CALLER_AUTHORITY, CALLER_AUTHORITY_BUMP] = PublicKey.findProgramAddressSync(
  [Buffer.from('authority')],
  CALLER_ID,
);

let caller: OtherProgram | undefined;
/** Builds the caller once per process (build.sh: a no-op when nothing changed). */
function callerProgram(): OtherProgram {
  if (!caller) {
    const so = join(ROOT, 'target/sbf/test-programs/oncepay_test_caller.so');
    buildCrate(join(ROOT, 'tests/programs/caller'), so);
    caller = { programId: CALLER_ID, so };
  }
  return caller;
}

/** The caller's instruction: `mode`, the authority PDA's bump, then execute_payout's data, its accounts after the payout program. */
function callerIx(mode: number, payout: TransactionInstruction): TransactionInstruction {
  return new TransactionInstruction({
    programId: CALLER_ID,
    keys: [{ pubkey: PROGRAM_ID, isSigner: false, isWritable: false }, ...payout.keys],
    data: Buffer.concat([Buffer.from([mode, CALLER_AUTHORITY_BUMP]), payout.data]),
  });
}

/**
 * The events the payout program emitted, wherever it ran in the call stack. (@coral-xyz/anchor's EventParser reads
 * only a top-level program's `Program data:` lines, so it finds nothing under a caller.)
 */
function eventsOfPayoutProgram(logs: string[]): Array<{ name: string; data: Record<string, unknown> }> {
  const stack: string[] = [];
  const events = [];
  for (const line of logs) {
    const invoke = /^Program (\S+) invoke \[\d+\]$/.exec(line);
    if (invoke) stack.push(invoke[1]);
    else if (/^Program \S+ (success|failed)/.test(line)) stack.pop();
    else if (line.startsWith('Program data: ') && stack.at(-1) === PROGRAM_ID.toBase58()) {
      const event = coder.events.decode(line.slice('Program data: '.length));
      if (event) events.push(event);
    }
  }
  return events;
}

function expectCode(r: TxResult, code: number): void {
  expect(r.ok, `expected failure ${code}, got success`).to.equal(false);
  expect(r.customCode, `${r.error}\n${r.logs.join('\n')}`).to.equal(code);
}

function expectOk(r: TxResult): void {
  expect(r.ok, `${r.error}\n${r.logs.join('\n')}`).to.equal(true);
}

describeProgram('program execute_payout called by another program', (runtimeName, binary) => {
  let rt: Runtime;
  let w: World;

  beforeEach(async function () {
    rt = await sharedRuntime(runtimeName, binary, [callerProgram()]);
    w = await createWorld(rt);
  });

  /** Vault and recipient balances and the op account: what a refused call must leave as it was. */
  async function expectNothingMoved(opId: Uint8Array): Promise<void> {
    expect(await tokenBalance(rt, w.merchant.vault)).to.equal(1_000_000_000n);
    expect(await tokenBalance(rt, w.recipient)).to.equal(0n);
    expect(await rt.getAccount(opPda(w.merchant.pda, opId)[0])).to.equal(null);
  }

  /** Sends the caller's instruction; `signers` sign the outer transaction (the fee payer always does). */
  async function call(mode: number, payout: TransactionInstruction, signers: Keypair[] = []): Promise<TxResult> {
    return w.send([callerIx(mode, payout)], signers);
  }

  it('pays once when the payout authority signs the transaction the caller forwards; a replay answers OperationAlreadyConsumed', async function () {
    const opId = opIdFor('cpi-once');
    const ix = await payoutIx(w, { opId, amount: 700n });
    const first = await call(FORWARD, ix, [w.merchant.payoutAuthority]);
    expectOk(first);
    expect(first.logs.some((l) => l.startsWith(`Program ${PROGRAM_ID.toBase58()} invoke [2]`))).to.equal(true);
    expect(await tokenBalance(rt, w.recipient)).to.equal(700n);
    expect((await fetchOperation(rt, opPda(w.merchant.pda, opId)[0]))!.amount.toString()).to.equal('700');
    const [event] = eventsOfPayoutProgram(first.logs);
    expect(event?.name).to.equal('payoutExecuted');
    expect(BigInt((event!.data.amount as { toString(): string }).toString())).to.equal(700n);

    expectCode(await call(FORWARD, ix, [w.merchant.payoutAuthority]), E.OperationAlreadyConsumed);
    // And directly, without the caller: the same op_id is paid, whoever asks.
    expectCode(await w.send([ix], [w.merchant.payoutAuthority]), E.OperationAlreadyConsumed);
    expect(await tokenBalance(rt, w.recipient)).to.equal(700n);
    expect(await tokenBalance(rt, w.merchant.vault)).to.equal(1_000_000_000n - 700n);
  });

  it("pays once when the payout authority is the caller's PDA and the caller signs for it", async function () {
    const rotate = await program.methods
      .setPayoutAuthority(CALLER_AUTHORITY)
      .accountsStrict({ merchantAuthority: w.merchant.authority.publicKey, merchant: w.merchant.pda })
      .instruction();
    expectOk(await w.send([rotate], [w.merchant.authority]));
    const opId = opIdFor('cpi-pda');
    const ix = await payoutIx(w, { opId, amount: 900n, payoutAuthority: CALLER_AUTHORITY });
    ix.keys[0].isSigner = false; // nobody can sign a PDA's transaction signature: the caller signs the CPI
    expectOk(await call(SIGN_AS_AUTHORITY, ix));
    expect(await tokenBalance(rt, w.recipient)).to.equal(900n);
    expectCode(await call(SIGN_AS_AUTHORITY, ix), E.OperationAlreadyConsumed);
    expect(await tokenBalance(rt, w.recipient)).to.equal(900n);
    // The PDA's signature exists only inside its program's CPI: forwarded unsigned, the payout is refused.
    const other = await payoutIx(w, { opId: opIdFor('cpi-pda-2'), amount: 1n, payoutAuthority: CALLER_AUTHORITY });
    other.keys[0].isSigner = false;
    expectCode(await call(FORWARD, other), A.AccountNotSigner);
  });

  it("cannot pay without the payout authority's signature", async function () {
    const opId = opIdFor('cpi-unsigned');
    // Forwarded as received, unsigned: the payout program refuses the missing signature.
    const unsigned = await payoutIx(w, { opId, amount: 5n });
    unsigned.keys[0].isSigner = false;
    expectCode(await call(FORWARD, unsigned), A.AccountNotSigner);
    // Marked signer by the caller without a signature: the runtime refuses the CPI (privilege escalation).
    const claimed = await call(CLAIM_SIGNATURE, unsigned);
    expect(claimed.ok).to.equal(false);
    expect(claimed.customCode).to.equal(null);
    expect(claimed.logs.join('\n')).to.match(/signer privilege escalated/i);
    // Signed by the caller's own PDA, which is not this merchant's payout authority.
    const asCaller = await payoutIx(w, { opId, amount: 5n, payoutAuthority: CALLER_AUTHORITY });
    asCaller.keys[0].isSigner = false;
    expectCode(await call(SIGN_AS_AUTHORITY, asCaller), E.Unauthorized);
    await expectNothingMoved(opId);
  });

  it('cannot replay an op_id: the same payout twice in one caller instruction fails whole, then pays once', async function () {
    const opId = opIdFor('cpi-twice');
    const ix = await payoutIx(w, { opId, amount: 11n });
    // The second CPI answers 6000; a failed CPI fails the caller's instruction, so the first is undone with it.
    expectCode(await call(FORWARD_TWICE, ix, [w.merchant.payoutAuthority]), E.OperationAlreadyConsumed);
    await expectNothingMoved(opId);
    expectOk(await call(FORWARD, ix, [w.merchant.payoutAuthority]));
    expectCode(await call(FORWARD_TWICE, ix, [w.merchant.payoutAuthority]), E.OperationAlreadyConsumed);
    expect(await tokenBalance(rt, w.recipient)).to.equal(11n);
  });

  it('cannot pass a foreign op account: another op_id’s (paid or not), another merchant’s, or one the caller owns', async function () {
    const opId = opIdFor('cpi-foreign');
    const send = async (operation: PublicKey) =>
      call(FORWARD, await payoutIx(w, { opId, amount: 5n, operation }), [w.merchant.payoutAuthority]);
    // Another op_id's op account, not yet paid, then paid (an existing record of this program).
    const [otherOp] = opPda(w.merchant.pda, opIdFor('cpi-foreign-other'));
    expectCode(await send(otherOp), A.ConstraintSeeds);
    expect(await rt.getAccount(otherOp)).to.equal(null);
    const paidOther = await payoutIx(w, { opId: opIdFor('cpi-foreign-other'), amount: 3n });
    expectOk(await call(FORWARD, paidOther, [w.merchant.payoutAuthority]));
    expectCode(await send(otherOp), A.ConstraintSeeds);
    // The op address of this op_id under another merchant.
    const stranger = await w.addMerchant(0n);
    expectCode(await send(opPda(stranger.pda, opId)[0]), A.ConstraintSeeds);
    // An account the caller program owns, created by a transaction (any program may own accounts of any layout).
    const owned = keypair();
    const create = SystemProgram.createAccount({
      fromPubkey: w.feePayer.publicKey,
      newAccountPubkey: owned.publicKey,
      lamports: 10_000_000,
      space: 153,
      programId: CALLER_ID,
    });
    expectOk(await w.send([create], [owned]));
    expectCode(await send(owned.publicKey), A.ConstraintSeeds);
    expect(await rt.getAccount(opPda(w.merchant.pda, opId)[0])).to.equal(null);
    expect(await tokenBalance(rt, w.recipient)).to.equal(3n);
  });
});
