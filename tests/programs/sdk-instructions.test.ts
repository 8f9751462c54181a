// The SDK's program interface (app/program, app/merchant/instructions.ts, app/payout/program.ts) against both compiled
// programs: every instruction the SDK builds is the one Anchor's `Program` builds from the IDL (same accounts, flags
// and data), both binaries run it, and the SDK's decoders read what they wrote. With the SDK's builders derived from
// the IDL, this is what proves them: an instruction the IDL describes differently from the programs fails here, on
// both binaries, and the suite's differential test compares the two binaries' answers case by case.
import { expect } from 'chai';
import { SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { keypair } from '../../testkit/program/keys';
import { PROGRAM_ID, sharedRuntime, type Runtime, type TxResult } from '../../testkit/program/runtimes';
import { describeProgram } from './suite';
import {
  createWorld,
  fetchOperation,
  opIdFor,
  opPda,
  payoutIx,
  program,
  type World,
} from '../../testkit/program/world';
import { decodeMerchantAccount } from '../../app/merchant/account';
import {
  initializeMerchantInstruction,
  merchantAddress,
  setPausedInstruction,
  setPayoutAuthorityInstruction,
} from '../../app/merchant/instructions';
import { decodeOpAccount, executePayoutInstruction } from '../../app/payout/program';
import { opId } from '../../app/op-id';

function sameInstruction(ours: TransactionInstruction, anchors: TransactionInstruction): void {
  const keys = (ix: TransactionInstruction) => ix.keys.map((k) => [k.pubkey.toBase58(), k.isSigner, k.isWritable]);
  expect(keys(ours)).to.deep.equal(keys(anchors));
  expect(ours.data.toString('hex')).to.equal(Buffer.from(anchors.data).toString('hex'));
  expect(ours.programId.toBase58()).to.equal(anchors.programId.toBase58());
}

function expectOk(r: TxResult): void {
  expect(r.ok, `${r.error}\n${r.logs.join('\n')}`).to.equal(true);
}

describeProgram('program instructions built by the SDK', (runtimeName, binary) => {
  let rt: Runtime;
  let w: World;

  beforeEach(async function () {
    rt = await sharedRuntime(runtimeName, binary);
    w = await createWorld(rt);
  });

  it('initialize_merchant, set_paused and set_payout_authority as Anchor builds them; the config decodes', async () => {
    const authority = keypair();
    const payoutAuthority = keypair().publicKey;
    const { ix, merchant } = initializeMerchantInstruction(
      PROGRAM_ID,
      authority.publicKey,
      payoutAuthority,
      w.feePayer.publicKey,
    );
    const { bump } = merchantAddress(PROGRAM_ID, authority.publicKey);
    sameInstruction(
      ix,
      await program.methods
        .initializeMerchant(payoutAuthority, bump)
        .accountsStrict({
          merchantAuthority: authority.publicKey,
          payer: w.feePayer.publicKey,
          merchant,
          systemProgram: SystemProgram.programId,
        })
        .instruction(),
    );
    expectOk(await w.send([ix], [authority]));
    const read = async () => decodeMerchantAccount(merchant.toBase58(), (await rt.getAccount(merchant))!.data);
    expect(await read()).to.deep.equal({
      address: merchant.toBase58(),
      merchantAuthority: authority.publicKey.toBase58(),
      payoutAuthority: payoutAuthority.toBase58(),
      paused: false,
      bump,
    });

    const pause = setPausedInstruction(PROGRAM_ID, authority.publicKey, true);
    sameInstruction(
      pause,
      await program.methods
        .setPaused(true)
        .accountsStrict({ merchantAuthority: authority.publicKey, merchant })
        .instruction(),
    );
    expectOk(await w.send([pause], [authority]));
    expect((await read()).paused).to.equal(true);

    const next = keypair().publicKey;
    const rotate = setPayoutAuthorityInstruction(PROGRAM_ID, authority.publicKey, next);
    sameInstruction(
      rotate,
      await program.methods
        .setPayoutAuthority(next)
        .accountsStrict({ merchantAuthority: authority.publicKey, merchant })
        .instruction(),
    );
    expectOk(await w.send([rotate], [authority]));
    expect((await read()).payoutAuthority).to.equal(next.toBase58());
  });

  it('execute_payout as Anchor builds it; both binaries pay it and the op account decodes to its terms', async () => {
    const raw = opIdFor('sdk-execute-payout');
    const [operation, opBump] = opPda(w.merchant.pda, raw);
    const amount = 987_654_321n;
    const ix = executePayoutInstruction(
      PROGRAM_ID,
      {
        payoutAuthority: w.merchant.payoutAuthority.publicKey,
        payer: w.feePayer.publicKey,
        merchant: w.merchant.pda,
        operation,
        vault: w.merchant.vault,
        mint: w.mint,
        recipientToken: w.recipient,
        tokenProgram: w.tokenProgram,
      },
      { opId: opId(raw), amount, opBump },
    );
    sameInstruction(ix, await payoutIx(w, { opId: raw, amount }));
    expectOk(await w.send([ix], [w.merchant.payoutAuthority]));
    const op = decodeOpAccount((await rt.getAccount(operation))!.data);
    const anchors = (await fetchOperation(rt, operation))!;
    expect(op).to.deep.equal({
      opId: opId(Buffer.from(anchors.opId)),
      merchant: anchors.merchant.toBase58(),
      recipient: anchors.recipient.toBase58(),
      mint: anchors.mint.toBase58(),
      amount: BigInt(anchors.amount.toString()),
      slot: BigInt(anchors.slot.toString()),
      bump: anchors.bump,
    });
    expect([op.opId, op.merchant, op.mint, op.amount, op.bump]).to.deep.equal([
      opId(raw),
      w.merchant.pda.toBase58(),
      w.mint.toBase58(),
      amount,
      opBump,
    ]);
  });
});
