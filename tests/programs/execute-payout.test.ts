// execute_payout against the compiled program, in solana-bankrun (Solana 1.18, legacy SPL Token) and LiteSVM
// (Agave 3, p-token). Instructions are built, accounts decoded and events parsed with @coral-xyz/anchor and the
// committed IDL, so these tests also prove the interface. Error numbers are asserted exactly.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { keypair } from '../../testkit/program/keys';
import { sharedRuntime, PROGRAM_ID, type Runtime, type TxResult } from '../../testkit/program/runtimes';
import { describeProgram } from './suite';
import {
  buildTx,
  createWorld,
  createWorldViaTransactions,
  ANCHOR_ERRORS,
  ERROR_CODES,
  fetchOperation,
  fundSystemAccount,
  nonCanonicalOpPda,
  opIdFor,
  opPda,
  payout,
  payoutEvents,
  payoutIx,
  program,
  tokenBalance,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  U64_MAX,
  writeMint,
  writeTokenAccount,
  type World,
} from '../../testkit/program/world';

const E = ERROR_CODES;
const A = ANCHOR_ERRORS;

function expectCode(r: TxResult, code: number): void {
  expect(r.ok, `expected failure ${code}, got success`).to.equal(false);
  expect(r.customCode, `${r.error}\n${r.logs.join('\n')}`).to.equal(code);
}

function expectOk(r: TxResult): void {
  expect(r.ok, `${r.error}\n${r.logs.join('\n')}`).to.equal(true);
}

/** Vault and recipient balances, and whether the op account exists: what a rejected payout must leave alone. */
async function snapshot(w: World, opId: Uint8Array) {
  return {
    vault: await tokenBalance(w.rt, w.merchant.vault),
    recipient: await tokenBalance(w.rt, w.recipient),
    op: await w.rt.getAccount(opPda(w.merchant.pda, opId)[0]),
  };
}

async function expectRejectedUnchanged(w: World, opId: Uint8Array, r: TxResult, code: number) {
  const before = { vault: 1_000_000_000n, recipient: 0n };
  expectCode(r, code);
  const after = await snapshot(w, opId);
  expect(after.vault).to.equal(before.vault);
  expect(after.recipient).to.equal(before.recipient);
  expect(after.op).to.equal(null);
}

describeProgram('program execute_payout', (runtimeName, binary) => {
  {
    let rt: Runtime;
    let w: World;

    beforeEach(async function () {
      rt = await sharedRuntime(runtimeName, binary);
      w = await createWorld(rt);
    });

    describe('happy path', function () {
      for (const [label, tokenProgram] of [
        ['SPL Token', TOKEN_PROGRAM_ID],
        ['Token-2022', TOKEN_2022_PROGRAM_ID],
      ] as const) {
        it(`pays once with ${label}: exact balances, op account and event`, async function () {
          if (tokenProgram !== TOKEN_PROGRAM_ID) w = await createWorld(rt, { tokenProgram });
          const opId = opIdFor(`happy-${label}`);
          const [op, bump] = opPda(w.merchant.pda, opId);
          const r = await payout(w, { opId, amount: 250_000n });
          expectOk(r);

          expect(await tokenBalance(rt, w.merchant.vault)).to.equal(1_000_000_000n - 250_000n);
          expect(await tokenBalance(rt, w.recipient)).to.equal(250_000n);

          const account = await rt.getAccount(op);
          expect(account!.owner.equals(PROGRAM_ID)).to.equal(true);
          expect(account!.data.length).to.equal(153);
          const slot = await rt.slot();
          const record = program.coder.accounts.decode('operation', account!.data) as {
            opId: number[];
            merchant: PublicKey;
            recipient: PublicKey;
            mint: PublicKey;
            amount: { toString(): string };
            slot: { toString(): string };
            bump: number;
          };
          expect(Buffer.from(record.opId).equals(opId)).to.equal(true);
          expect(record.merchant.equals(w.merchant.pda)).to.equal(true);
          expect(record.recipient.equals(w.recipient)).to.equal(true);
          expect(record.mint.equals(w.mint)).to.equal(true);
          expect(BigInt(record.amount.toString())).to.equal(250_000n);
          expect(BigInt(record.slot.toString())).to.equal(slot);
          expect(record.bump).to.equal(bump);

          const events = payoutEvents(r.logs);
          expect(events).to.have.length(1);
          const e = events[0].data as typeof record;
          expect(Buffer.from(e.opId).equals(opId)).to.equal(true);
          expect(e.merchant.equals(w.merchant.pda)).to.equal(true);
          expect(e.recipient.equals(w.recipient)).to.equal(true);
          expect(e.mint.equals(w.mint)).to.equal(true);
          expect(BigInt(e.amount.toString())).to.equal(250_000n);
          expect(BigInt(e.slot.toString())).to.equal(slot);
        });
      }

      it('pays into a Token-2022 account with extensions (ImmutableOwner, as every Token-2022 ATA has)', async function () {
        w = await createWorld(rt, { tokenProgram: TOKEN_2022_PROGRAM_ID });
        const ata = keypair().publicKey;
        writeTokenAccount(rt, ata, {
          mint: w.mint,
          owner: keypair().publicKey,
          amount: 0n,
          tokenProgram: TOKEN_2022_PROGRAM_ID,
          immutableOwner: true,
        });
        expect((await rt.getAccount(ata))!.data.length).to.equal(170);
        const opId = opIdFor('t22-extensions');
        expectOk(await payout(w, { opId, amount: 12_345n, recipientToken: ata }));
        expect(await tokenBalance(rt, ata)).to.equal(12_345n);
        expect((await fetchOperation(rt, opPda(w.merchant.pda, opId)[0]))!.recipient.equals(ata)).to.equal(true);
      });

      it('one merchant pays from vaults of two mints (any token account the merchant PDA owns is a vault)', async function () {
        const mint2 = keypair().publicKey;
        writeMint(rt, mint2, w.tokenProgram, U64_MAX, 9);
        const vault2 = keypair().publicKey;
        writeTokenAccount(rt, vault2, {
          mint: mint2,
          owner: w.merchant.pda,
          amount: 70n,
          tokenProgram: w.tokenProgram,
        });
        const recipient2 = await w.addTokenAccount(mint2);
        expectOk(await payout(w, { opId: opIdFor('mint-1'), amount: 30n }));
        expectOk(
          await payout(w, {
            opId: opIdFor('mint-2'),
            amount: 70n,
            vault: vault2,
            mint: mint2,
            recipientToken: recipient2,
          }),
        );
        expect(await tokenBalance(rt, w.recipient)).to.equal(30n);
        expect(await tokenBalance(rt, recipient2)).to.equal(70n);
        expect(await tokenBalance(rt, vault2)).to.equal(0n);
        // The vault of one mint cannot pay a recipient of the other.
        const r = await payout(w, { opId: opIdFor('mint-x'), amount: 1n, recipientToken: recipient2 });
        expectCode(r, A.ConstraintTokenMint);
      });

      it('pays u64::MAX from a vault holding u64::MAX', async function () {
        w = await createWorld(rt, { vaultAmount: U64_MAX, mintSupply: U64_MAX });
        const opId = opIdFor('u64-max');
        expectOk(await payout(w, { opId, amount: U64_MAX }));
        expect(await tokenBalance(rt, w.merchant.vault)).to.equal(0n);
        expect(await tokenBalance(rt, w.recipient)).to.equal(U64_MAX);
        const record = await fetchOperation(rt, opPda(w.merchant.pda, opId)[0]);
        expect(BigInt(record!.amount.toString())).to.equal(U64_MAX);
      });

      it('executes two different op_ids in one transaction', async function () {
        const a = opIdFor('pair-a');
        const b = opIdFor('pair-b');
        const ixs = [await payoutIx(w, { opId: a, amount: 10n }), await payoutIx(w, { opId: b, amount: 32n })];
        expectOk(await w.send(ixs, [w.merchant.payoutAuthority]));
        expect(await tokenBalance(rt, w.recipient)).to.equal(42n);
        expect((await fetchOperation(rt, opPda(w.merchant.pda, a)[0]))!.amount.toString()).to.equal('10');
        expect((await fetchOperation(rt, opPda(w.merchant.pda, b)[0]))!.amount.toString()).to.equal('32');
      });
    });

    describe('exactly once', function () {
      for (const n of [2, 10]) {
        it(`${n} transactions for one op_id, different fee payers, all submitted first: one transfer`, async function () {
          const opId = opIdFor(`race-${n}`);
          const payers = Array.from({ length: n }, () => keypair());
          for (const p of payers) fundSystemAccount(rt, p.publicKey);
          // Every transaction is built and signed against the same state before any is submitted.
          const txs: Transaction[] = [];
          for (const p of payers) {
            const ix = await payoutIx(w, { opId, amount: 1_000n, payer: p.publicKey });
            txs.push(await buildTx(rt, [ix], p, [w.merchant.payoutAuthority]));
          }
          expect(new Set(txs.map((t) => t.signature!.toString('hex'))).size).to.equal(n);
          const results = await rt.sendAll(txs);
          expect(results.filter((r) => r.ok)).to.have.length(1);
          for (const r of results.filter((x) => !x.ok)) expectCode(r, E.OperationAlreadyConsumed);
          expect(await tokenBalance(rt, w.recipient)).to.equal(1_000n);
          expect(await tokenBalance(rt, w.merchant.vault)).to.equal(1_000_000_000n - 1_000n);
        });
      }

      it('a repeat answers OperationAlreadyConsumed even once the vault is empty or the merchant paused', async function () {
        const opId = opIdFor('drained');
        expectOk(await payout(w, { opId, amount: 1_000_000_000n }));
        expectCode(await payout(w, { opId, amount: 1_000_000_000n }), E.OperationAlreadyConsumed);
        const pause = await program.methods
          .setPaused(true)
          .accountsStrict({ merchantAuthority: w.merchant.authority.publicKey, merchant: w.merchant.pda })
          .instruction();
        expectOk(await w.send([pause], [w.merchant.authority]));
        expectCode(await payout(w, { opId, amount: 1n }), E.OperationAlreadyConsumed);
        expect(await tokenBalance(rt, w.recipient)).to.equal(1_000_000_000n);
      });

      for (const [label, prefund] of [
        // 890,880 lamports: rent-exempt for an empty account, short of what 153 bytes need (the runtime refuses a
        // transfer that leaves a new account below that), so the program must top it up.
        ['the rent of an empty account', 890_880n],
        ['more than rent', 5_000_000_000n],
      ] as const) {
        it(`succeeds exactly once when the op PDA was pre-funded with ${label}`, async function () {
          const opId = opIdFor(`griefed-${label}`);
          const [op] = opPda(w.merchant.pda, opId);
          const attacker = keypair();
          fundSystemAccount(rt, attacker.publicKey);
          const grief = SystemProgram.transfer({
            fromPubkey: attacker.publicKey,
            toPubkey: op,
            lamports: Number(prefund),
          });
          expectOk(await w.send([grief], [], attacker));
          expect((await rt.getAccount(op))!.owner.equals(SystemProgram.programId)).to.equal(true);

          expectOk(await payout(w, { opId, amount: 7n }));
          const account = await rt.getAccount(op);
          expect(account!.owner.equals(PROGRAM_ID)).to.equal(true);
          expect(BigInt(account!.lamports) >= prefund, 'op account keeps the pre-funded lamports').to.equal(true);
          expect((await fetchOperation(rt, op))!.amount.toString()).to.equal('7');
          expectCode(await payout(w, { opId, amount: 7n }), E.OperationAlreadyConsumed);
          expect(await tokenBalance(rt, w.recipient)).to.equal(7n);
        });
      }

      it('after a payout, a lamport drain attempt and a retry in a later epoch pay nothing more', async function () {
        // Built with transactions only (no account written directly); see Runtime.warpToSlot for how each runtime warps.
        w = await createWorldViaTransactions(rt);
        const opId = opIdFor('later');
        const [op] = opPda(w.merchant.pda, opId);
        expectOk(await payout(w, { opId, amount: 99n }));
        const recordBefore = (await rt.getAccount(op))!;

        // Drain attempt: move the op account's lamports out through the System program. The account is owned by
        // the payout program, and nobody can sign for the PDA, so the runtime refuses.
        const thief = keypair();
        await w.fund(thief.publicKey);
        const drain = SystemProgram.transfer({
          fromPubkey: op,
          toPubkey: thief.publicKey,
          lamports: recordBefore.lamports,
        });
        drain.keys[0].isSigner = false;
        const drained = await w.send([drain], [], thief);
        expect(drained.ok).to.equal(false);
        expect((await rt.getAccount(op))!.lamports).to.equal(recordBefore.lamports);

        // A much later slot, in a later epoch.
        const epochBefore = await rt.epoch();
        const slotBefore = await rt.slot();
        await rt.warpToSlot(slotBefore + 1_000_000n);
        expect((await rt.slot()) >= slotBefore + 1_000_000n, 'warped to a later slot').to.equal(true);
        expect((await rt.epoch()) > epochBefore, 'warped into a later epoch').to.equal(true);
        expectCode(await payout(w, { opId, amount: 99n }), E.OperationAlreadyConsumed);

        expect(await tokenBalance(rt, w.recipient)).to.equal(99n);
        expect(await tokenBalance(rt, w.merchant.vault)).to.equal(1_000_000_000n - 99n);
        const recordAfter = (await rt.getAccount(op))!;
        expect(recordAfter.data.equals(recordBefore.data)).to.equal(true);
        expect(recordAfter.lamports).to.equal(recordBefore.lamports);
        // A new op_id still pays after the warp: the runtime is live, the refusal above is the program's.
        expectOk(await payout(w, { opId: opIdFor('later-2'), amount: 1n }));
        expect(await tokenBalance(rt, w.recipient)).to.equal(100n);
      });

      it('refuses a valid but non-canonical bump (a second address for the same op_id)', async function () {
        const opId = opIdFor('bump');
        const [other, bump] = nonCanonicalOpPda(w.merchant.pda, opId);
        const r = await payout(w, { opId, amount: 5n, operation: other, opBump: bump });
        await expectRejectedUnchanged(w, opId, r, E.NonCanonicalBump);
        expect(await rt.getAccount(other)).to.equal(null);
      });

      it('the canonical op PDA with another bump argument → ConstraintSeeds (seeds are checked with op_bump)', async function () {
        const opId = opIdFor('bump-arg');
        const [, lower] = nonCanonicalOpPda(w.merchant.pda, opId);
        const r = await payout(w, { opId, amount: 5n, opBump: lower });
        await expectRejectedUnchanged(w, opId, r, A.ConstraintSeeds);
      });
    });

    describe('rejections move nothing', function () {
      it('an on-curve address for a bump above the canonical one → refused, nothing created', async function () {
        // Pick an op_id whose canonical bump c is below 255: the hash with bump c + 1 is an ordinary ed25519 key.
        let opId = opIdFor('on-curve-0');
        for (let i = 1; opPda(w.merchant.pda, opId)[1] === 255; i++) opId = opIdFor(`on-curve-${i}`);
        const bump = opPda(w.merchant.pda, opId)[1] + 1;
        const onCurve = new PublicKey(
          createHash('sha256')
            .update(
              Buffer.concat([
                Buffer.from('op'),
                w.merchant.pda.toBuffer(),
                opId,
                Buffer.from([bump]),
                PROGRAM_ID.toBuffer(),
                Buffer.from('ProgramDerivedAddress'),
              ]),
            )
            .digest(),
        );
        expect(PublicKey.isOnCurve(onCurve.toBytes())).to.equal(true);
        const r = await payout(w, { opId, amount: 5n, operation: onCurve, opBump: bump });
        if (binary === 'anchor') {
          // `seeds = [..], bump = op_bump`: create_program_address refuses an on-curve hash.
          expectCode(r, A.ConstraintSeeds);
        } else {
          // The twin leaves the curve to the runtime (its pda.rs), which refuses the op-seeded CreateAccount signer.
          expect(r.ok).to.equal(false);
          expect(r.customCode).to.equal(null);
          expect(r.logs.join('\n')).to.contain('Could not create program address with signer seeds');
        }
        expect(await rt.getAccount(onCurve)).to.equal(null);
        expect(await tokenBalance(rt, w.merchant.vault)).to.equal(1_000_000_000n);
        expect(await tokenBalance(rt, w.recipient)).to.equal(0n);
      });

      it('short arguments → InstructionDidNotDeserialize; an unknown discriminator → InstructionFallbackNotFound', async function () {
        const opId = opIdFor('malformed');
        const short = await payoutIx(w, { opId, amount: 5n });
        short.data = short.data.subarray(0, short.data.length - 1);
        await expectRejectedUnchanged(
          w,
          opId,
          await w.send([short], [w.merchant.payoutAuthority]),
          A.InstructionDidNotDeserialize,
        );
        const unknown = await payoutIx(w, { opId, amount: 5n });
        unknown.data = Buffer.concat([Buffer.alloc(8, 0xab), unknown.data.subarray(8)]);
        await expectRejectedUnchanged(
          w,
          opId,
          await w.send([unknown], [w.merchant.payoutAuthority]),
          A.InstructionFallbackNotFound,
        );
      });

      it('a signer that is not the payout authority → Unauthorized', async function () {
        const opId = opIdFor('unauthorized');
        const intruder = keypair();
        const ix = await payoutIx(w, { opId, amount: 5n, payoutAuthority: intruder.publicKey });
        await expectRejectedUnchanged(w, opId, await w.send([ix], [intruder]), E.Unauthorized);
      });

      it('the right key not signing → AccountNotSigner', async function () {
        const opId = opIdFor('unsigned');
        const ix = await payoutIx(w, { opId, amount: 5n });
        ix.keys[0].isSigner = false;
        await expectRejectedUnchanged(w, opId, await w.send([ix]), A.AccountNotSigner);
      });

      it('a fake merchant account owned by another program → AccountOwnedByWrongProgram', async function () {
        const opId = opIdFor('fake-merchant');
        const real = (await rt.getAccount(w.merchant.pda))!;
        const fake = keypair().publicKey;
        // Same bytes as the real config, owned by the System program.
        rt.setAccount(fake, { lamports: 10_000_000n, data: real.data, owner: SystemProgram.programId });
        const r = await payout(w, { opId, amount: 5n, merchant: fake });
        expectCode(r, A.AccountOwnedByWrongProgram);
        expect(await tokenBalance(rt, w.merchant.vault)).to.equal(1_000_000_000n);
      });

      it("another merchant's vault → ConstraintTokenOwner", async function () {
        const opId = opIdFor('foreign-vault');
        const other = await w.addMerchant(500n);
        const r = await payout(w, { opId, amount: 5n, vault: other.vault });
        await expectRejectedUnchanged(w, opId, r, A.ConstraintTokenOwner);
        expect(await tokenBalance(rt, other.vault)).to.equal(500n);
      });

      it('a recipient of another mint → ConstraintTokenMint', async function () {
        const opId = opIdFor('other-mint');
        const otherMint = keypair().publicKey;
        writeMint(rt, otherMint, w.tokenProgram, 10n);
        const stranger = await w.addTokenAccount(otherMint);
        const r = await payout(w, { opId, amount: 5n, recipientToken: stranger });
        await expectRejectedUnchanged(w, opId, r, A.ConstraintTokenMint);
      });

      it("a vault of another mint than the one named → ConstraintTokenMint, the vault's tokens stay", async function () {
        const opId = opIdFor('vault-mint');
        const otherMint = keypair().publicKey;
        writeMint(rt, otherMint, w.tokenProgram, 10n);
        const otherVault = keypair().publicKey;
        writeTokenAccount(rt, otherVault, {
          mint: otherMint,
          owner: w.merchant.pda,
          amount: 10n,
          tokenProgram: w.tokenProgram,
        });
        const r = await payout(w, { opId, amount: 5n, vault: otherVault });
        await expectRejectedUnchanged(w, opId, r, A.ConstraintTokenMint);
        expect(await tokenBalance(rt, otherVault)).to.equal(10n);
      });

      it('the vault as its own recipient → InvalidRecipient', async function () {
        const opId = opIdFor('self-pay');
        const r = await payout(w, { opId, amount: 5n, recipientToken: w.merchant.vault });
        await expectRejectedUnchanged(w, opId, r, E.InvalidRecipient);
      });

      it('an account the runtime could not leave at the op address (System-owned, with data) → InvalidOperationAddress', async function () {
        // Only a direct write can make this state (creating data at a PDA needs the program's signature): the
        // program refuses it rather than assume it away.
        const opId = opIdFor('odd-op-account');
        const [op] = opPda(w.merchant.pda, opId);
        rt.setAccount(op, { lamports: 10_000_000n, data: new Uint8Array(8), owner: SystemProgram.programId });
        expectCode(await payout(w, { opId, amount: 5n }), E.InvalidOperationAddress);
        expect((await rt.getAccount(op))!.owner.equals(SystemProgram.programId)).to.equal(true);
        expect(await tokenBalance(rt, w.recipient)).to.equal(0n);
      });

      it('an op PDA derived for another op_id → ConstraintSeeds', async function () {
        const opId = opIdFor('addr-a');
        const [otherOp] = opPda(w.merchant.pda, opIdFor('addr-b'));
        const r = await payout(w, { opId, amount: 5n, operation: otherOp });
        await expectRejectedUnchanged(w, opId, r, A.ConstraintSeeds);
        expect(await rt.getAccount(otherOp)).to.equal(null);
      });

      it('an op PDA derived for another merchant → ConstraintSeeds', async function () {
        const opId = opIdFor('addr-merchant');
        const other = await w.addMerchant(0n);
        const [otherOp, otherBump] = opPda(other.pda, opId);
        const r = await payout(w, { opId, amount: 5n, operation: otherOp, opBump: otherBump });
        await expectRejectedUnchanged(w, opId, r, A.ConstraintSeeds);
        expect(await rt.getAccount(otherOp)).to.equal(null);
      });

      it('the wrong token program → ConstraintTokenTokenProgram, or InvalidProgramId for no token program', async function () {
        const opId = opIdFor('token-program');
        // Token-2022 named while the accounts belong to SPL Token.
        let r = await payout(w, { opId, amount: 5n, tokenProgram: TOKEN_2022_PROGRAM_ID });
        await expectRejectedUnchanged(w, opId, r, A.ConstraintTokenTokenProgram);
        // A program that is no token program at all.
        r = await payout(w, { opId, amount: 5n, tokenProgram: SystemProgram.programId });
        await expectRejectedUnchanged(w, opId, r, A.InvalidProgramId);
      });

      it('a paused merchant → MerchantPaused; resumed → pays', async function () {
        const opId = opIdFor('paused');
        const setPaused = (paused: boolean) =>
          program.methods
            .setPaused(paused)
            .accountsStrict({ merchantAuthority: w.merchant.authority.publicKey, merchant: w.merchant.pda })
            .instruction();
        expectOk(await w.send([await setPaused(true)], [w.merchant.authority]));
        await expectRejectedUnchanged(w, opId, await payout(w, { opId, amount: 5n }), E.MerchantPaused);
        expectOk(await w.send([await setPaused(false)], [w.merchant.authority]));
        expectOk(await payout(w, { opId, amount: 5n }));
        expect(await tokenBalance(rt, w.recipient)).to.equal(5n);
      });

      it('only the merchant authority can pause or rotate the payout authority → Unauthorized', async function () {
        const intruder = keypair();
        const pause = await program.methods
          .setPaused(true)
          .accountsStrict({ merchantAuthority: intruder.publicKey, merchant: w.merchant.pda })
          .instruction();
        expectCode(await w.send([pause], [intruder]), E.Unauthorized);
        const rotate = await program.methods
          .setPayoutAuthority(intruder.publicKey)
          .accountsStrict({ merchantAuthority: intruder.publicKey, merchant: w.merchant.pda })
          .instruction();
        expectCode(await w.send([rotate], [intruder]), E.Unauthorized);
        const config = await program.coder.accounts.decode('merchant', (await rt.getAccount(w.merchant.pda))!.data);
        expect(config.payoutAuthority.equals(w.merchant.payoutAuthority.publicKey)).to.equal(true);
        expect(config.paused).to.equal(false);
      });

      it('after set_payout_authority the old key is Unauthorized and the new one pays', async function () {
        const next = keypair();
        const rotate = await program.methods
          .setPayoutAuthority(next.publicKey)
          .accountsStrict({ merchantAuthority: w.merchant.authority.publicKey, merchant: w.merchant.pda })
          .instruction();
        expectOk(await w.send([rotate], [w.merchant.authority]));
        const opId = opIdFor('rotated');
        await expectRejectedUnchanged(w, opId, await payout(w, { opId, amount: 5n }), E.Unauthorized);
        const ix = await payoutIx(w, { opId, amount: 5n, payoutAuthority: next.publicKey });
        expectOk(await w.send([ix], [next]));
        expect(await tokenBalance(rt, w.recipient)).to.equal(5n);
      });

      it('amount 0 → InvalidAmount; more than the vault holds → InsufficientVaultBalance', async function () {
        const opId = opIdFor('amounts');
        await expectRejectedUnchanged(w, opId, await payout(w, { opId, amount: 0n }), E.InvalidAmount);
        await expectRejectedUnchanged(
          w,
          opId,
          await payout(w, { opId, amount: 1_000_000_001n }),
          E.InsufficientVaultBalance,
        );
        // The same op_id still pays once the amount is right: a rejected attempt consumes nothing.
        expectOk(await payout(w, { opId, amount: 1_000_000_000n }));
        expect(await tokenBalance(rt, w.merchant.vault)).to.equal(0n);
      });
    });
  }
});
