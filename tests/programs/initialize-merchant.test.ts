// initialize_merchant against the compiled program in both runtimes: the config PDA's contents, and each refusal
// with its error number.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { PublicKey, SystemProgram } from '@solana/web3.js';
import { keypair } from '../../testkit/program/keys';
import { sharedRuntime, PROGRAM_ID, type TxResult } from '../../testkit/program/runtimes';
import { describeProgram } from './suite';
import { ANCHOR_ERRORS, createWorld, ERROR_CODES, merchantPda, program, type World } from '../../testkit/program/world';

const { AccountNotSigner, ConstraintSeeds } = ANCHOR_ERRORS;
const { NonCanonicalBump, MerchantAlreadyInitialized, InvalidMerchantAddress } = ERROR_CODES;

function initIx(w: World, authority: PublicKey, payout: PublicKey, merchant: PublicKey, bump: number) {
  return program.methods
    .initializeMerchant(payout, bump)
    .accountsStrict({
      merchantAuthority: authority,
      payer: w.feePayer.publicKey,
      merchant,
      systemProgram: SystemProgram.programId,
    })
    .instruction();
}

function expectCode(r: TxResult, code: number) {
  expect(r.ok, 'expected a failure').to.equal(false);
  expect(r.customCode, `${r.error}\n${r.logs.join('\n')}`).to.equal(code);
}

/** A valid bump below the canonical one for ["merchant", authority]. */
function nonCanonical(authority: PublicKey): [PublicKey, number] {
  const [, canonical] = merchantPda(authority);
  for (let b = canonical - 1; b >= 0; b--) {
    try {
      return [
        PublicKey.createProgramAddressSync(
          [Buffer.from('merchant'), authority.toBuffer(), Buffer.from([b])],
          PROGRAM_ID,
        ),
        b,
      ];
    } catch {
      // on the curve: try the next bump down
    }
  }
  throw new Error('no non-canonical bump');
}

describeProgram('program initialize_merchant', (runtimeName, binary) => {
  {
    let w: World;
    beforeEach(async function () {
      w = await createWorld(await sharedRuntime(runtimeName, binary));
    });

    it('writes the config: authorities, not paused, canonical bump', async function () {
      const authority = keypair();
      const payout = keypair().publicKey;
      const [pda, bump] = merchantPda(authority.publicKey);
      const r = await w.send([await initIx(w, authority.publicKey, payout, pda, bump)], [authority]);
      expect(r.ok, r.error ?? '').to.equal(true);
      const account = (await w.rt.getAccount(pda))!;
      expect(account.owner.equals(PROGRAM_ID)).to.equal(true);
      expect(account.data.length).to.equal(74);
      const config = program.coder.accounts.decode('merchant', account.data);
      expect(config.merchantAuthority.equals(authority.publicKey)).to.equal(true);
      expect(config.payoutAuthority.equals(payout)).to.equal(true);
      expect(config.paused).to.equal(false);
      expect(config.bump).to.equal(bump);
    });

    it('a second initialize → MerchantAlreadyInitialized, config unchanged', async function () {
      const { authority, pda, bump } = w.merchant;
      const before = (await w.rt.getAccount(pda))!.data;
      const r = await w.send([await initIx(w, authority.publicKey, keypair().publicKey, pda, bump)], [authority]);
      expectCode(r, MerchantAlreadyInitialized);
      expect((await w.rt.getAccount(pda))!.data.equals(before)).to.equal(true);
    });

    it('the PDA of another authority → ConstraintSeeds', async function () {
      const authority = keypair();
      const [otherPda, otherBump] = merchantPda(keypair().publicKey);
      const r = await w.send(
        [await initIx(w, authority.publicKey, authority.publicKey, otherPda, otherBump)],
        [authority],
      );
      expectCode(r, ConstraintSeeds);
      expect(await w.rt.getAccount(otherPda)).to.equal(null);
    });

    it('the PDA of a valid but non-canonical bump → ConstraintSeeds (the seeds constraint finds the canonical one)', async function () {
      const authority = keypair();
      const [pda, bump] = nonCanonical(authority.publicKey);
      const r = await w.send([await initIx(w, authority.publicKey, authority.publicKey, pda, bump)], [authority]);
      expectCode(r, ConstraintSeeds);
      expect(await w.rt.getAccount(pda)).to.equal(null);
    });

    it('an on-curve address for a bump above the canonical one → ConstraintSeeds, nothing created', async function () {
      // An authority whose canonical merchant bump c is below 255: the hash with bump c + 1 is an ordinary ed25519 key
      // (not a PDA). Anchor's `seeds`/`bump` finds the canonical PDA, which it is not; the twin checks the curve.
      let authority = keypair();
      while (merchantPda(authority.publicKey)[1] === 255) authority = keypair();
      const bump = merchantPda(authority.publicKey)[1] + 1;
      const onCurve = new PublicKey(
        createHash('sha256')
          .update(
            Buffer.concat([
              Buffer.from('merchant'),
              authority.publicKey.toBuffer(),
              Buffer.from([bump]),
              PROGRAM_ID.toBuffer(),
              Buffer.from('ProgramDerivedAddress'),
            ]),
          )
          .digest(),
      );
      expect(PublicKey.isOnCurve(onCurve.toBytes())).to.equal(true);
      const r = await w.send([await initIx(w, authority.publicKey, authority.publicKey, onCurve, bump)], [authority]);
      expectCode(r, ConstraintSeeds);
      expect(await w.rt.getAccount(onCurve)).to.equal(null);
    });

    it('the canonical PDA with another bump argument → NonCanonicalBump', async function () {
      const authority = keypair();
      const [pda] = merchantPda(authority.publicKey);
      const [, lower] = nonCanonical(authority.publicKey);
      const r = await w.send([await initIx(w, authority.publicKey, authority.publicKey, pda, lower)], [authority]);
      expectCode(r, NonCanonicalBump);
      expect(await w.rt.getAccount(pda)).to.equal(null);
    });

    it('the merchant authority not signing → AccountNotSigner', async function () {
      const authority = keypair();
      const [pda, bump] = merchantPda(authority.publicKey);
      const ix = await initIx(w, authority.publicKey, authority.publicKey, pda, bump);
      ix.keys[0].isSigner = false;
      expectCode(await w.send([ix]), AccountNotSigner);
      expect(await w.rt.getAccount(pda)).to.equal(null);
    });

    it('an account the runtime could not leave at the merchant address (System-owned, with data) → InvalidMerchantAddress', async function () {
      const authority = keypair();
      const [pda, bump] = merchantPda(authority.publicKey);
      w.rt.setAccount(pda, { lamports: 10_000_000n, data: new Uint8Array(8), owner: SystemProgram.programId });
      const r = await w.send([await initIx(w, authority.publicKey, authority.publicKey, pda, bump)], [authority]);
      expectCode(r, InvalidMerchantAddress);
      expect((await w.rt.getAccount(pda))!.owner.equals(SystemProgram.programId)).to.equal(true);
    });

    it('succeeds on a pre-funded PDA address', async function () {
      const authority = keypair();
      const [pda, bump] = merchantPda(authority.publicKey);
      const grief = SystemProgram.transfer({ fromPubkey: w.feePayer.publicKey, toPubkey: pda, lamports: 5_000_000 });
      expect((await w.send([grief])).ok).to.equal(true);
      const r = await w.send([await initIx(w, authority.publicKey, authority.publicKey, pda, bump)], [authority]);
      expect(r.ok, r.error ?? '').to.equal(true);
      const account = (await w.rt.getAccount(pda))!;
      expect(account.owner.equals(PROGRAM_ID)).to.equal(true);
      expect(account.lamports).to.equal(5_000_000);
    });
  }
});
