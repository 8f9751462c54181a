// No IDL instruction an outsider can use. anchor-lang 0.32 puts IDL instructions into every program unless it is built
// with `no-idl`; their IdlCreateAccounts needs only a funded signer, so whoever sent `IdlInstruction::Create` first
// became the IDL authority and could write any IDL at the address clients and explorers read. The Anchor program is
// built with `no-idl` (programs/oncepay/Cargo.toml), and the twin never had them: each of the seven IDL instructions,
// sent by a stranger with the accounts anchor-lang declares for it, is refused by both binaries with anchor-lang's
// `IdlInstructionStub` (1000), and nothing is created or written. The second part looks in the compiled .so.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { PublicKey, SystemProgram, TransactionInstruction, type Keypair } from '@solana/web3.js';
import { programSoPath } from '../../common/program-binary';
import { keypair } from '../../testkit/program/keys';
import { PROGRAM_ID, sharedRuntime, type Runtime, type TxResult } from '../../testkit/program/runtimes';
import { anchorErrorOf } from '../../testkit/program/differential';
import { buildTx, fundSystemAccount } from '../../testkit/program/world';
import { describeProgram } from './suite';

/** anchor-lang's IDL_IX_TAG_LE: every IDL instruction starts with it. */
const IDL_IX_TAG = Buffer.from('40f4bc78a7e9690a', 'hex');
/** The IDL account's address: create_with_seed(find_program_address([], program), "anchor:idl", program). */
const IDL_BASE = PublicKey.findProgramAddressSync([], PROGRAM_ID)[0];
const IDL_ADDRESS = new PublicKey(
  createHash('sha256')
    .update(Buffer.concat([IDL_BASE.toBuffer(), Buffer.from('anchor:idl'), PROGRAM_ID.toBuffer()]))
    .digest(),
);

const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
};
const meta = (pubkey: PublicKey, isSigner: boolean, isWritable: boolean) => ({ pubkey, isSigner, isWritable });

/** Each `IdlInstruction` (Borsh: variant index, then fields) with the accounts anchor-lang 0.32 declares for it. */
function idlInstructions(attacker: PublicKey, buffer: PublicKey): Array<[string, TransactionInstruction]> {
  const ix = (variant: number, fields: Buffer, keys: ReturnType<typeof meta>[]) =>
    new TransactionInstruction({
      programId: PROGRAM_ID,
      keys,
      data: Buffer.concat([IDL_IX_TAG, Buffer.from([variant]), fields]),
    });
  const idlAndAuthority = [meta(IDL_ADDRESS, false, true), meta(attacker, true, false)];
  return [
    [
      'Create { data_len }',
      ix(0, u64(4096n), [
        meta(attacker, true, true),
        meta(IDL_ADDRESS, false, true),
        meta(IDL_BASE, false, false),
        meta(SystemProgram.programId, false, false),
        meta(PROGRAM_ID, false, false),
      ]),
    ],
    ['CreateBuffer', ix(1, Buffer.alloc(0), [meta(buffer, false, true), meta(attacker, true, false)])],
    ['Write { data }', ix(2, Buffer.concat([Buffer.from([4, 0, 0, 0]), Buffer.from('evil')]), idlAndAuthority)],
    [
      'SetBuffer',
      ix(3, Buffer.alloc(0), [meta(buffer, false, true), meta(IDL_ADDRESS, false, true), meta(attacker, true, false)]),
    ],
    ['SetAuthority { new_authority }', ix(4, attacker.toBuffer(), idlAndAuthority)],
    [
      'Close',
      ix(5, Buffer.alloc(0), [
        meta(IDL_ADDRESS, false, true),
        meta(attacker, true, false),
        meta(attacker, false, true),
      ]),
    ],
    [
      'Resize { data_len }',
      ix(6, u64(20_000n), [
        meta(IDL_ADDRESS, false, true),
        meta(attacker, true, true),
        meta(SystemProgram.programId, false, false),
      ]),
    ],
  ];
}

/** A zeroed account owned by the program, as IdlCreateBuffer expects one (anyone can create such an account). */
async function createBufferAccount(rt: Runtime, attacker: Keypair): Promise<PublicKey> {
  const buffer = keypair();
  const create = SystemProgram.createAccount({
    fromPubkey: attacker.publicKey,
    newAccountPubkey: buffer.publicKey,
    lamports: 100_000_000,
    space: 1024,
    programId: PROGRAM_ID,
  });
  const r = await rt.send(await buildTx(rt, [create], attacker, [buffer]));
  expect(r.ok, `${r.error}\n${r.logs.join('\n')}`).to.equal(true);
  return buffer.publicKey;
}

describeProgram('program Anchor IDL instructions', (runtimeName, binary) => {
  let rt: Runtime;
  beforeEach(async function () {
    rt = await sharedRuntime(runtimeName, binary);
  });

  it('every IDL instruction sent by a stranger is refused with IdlInstructionStub; nothing is created or written', async function () {
    const attacker = keypair();
    fundSystemAccount(rt, attacker.publicKey);
    const buffer = await createBufferAccount(rt, attacker);
    const refused: Array<[string, TxResult]> = [];
    for (const [name, ix] of idlInstructions(attacker.publicKey, buffer)) {
      refused.push([name, await rt.send(await buildTx(rt, [ix], attacker))]);
    }
    expect(refused).to.have.length(7);
    for (const [name, r] of refused) {
      expect(r.ok, `${name} was accepted:\n${r.logs.join('\n')}`).to.equal(false);
      expect(anchorErrorOf(r.logs), name).to.equal('IdlInstructionStub (1000)');
      expect(r.customCode, name).to.equal(1000);
    }
    expect(await rt.getAccount(IDL_ADDRESS), 'the IDL account').to.equal(null);
    const after = (await rt.getAccount(buffer))!;
    expect(after.owner.equals(PROGRAM_ID)).to.equal(true);
    expect(after.data.equals(Buffer.alloc(1024)), 'the buffer account is untouched').to.equal(true);
  });
});

describe('program Anchor IDL instructions: not in the Anchor binary (target/deploy/oncepay.so)', function () {
  // Each IDL handler logs its name with msg! as the program's own instructions do ("Instruction: ExecutePayout"),
  // and IdlCreateAccounts derives the IDL address with the seed "anchor:idl": a build with the handlers holds those
  // strings (the build before no-idl held "anchor:idl"). With no-idl only anchor-lang's dispatch test of the tag is
  // left, to answer IdlInstructionStub.
  const so = () => readFileSync(programSoPath('anchor'));

  it("holds the four instructions' handlers and none of anchor-lang's IDL handlers", function () {
    const elf = so();
    for (const name of ['ExecutePayout', 'InitializeMerchant', 'SetPaused', 'SetPayoutAuthority'])
      expect(elf.includes(`Instruction: ${name}`), name).to.equal(true);
    for (const name of [
      'IdlCreateAccount',
      'IdlCreateBuffer',
      'IdlWrite',
      'IdlSetBuffer',
      'IdlSetAuthority',
      'IdlCloseAccount',
      'IdlResizeAccount',
    ])
      expect(elf.includes(`Instruction: ${name}`), name).to.equal(false);
    expect(elf.includes('anchor:idl'), 'the IDL account seed').to.equal(false);
  });
});
