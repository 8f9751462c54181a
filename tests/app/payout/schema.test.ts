// The payout tables' own guards (migration 0100), exercised on real PostgreSQL.
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { preparePayout } from '../../../app/payout/create-payout';
import { insertAttempt, insertPayout } from '../../../app/payout/store';
import { insertMerchant, MerchantRow } from '../../../app/merchant/store';
import { ONCEPAY_PROGRAM_ID } from '../../../app/program/idl';
import { address, signature } from '../../../app/types';

describe('app/schema (migration 0100)', () => {
  let db: TestDb;
  let m: MerchantRow;
  const pk = () => address(Keypair.generate().publicKey);

  before(async () => {
    db = await createTestDb('app_schema');
    m = await insertMerchant(db.pool, {
      name: 'm',
      apiKeyHash: hashApiKey('schema-key-0000000000'),
      programId: address(ONCEPAY_PROGRAM_ID),
      merchantAddress: pk(),
      vault: pk(),
    });
  });
  after(async () => db?.drop());

  const sqlError = async (f: () => Promise<unknown>): Promise<string> => {
    try {
      await f();
    } catch (e) {
      return (e as { code?: string }).code ?? String(e);
    }
    return 'no error';
  };

  it('amounts are NUMERIC(20,0) within u64: u64::MAX round-trips exactly, 2^64 is refused', async () => {
    const p = preparePayout(m, { payoutId: 'max', recipient: pk(), mint: pk(), amount: '18446744073709551615' });
    const { row } = await insertPayout(db.pool, p);
    expect(row.amount).to.equal(18446744073709551615n);
    expect(
      await sqlError(() => db.pool.query(`UPDATE payouts SET amount = 18446744073709551616 WHERE id = $1`, [row.id])),
    ).to.equal('23514');
    expect(await sqlError(() => db.pool.query(`UPDATE payouts SET amount = -1 WHERE id = $1`, [row.id]))).to.equal(
      '23514',
    );
  });

  it('one row per (merchant, payout id): a second insert returns the first row, untouched', async () => {
    const p = preparePayout(m, { payoutId: 'dup', recipient: pk(), mint: pk(), amount: '5' });
    const first = await insertPayout(db.pool, p);
    const second = await insertPayout(db.pool, { ...p, amount: 6n as never });
    expect(first.created).to.equal(true);
    expect(second.created).to.equal(false);
    expect(second.row.id).to.equal(first.row.id);
    expect(second.row.amount).to.equal(5n);
  });

  it('attempt signatures are unique and numbered per payout; the payout moves to executing with its first attempt', async () => {
    const { row } = await insertPayout(
      db.pool,
      preparePayout(m, { payoutId: 'att', recipient: pk(), mint: pk(), amount: '1' }),
    );
    const sig = signature(Buffer.alloc(64, 7));
    const a1 = await insertAttempt(db.pool, {
      payoutId: row.id,
      signature: sig,
      blockhash: pk(),
      lastValidBlockHeight: 10n,
      txBytes: Buffer.from([1, 2, 3]),
    });
    expect(a1.attemptNo).to.equal(1);
    expect([...a1.txBytes]).to.deep.equal([1, 2, 3]);
    expect(a1.status).to.equal('built');
    expect((await db.pool.query('SELECT state FROM payouts WHERE id = $1', [row.id])).rows[0].state).to.equal(
      'executing',
    );
    expect(
      await sqlError(() =>
        insertAttempt(db.pool, {
          payoutId: row.id,
          signature: sig,
          blockhash: pk(),
          lastValidBlockHeight: 10n,
          txBytes: Buffer.from([1]),
        }),
      ),
    ).to.equal('23505');
    const a2 = await insertAttempt(db.pool, {
      payoutId: row.id,
      signature: signature(Buffer.alloc(64, 8)),
      blockhash: pk(),
      lastValidBlockHeight: 20n,
      txBytes: Buffer.from([4]),
    });
    expect(a2.attemptNo).to.equal(2);
  });

  it('an idempotency key is complete exactly when it has a response, and unique per merchant', async () => {
    const h = 'a'.repeat(64);
    await db.pool.query(`INSERT INTO idempotency_keys (merchant_id, key, request_hash) VALUES ($1, 'k', $2)`, [
      m.id,
      h,
    ]);
    expect(
      await sqlError(() => db.pool.query(`UPDATE idempotency_keys SET state = 'complete' WHERE key = 'k'`)),
    ).to.equal('23514');
    expect(
      await sqlError(() =>
        db.pool.query(`INSERT INTO idempotency_keys (merchant_id, key, request_hash) VALUES ($1, 'k', $2)`, [m.id, h]),
      ),
    ).to.equal('23505');
  });
});
