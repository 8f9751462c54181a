// What the Anchor framework answers, from both binaries: the account-type and constraint errors in Anchor's order,
// the log line @coral-xyz/anchor's AnchorError.parse / translateError read, and the review's two findings (a zero
// rent rate, a Multisig where a token account is expected).
import { expect } from 'chai';
import { AnchorError, ProgramError, translateError } from '@coral-xyz/anchor';
import { parseIdlErrors } from '@coral-xyz/anchor/dist/cjs/program/common';
import { createInitializeMultisigInstruction, MULTISIG_SIZE } from '@solana/spl-token';
import { PublicKey, SystemProgram, type Keypair } from '@solana/web3.js';
import idlJson from '../../idl/oncepay.json';
import { keypair } from '../../testkit/program/keys';
import { sharedRuntime, type Runtime, type TxResult } from '../../testkit/program/runtimes';
import { describeProgram } from './suite';
import {
  ANCHOR_ERRORS as A,
  createWorld,
  ERROR_CODES as E,
  fetchOperation,
  opIdFor,
  opPda,
  payout,
  payoutIx,
  program,
  tokenBalance,
  type World,
} from '../../testkit/program/world';

const idlErrors = parseIdlErrors(idlJson as never);

function expectCode(r: TxResult, code: number): void {
  expect(r.ok, `expected failure ${code}, got success`).to.equal(false);
  expect(r.customCode, `${r.error}\n${r.logs.join('\n')}`).to.equal(code);
}

/** A runtime error that is not a custom code (e.g. the token program's InvalidAccountData). */
function expectRuntimeError(r: TxResult, pattern: RegExp): void {
  expect(r.ok).to.equal(false);
  expect(r.customCode, r.logs.join('\n')).to.equal(null);
  expect(r.error, r.logs.join('\n')).to.match(pattern);
}

/**
 * A real Multisig (355 bytes, InitializeMultisig by the token program) whose signer keys put the bytes a token
 * account's layout reads where a careless parser would accept it: offset 108 (state) = 1 ("initialized") and offset
 * 165 (Token-2022's account-type byte) = 2 ("account").
 */
async function createMultisig(w: World): Promise<PublicKey> {
  // Signer i occupies bytes 3 + 32i .. 35 + 32i: 108 is byte 9 of signer 3, 165 is byte 2 of signer 5.
  const signers = Array.from({ length: 6 }, (_, i) => {
    const k = Buffer.from(keypair().publicKey.toBytes());
    if (i === 3) k[9] = 1;
    if (i === 5) k[2] = 2;
    return new PublicKey(k);
  });
  const account = keypair();
  const rent = 10_000_000;
  const create = SystemProgram.createAccount({
    fromPubkey: w.feePayer.publicKey,
    newAccountPubkey: account.publicKey,
    lamports: rent,
    space: MULTISIG_SIZE,
    programId: w.tokenProgram,
  });
  const init = createInitializeMultisigInstruction(account.publicKey, signers, 1, w.tokenProgram);
  const r = await w.send([create, init], [account]);
  expect(r.ok, `${r.error}\n${r.logs.join('\n')}`).to.equal(true);
  const data = (await w.rt.getAccount(account.publicKey))!.data;
  expect(data.length).to.equal(355);
  expect([data[108], data[165]]).to.deep.equal([1, 2]);
  return account.publicKey;
}

describeProgram('program errors as Anchor answers them', (runtimeName, binary) => {
  let rt: Runtime;
  let w: World;

  beforeEach(async function () {
    rt = await sharedRuntime(runtimeName, binary);
    w = await createWorld(rt);
  });

  it('a read-only payer → ConstraintMut, after every account type passed', async function () {
    const opId = opIdFor('ro-payer');
    const ix = await payoutIx(w, { opId, amount: 5n, payer: w.merchant.payoutAuthority.publicKey });
    ix.keys[1].isWritable = false;
    const r = await w.send([ix], [w.merchant.payoutAuthority]);
    expectCode(r, A.ConstraintMut);
    expect(AnchorError.parse(r.logs)!.error.origin).to.equal('payer');
  });

  it('set_paused on a read-only merchant → ConstraintMut, caused by account merchant', async function () {
    const ix = await program.methods
      .setPaused(true)
      .accountsStrict({ merchantAuthority: w.merchant.authority.publicKey, merchant: w.merchant.pda })
      .instruction();
    ix.keys[1].isWritable = false;
    const r = await w.send([ix], [w.merchant.authority]);
    expectCode(r, A.ConstraintMut);
    expect(AnchorError.parse(r.logs)!.error.origin).to.equal('merchant');
  });

  it('a vault that does not exist → AccountNotInitialized; a System account with lamports → AccountOwnedByWrongProgram', async function () {
    const opId = opIdFor('no-vault');
    expectCode(await payout(w, { opId, amount: 5n, vault: keypair().publicKey }), A.AccountNotInitialized);
    const wallet = keypair().publicKey;
    await w.fund(wallet);
    expectCode(await payout(w, { opId, amount: 5n, vault: wallet }), A.AccountOwnedByWrongProgram);
  });

  it('fewer accounts than declared → AccountNotEnoughKeys', async function () {
    const ix = await payoutIx(w, { opId: opIdFor('few'), amount: 5n });
    ix.keys = ix.keys.slice(0, 8);
    expectCode(await w.send([ix], [w.merchant.payoutAuthority]), A.AccountNotEnoughKeys);
  });

  it('bytes after the arguments are ignored (Borsh reads a prefix): pays once', async function () {
    const opId = opIdFor('trailing');
    const ix = await payoutIx(w, { opId, amount: 5n });
    ix.data = Buffer.concat([ix.data, Buffer.from([1, 2, 3])]);
    const r = await w.send([ix], [w.merchant.payoutAuthority]);
    expect(r.ok, `${r.error}\n${r.logs.join('\n')}`).to.equal(true);
    expect(await tokenBalance(rt, w.recipient)).to.equal(5n);
  });

  it('set_paused with a bool byte of 2 → InstructionDidNotDeserialize, config unchanged', async function () {
    const ix = await program.methods
      .setPaused(true)
      .accountsStrict({ merchantAuthority: w.merchant.authority.publicKey, merchant: w.merchant.pda })
      .instruction();
    ix.data[8] = 2;
    expectCode(await w.send([ix], [w.merchant.authority]), A.InstructionDidNotDeserialize);
    const config = program.coder.accounts.decode('merchant', (await rt.getAccount(w.merchant.pda))!.data);
    expect(config.paused).to.equal(false);
  });

  it('a real 355-byte Multisig as vault or as recipient is not a token account → InvalidAccountData, nothing moves', async function () {
    const multisig = await createMultisig(w);
    const opId = opIdFor('multisig');
    expectRuntimeError(
      await payout(w, { opId, amount: 5n, vault: multisig }),
      /invalid account data|InvalidAccountData/i,
    );
    expectRuntimeError(
      await payout(w, { opId, amount: 5n, recipientToken: multisig }),
      /invalid account data|InvalidAccountData/i,
    );
    expect(await rt.getAccount(opPda(w.merchant.pda, opId)[0])).to.equal(null);
    expect(await tokenBalance(rt, w.merchant.vault)).to.equal(1_000_000_000n);
  });

  it('with a zero rent rate an op_id pays at most once: the op account is funded with 1 lamport, never 0', async function () {
    // The runtime is shared by every case (sharedRuntime): the rate is put back however this case ends.
    const rent = await rt.rent();
    await rt.setRent(0n, 2.0);
    try {
      const opId = opIdFor('zero-rent');
      const [op] = opPda(w.merchant.pda, opId);
      const first = await payout(w, { opId, amount: 10n });
      if (runtimeName === 'litesvm') {
        // LiteSVM's runtime rent is the sysvar: a 1-lamport account is rent-exempt at rate 0, and it stays.
        expect(first.ok, `${first.error}\n${first.logs.join('\n')}`).to.equal(true);
        expect((await rt.getAccount(op))!.lamports).to.equal(1);
        expect((await fetchOperation(rt, op))!.amount.toString()).to.equal('10');
        expectCode(await payout(w, { opId, amount: 10n }), E.OperationAlreadyConsumed);
        expect(await tokenBalance(rt, w.recipient)).to.equal(10n);
      } else {
        // bankrun's setRent moves only the sysvar (what the program reads); the bank keeps its genesis rent and
        // refuses to leave a 1-lamport account behind, so nothing is paid. A 0-lamport op account (the bug) would
        // pass that check, be deleted after the transaction, and let the same op_id pay on every attempt.
        expect(first.ok).to.equal(false);
        expect(first.error).to.match(/insufficient funds for rent/i);
        const second = await payout(w, { opId, amount: 10n });
        expect(second.ok).to.equal(false);
        expect(await tokenBalance(rt, w.recipient)).to.equal(0n);
        expect(await rt.getAccount(op)).to.equal(null);
      }
    } finally {
      await rt.setRent(rent.lamportsPerByteYear, rent.exemptionThreshold);
    }
  });

  /** Runs `fn` under another Rent sysvar, and puts the runtime's back however it ends (the runtime is shared). */
  async function underRent(lamportsPerByteYear: bigint, threshold: number, fn: () => Promise<void>): Promise<void> {
    const rent = await rt.rent();
    await rt.setRent(lamportsPerByteYear, threshold);
    try {
      await fn();
    } finally {
      await rt.setRent(rent.lamportsPerByteYear, rent.exemptionThreshold);
    }
  }

  it('an exemption threshold other than 2.0 or 1.0: the Anchor program funds Rent::minimum_balance, the twin refuses', async function () {
    // No cluster has such a sysvar (2.0 today, 1.0 after SIMD-0194); the two rent rules part here
    // (tests/programs/differences.ts).
    const rate = (await rt.rent()).lamportsPerByteYear;
    await underRent(rate, 1.5, async () => {
      const opId = opIdFor('threshold-1.5');
      const [op] = opPda(w.merchant.pda, opId);
      const r = await payout(w, { opId, amount: 10n });
      if (binary === 'lite') {
        expectCode(r, E.UnsupportedRentSysvar);
      } else if (runtimeName === 'litesvm') {
        // The runtime's rent is the sysvar here: what minimum_balance gives (f64, truncated) is rent-exempt.
        expect(r.ok, `${r.error}\n${r.logs.join('\n')}`).to.equal(true);
        expect(BigInt((await rt.getAccount(op))!.lamports)).to.equal((BigInt(128 + 153) * rate * 3n) / 2n);
      } else {
        // bankrun's setRent moves only the sysvar: the bank still asks for two years and refuses the account.
        expect(r.ok).to.equal(false);
        expect(r.error).to.match(/insufficient funds for rent/i);
      }
      if (!r.ok) expect(await rt.getAccount(op)).to.equal(null);
    });
  });

  // bankrun only: LiteSVM's runtime computes rent from the sysvar too, and its solana-rent panics on such a rate,
  // aborting the test process ("Maximum permitted data length exceeded"); bankrun's bank keeps its genesis rent.
  if (runtimeName === 'bankrun')
    it('a rent rate whose minimum overflows u64: refused, nothing moves', async function () {
      await underRent(2n ** 64n / 200n, 2.0, async () => {
        const opId = opIdFor('rent-overflow');
        const r = await payout(w, { opId, amount: 10n });
        if (binary === 'lite') {
          expectCode(r, E.ArithmeticOverflow);
        } else {
          // Rent::minimum_balance multiplies without a check; overflow checks are on in the release profile.
          expect(r.ok).to.equal(false);
          expect(r.customCode).to.equal(null);
          expect(r.logs.join('\n')).to.match(/overflow/);
        }
        expect(await rt.getAccount(opPda(w.merchant.pda, opId)[0])).to.equal(null);
        expect(await tokenBalance(rt, w.recipient)).to.equal(0n);
      });
    });

  describe('errors read the same in clients (AnchorError.parse, translateError of @coral-xyz/anchor 0.32.1)', function () {
    async function failures(): Promise<
      Array<{ what: string; r: TxResult; name: string; number: number; origin?: string }>
    > {
      const opId = opIdFor('read');
      const paid = await payout(w, { opId, amount: 1n });
      expect(paid.ok).to.equal(true);
      const unsigned = await payoutIx(w, { opId: opIdFor('read-2'), amount: 1n });
      unsigned.keys[0].isSigner = false;
      const intruder: Keypair = keypair();
      const out = [
        {
          what: 'repeat',
          r: await payout(w, { opId, amount: 1n }),
          name: 'OperationAlreadyConsumed',
          number: 6000,
          origin: 'operation',
        },
        {
          what: 'unsigned',
          r: await w.send([unsigned]),
          name: 'AccountNotSigner',
          number: 3010,
          origin: 'payout_authority',
        },
        {
          what: 'intruder',
          r: await w.send(
            [await payoutIx(w, { opId: opIdFor('read-3'), amount: 1n, payoutAuthority: intruder.publicKey })],
            [intruder],
          ),
          name: 'Unauthorized',
          number: 6001,
          origin: 'merchant',
        },
        {
          what: 'amount 0',
          r: await payout(w, { opId: opIdFor('read-4'), amount: 0n }),
          name: 'InvalidAmount',
          number: 6003,
        },
      ];
      return out;
    }

    it('AnchorError.parse names the code, number and account of each failure', async function () {
      for (const f of await failures()) {
        const e = AnchorError.parse(f.r.logs);
        expect(e, `${f.what}: no AnchorError line in\n${f.r.logs.join('\n')}`).to.not.equal(null);
        expect(e!.error.errorCode, f.what).to.deep.equal({ code: f.name, number: f.number });
        expect(f.r.customCode, f.what).to.equal(f.number);
        if (f.origin) expect(e!.error.origin, f.what).to.equal(f.origin);
        expect(e!.error.errorMessage, f.what).to.equal(
          f.number >= 6000 ? idlErrors.get(f.number) : e!.error.errorMessage,
        );
      }
    });

    it('translateError turns each failed transaction into an AnchorError with that number and message', async function () {
      for (const f of await failures()) {
        const sent = Object.assign(new Error(f.r.error ?? ''), { logs: f.r.logs });
        const e = translateError(sent, idlErrors) as AnchorError | ProgramError;
        expect(e, f.what).to.be.instanceOf(AnchorError);
        expect((e as AnchorError).error.errorCode.number, f.what).to.equal(f.number);
        expect((e as AnchorError).error.errorCode.code, f.what).to.equal(f.name);
      }
    });
  });
});
