// `oncepay payout …` in-process (the same commander tree bin/oncepay runs), against a schema of its own.
import { expect } from 'chai';
import { Command } from 'commander';
import { Keypair } from '@solana/web3.js';
import { buildCli } from '../../cli/main';
import { TestDb } from '../../testkit/test-db';
import { testDbAsCliEnv } from '../contracts/test-db-env';
import { deriveOpId } from '../../app/op-id';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { runCli as run } from '../contracts/cli-in-process';

describe('app/cli (oncepay payout …)', () => {
  const testDb = testDbAsCliEnv('app_cli');
  const pk = () => Keypair.generate().publicKey.toBase58();
  const merchant = pk();
  let db: TestDb;
  before(() => (db = testDb()));

  it('every payout command has a description and --help', () => {
    const payout = buildCli().commands.find((c: Command) => c.name() === 'payout')!;
    const names = payout.commands.map((c) => c.name()).sort();
    expect(names).to.deep.equal([
      'create',
      'execute',
      'list',
      'merchant-add',
      'opid',
      'prune-keys',
      'resume',
      'retry',
      'serve',
      'show',
      'worker',
    ]);
    for (const c of payout.commands) {
      expect(c.description(), c.name()).to.not.equal('');
      expect(c.helpInformation()).to.contain('--help');
    }
    const exec = payout.commands.find((c) => c.name() === 'execute')!;
    expect(exec.helpInformation()).to.contain('--rpc').and.contain('--authority').and.contain('--json');
    const worker = payout.commands.find((c) => c.name() === 'worker')!;
    expect(worker.helpInformation())
      .to.contain('--concurrency')
      .and.contain('--drain-ms')
      .and.contain('--metrics-port')
      .and.contain('--max-chain-failures');
  });

  it('merchant-add → create (idempotent on --payout-id) → show, in the ONCEPAY_DB_SCHEMA schema', async () => {
    const added = JSON.parse(
      await run([
        'payout',
        'merchant-add',
        '--name',
        'shop',
        '--merchant',
        merchant,
        '--vault',
        pk(),
        '--api-key',
        'cli-test-key-0123456789',
        '--json',
      ]),
    );
    expect(added).to.include({ name: 'shop', merchant, apiKey: 'cli-test-key-0123456789' });
    const { rows } = await db.pool.query('SELECT api_key_hash FROM api_merchants');
    expect(rows[0].api_key_hash).to.match(/^[0-9a-f]{64}$/); // hashed at rest
    expect(JSON.stringify(rows)).to.not.contain('cli-test-key');

    const args = [
      'payout',
      'create',
      '--merchant',
      merchant,
      '--payout-id',
      'cli-1',
      '--recipient',
      pk(),
      '--mint',
      pk(),
      '--amount',
      '18446744073709551615',
      '--json',
    ];
    const first = JSON.parse(await run(args));
    expect(first.created).to.equal(true);
    expect(first.payout).to.include({ payoutId: 'cli-1', amount: '18446744073709551615', state: 'pending' });
    expect(first.payout.opId).to.equal(deriveOpId({ programId: ONCEPAY_PROGRAM_ID, merchant, payoutId: 'cli-1' }));
    const second = JSON.parse(await run(args));
    expect(second.created).to.equal(false);
    expect(second.payout.id).to.equal(first.payout.id);

    const shown = JSON.parse(await run(['payout', 'show', first.payout.id, '--json']));
    expect(shown).to.deep.equal(first.payout);
  });

  it("payout list / retry are scoped by --merchant: a failed payout goes back to the queue; another merchant's is not found", async () => {
    const other = pk();
    const add = (m: string, key: string) =>
      run(['payout', 'merchant-add', '--name', 'm', '--merchant', m, '--vault', pk(), '--api-key', key, '--json']);
    await add(other, 'cli-test-key-other-000');
    const create = async (m: string, id: string) =>
      JSON.parse(
        await run([
          'payout',
          'create',
          '--merchant',
          m,
          '--payout-id',
          id,
          '--recipient',
          pk(),
          '--mint',
          pk(),
          '--amount',
          '5',
          '--json',
        ]),
      ).payout.id as string;
    const mine = [await create(merchant, 'retry-1'), await create(merchant, 'retry-2')];
    const theirs = await create(other, 'retry-1');
    await db.pool.query(
      `UPDATE payouts SET state = 'failed', last_error = 'MerchantPaused (6002)', finished_at = now(), retries = 3 WHERE id = ANY($1::bigint[])`,
      [[...mine, theirs]],
    );
    const failed = JSON.parse(await run(['payout', 'list', '--merchant', merchant, '--state', 'failed', '--json']));
    expect(failed.map((p: { id: string }) => p.id).sort()).to.deep.equal([...mine].sort());
    expect(failed[0].error).to.equal('MerchantPaused (6002)');

    // Another merchant's payout: not found for this merchant, and left failed.
    const refused = await run(['payout', 'retry', theirs, '--merchant', merchant]).catch((e: { code: string }) => e);
    expect((refused as { code: string }).code).to.equal('ONCEPAY__PAYOUT__NOT_FOUND');
    const one = JSON.parse(await run(['payout', 'retry', mine[0], '--merchant', merchant, '--json']));
    expect(one.reopened).to.deep.equal([mine[0]]);
    const rest = JSON.parse(await run(['payout', 'retry', '--all-failed', '--merchant', merchant, '--json']));
    expect(rest.reopened).to.deep.equal([mine[1]]);
    const { rows } = await db.pool.query(
      `SELECT id::text, state::text, last_error, retries, next_attempt_at <= now() AS due FROM payouts WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [[...mine, theirs]],
    );
    expect(rows).to.deep.equal([
      { id: mine[0], state: 'executing', last_error: null, retries: 0, due: true },
      { id: mine[1], state: 'executing', last_error: null, retries: 0, due: true },
      { id: theirs, state: 'failed', last_error: 'MerchantPaused (6002)', retries: 3, due: true },
    ]);
    // show scoped by --merchant: another merchant's payout is not found.
    const hidden = await run(['payout', 'show', theirs, '--merchant', merchant]).catch((e: { code: string }) => e);
    expect((hidden as { code: string }).code).to.equal('ONCEPAY__PAYOUT__NOT_FOUND');
    const notFailed = await run(['payout', 'retry', mine[0], '--merchant', merchant]).catch((e: { code: string }) => e);
    expect((notFailed as { code: string }).code).to.equal('ONCEPAY__PAYOUT__NOT_FOUND');
    await db.pool.query(
      `UPDATE payouts SET state = 'failed', last_error = 'test cleanup' WHERE id = ANY($1::bigint[])`,
      [mine],
    );
  });

  it('bad input fails with a specific error code, and nothing is stored', async () => {
    const before = (await db.pool.query('SELECT count(*)::int AS n FROM payouts')).rows[0].n;
    const cases: Array<[string[], string]> = [
      [
        [
          'payout',
          'create',
          '--merchant',
          merchant,
          '--payout-id',
          'x',
          '--recipient',
          pk(),
          '--mint',
          pk(),
          '--amount',
          '1.5',
        ],
        'ONCEPAY__AMOUNT__MALFORMED',
      ],
      [
        [
          'payout',
          'create',
          '--merchant',
          merchant,
          '--payout-id',
          'x',
          '--recipient',
          pk(),
          '--mint',
          pk(),
          '--amount',
          '18446744073709551616',
        ],
        'ONCEPAY__AMOUNT__OUT_OF_RANGE',
      ],
      [
        [
          'payout',
          'create',
          '--merchant',
          pk(),
          '--payout-id',
          'x',
          '--recipient',
          pk(),
          '--mint',
          pk(),
          '--amount',
          '1',
        ],
        'ONCEPAY__PAYOUT__MERCHANT_NOT_FOUND',
      ],
      [['payout', 'show', '424242'], 'ONCEPAY__PAYOUT__NOT_FOUND'],
      [['payout', 'opid', '--merchant', 'nope', '--payout-id', 'x'], 'ONCEPAY__PAYOUT__ADDRESS_MALFORMED'],
      [['payout', 'prune-keys', '--hours', '1'], 'ONCEPAY__API__IDEMPOTENCY_RETENTION_TOO_SHORT'],
    ];
    for (const [args, code] of cases) {
      let err: unknown;
      try {
        await run(args);
      } catch (e) {
        err = e;
      }
      expect((err as { code?: string })?.code, args.join(' ')).to.equal(code);
    }
    expect((await db.pool.query('SELECT count(*)::int AS n FROM payouts')).rows[0].n).to.equal(before);
  });
});
