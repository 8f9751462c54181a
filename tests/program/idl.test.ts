// The committed IDL and TS type against Anchor's own rules (no runtime needed): discriminators are
// sha256("<namespace>:<name>")[..8], the TS type is exactly Anchor's camelCase conversion of the JSON, and the error
// table is the one the program returns (execute-payout.test.ts asserts those numbers against the compiled program).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { convertIdlToCamelCase } from '@coral-xyz/anchor/dist/cjs/idl';
import idl from '../../idl/oncepay.json';
import { PROGRAM_ID, REPO_ROOT } from './runtimes';

const disc = (preimage: string) => [...createHash('sha256').update(preimage).digest().subarray(0, 8)];

describe('program IDL (idl/oncepay.json, idl/oncepay.ts)', function () {
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

  it('numbers errors densely from 6000, OperationAlreadyConsumed first', function () {
    idl.errors.forEach((e, i) => expect(e.code, e.name).to.equal(6000 + i));
    expect(idl.errors[0].name).to.equal('OperationAlreadyConsumed');
    const byName = Object.fromEntries(idl.errors.map((e) => [e.name, e.code]));
    expect(byName).to.include({
      Unauthorized: 6001,
      MerchantPaused: 6002,
      InvalidAmount: 6003,
      InsufficientVaultBalance: 6004,
      InvalidMerchantAccount: 6005,
      InvalidVault: 6006,
      MintMismatch: 6007,
      InvalidOperationAddress: 6008,
      NonCanonicalBump: 6009,
      InvalidTokenProgram: 6010,
      MissingSignature: 6011,
    });
  });

  it('ships a TS type that is exactly Anchor’s camelCase form of the JSON', function () {
    const ts = readFileSync(join(REPO_ROOT, 'idl/oncepay.ts'), 'utf8');
    const body = ts.slice(ts.indexOf('export type Oncepay = ') + 'export type Oncepay = '.length).trim().replace(/;$/, '');
    expect(JSON.parse(body)).to.deep.equal(convertIdlToCamelCase(idl as never));
  });
});
