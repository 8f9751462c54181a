// The committed IDL and TS type: anchor-lang's own idl-build output for programs/oncepay (regenerated here and
// compared byte for byte), and Anchor's rules (no runtime needed): discriminators are sha256("<namespace>:<name>")[..8],
// the TS type is exactly Anchor's camelCase conversion of the JSON, and the IDL's error table is the one list of
// program errors: the tests take their numbers from it (ERROR_CODES in testkit/program/world.ts, which
// execute-payout.test.ts asserts against the compiled programs), and the SDK's and the lean twin's README agree.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { convertIdlToCamelCase } from '@coral-xyz/anchor/dist/cjs/idl';
import idl from '../../idl/oncepay.json';
import { Keypair, SystemProgram } from '@solana/web3.js';
import { BN } from '@coral-xyz/anchor';
import { PROGRAM_ERRORS } from '../../app/program/errors';
import { PROGRAM_ID, REPO_ROOT } from '../../testkit/program/runtimes';
import { ERROR_CODES, merchantPda, opPda, program, TOKEN_PROGRAM_ID } from '../../testkit/program/world';

const disc = (preimage: string) => [...createHash('sha256').update(preimage).digest().subarray(0, 8)];

describe('program IDL (idl/oncepay.json, idl/oncepay.ts)', function () {
  it('is what anchor-lang idl-build makes of programs/oncepay today (idl/gen, byte for byte)', function () {
    // Cold, this compiles anchor-lang for the host (minutes); then it is cached under target/host.
    this.timeout(40 * 60_000);
    const out = mkdtempSync(join(tmpdir(), 'oncepay-idl-'));
    try {
      const r = spawnSync(
        'cargo',
        ['run', '--quiet', '--manifest-path', join(REPO_ROOT, 'idl/gen/Cargo.toml'), '--', out],
        {
          cwd: REPO_ROOT,
          encoding: 'utf8',
        },
      );
      expect(r.status, `idl/gen failed:\n${r.stderr}`).to.equal(0);
      for (const file of ['oncepay.json', 'oncepay.ts']) {
        const fresh = readFileSync(join(out, file), 'utf8');
        const committed = readFileSync(join(REPO_ROOT, 'idl', file), 'utf8');
        expect(committed, `idl/${file} is stale: run cargo run --manifest-path idl/gen/Cargo.toml`).to.equal(fresh);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('names the program id, spec 0.1.0 and the four instructions', function () {
    expect(idl.address).to.equal(PROGRAM_ID.toBase58());
    expect(idl.metadata.spec).to.equal('0.1.0');
    expect(idl.instructions.map((i) => i.name)).to.deep.equal([
      'execute_payout',
      'initialize_merchant',
      'set_paused',
      'set_payout_authority',
    ]);
  });

  it('carries Anchor discriminators for instructions, accounts and events', function () {
    for (const ix of idl.instructions) expect(ix.discriminator, ix.name).to.deep.equal(disc(`global:${ix.name}`));
    for (const a of idl.accounts) expect(a.discriminator, a.name).to.deep.equal(disc(`account:${a.name}`));
    for (const e of idl.events) expect(e.discriminator, e.name).to.deep.equal(disc(`event:${e.name}`));
  });

  it('keeps the execute_payout account order the SDK codes against', function () {
    const ix = idl.instructions.find((i) => i.name === 'execute_payout')!;
    expect(ix.accounts.map((a) => a.name)).to.deep.equal([
      'payout_authority',
      'payer',
      'merchant',
      'operation',
      'vault',
      'mint',
      'recipient_token',
      'token_program',
      'system_program',
    ]);
    expect(ix.args.map((a) => a.name)).to.deep.equal(['op_id', 'amount', 'op_bump']);
  });

  it('numbers errors densely from 6000, OperationAlreadyConsumed first; the SDK branches on the same numbers', function () {
    idl.errors.forEach((e, i) => expect(e.code, e.name).to.equal(6000 + i));
    expect(idl.errors[0].name).to.equal('OperationAlreadyConsumed');
    expect(ERROR_CODES).to.include(PROGRAM_ERRORS);
  });

  it("lists the IDL's errors in programs/oncepay-lite/README.md, code and name, in order", function () {
    const readme = readFileSync(join(REPO_ROOT, 'programs/oncepay-lite/README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| (\d{4}) \| (\w+) \|/gm)].map((m) => [Number(m[1]), m[2]]);
    expect(rows).to.deep.equal(idl.errors.map((e) => [e.code, e.name]));
  });

  it('ships a TS type that is exactly Anchor’s camelCase form of the JSON', function () {
    const ts = readFileSync(join(REPO_ROOT, 'idl/oncepay.ts'), 'utf8');
    const body = ts
      .slice(ts.indexOf('export type Oncepay = ') + 'export type Oncepay = '.length)
      .trim()
      .replace(/;$/, '');
    expect(JSON.parse(body)).to.deep.equal(convertIdlToCamelCase(idl as never));
  });

  it('lets Anchor resolve the op PDA, the merchant PDA and the System program from the IDL seeds', async function () {
    const key = () => Keypair.generate().publicKey;
    const merchant = key();
    const opId = Buffer.alloc(32, 3);
    // accountsPartial: payout_authority is resolvable too (has_one → relations, read from the merchant account,
    // which needs an RPC); given here, as the merchant is.
    const ix = await program.methods
      .executePayout([...opId], new BN(5), 255)
      .accountsPartial({
        payoutAuthority: key(),
        payer: key(),
        merchant,
        vault: key(),
        mint: key(),
        recipientToken: key(),
        tokenProgram: TOKEN_PROGRAM_ID,
      })
      .instruction();
    expect(ix.keys[3].pubkey.equals(opPda(merchant, opId)[0])).to.equal(true);
    expect(ix.keys[8].pubkey.equals(SystemProgram.programId)).to.equal(true);
    const authority = key();
    const init = await program.methods
      .initializeMerchant(key(), 255)
      .accounts({ merchantAuthority: authority, payer: key() })
      .instruction();
    expect(init.keys[2].pubkey.equals(merchantPda(authority)[0])).to.equal(true);
  });
});
