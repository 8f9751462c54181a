// app/merchant/registry and app/payout/retry: the registered merchants as an operator names them, and a merchant's
// failed payouts reopened; against a schema of their own.
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { createPayout } from '../../../app/payout/create-payout';
import { ONCEPAY_PROGRAM_ID } from '../../../app/program/idl';
import { registerMerchant, resolveMerchant } from '../../../app/merchant/registry';
import { retryFailedPayouts } from '../../../app/payout/retry';
import { createTestDb, TestDb } from '../../../testkit/test-db';

const pk = () => Keypair.generate().publicKey.toBase58();
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: { code?: string; context?: unknown; message: string }) => e,
  );

describe('app/merchant/registry, app/payout/retry', () => {
  let db: TestDb;
  before(async () => (db = await createTestDb('payout_registry')));
  after(async () => db?.drop());

  const register = (apiKey?: string) =>
    registerMerchant(db.pool, { name: 'm', program: ONCEPAY_PROGRAM_ID, merchant: pk(), vault: pk(), apiKey });

  it('registerMerchant: a generated key is returned once and only its hash is stored; a given key is kept', async () => {
    const { merchant, apiKey } = await register();
    expect(apiKey).to.match(/^ok_[A-Za-z0-9_-]{32}$/);
    const { rows } = await db.pool.query(`SELECT api_key_hash FROM api_merchants WHERE id = $1`, [merchant.id]);
    expect(rows[0].api_key_hash).to.equal(hashApiKey(apiKey));
    expect(JSON.stringify(rows)).to.not.contain(apiKey);
    expect((await register('given-key-0123456789')).apiKey).to.equal('given-key-0123456789');
  });

  it('resolveMerchant: by its id or its merchant config address; an unknown one is MERCHANT_NOT_FOUND naming the flag', async () => {
    const { merchant } = await register();
    expect((await resolveMerchant(db.pool, merchant.id)).id).to.equal(merchant.id);
    expect((await resolveMerchant(db.pool, merchant.merchantAddress)).id).to.equal(merchant.id);
    for (const ref of ['999999', pk()]) {
      const e = await codeOf(resolveMerchant(db.pool, ref, '--merchant'));
      expect(e, ref).to.include({ code: 'ONCEPAY__PAYOUT__MERCHANT_NOT_FOUND' });
      expect(e?.context).to.deep.equal({ flag: '--merchant' });
    }
  });

  it("retryFailedPayouts: one or all of the merchant's failed payouts; another's, or one not failed, is NOT_FOUND saying which", async () => {
    const [{ merchant: m }, { merchant: other }] = [await register(), await register()];
    const create = async (merchant: typeof m, payoutId: string) =>
      (await createPayout(db.pool, merchant, { payoutId, recipient: pk(), mint: pk(), amount: '5' })).row.id;
    const mine = [await create(m, 'a'), await create(m, 'b'), await create(m, 'c')];
    const theirs = await create(other, 'a');
    await db.pool.query(`UPDATE payouts SET state = 'failed', finished_at = now() WHERE id = ANY($1::bigint[])`, [
      [mine[0], mine[1], theirs],
    ]);

    const notMine = await codeOf(retryFailedPayouts(db.pool, m, theirs, 'M'));
    expect(notMine?.code).to.equal('ONCEPAY__PAYOUT__NOT_FOUND');
    expect(notMine?.message).to.contain(`payout ${theirs} not found for --merchant M`);
    const pending = await codeOf(retryFailedPayouts(db.pool, m, mine[2], 'M'));
    expect(pending?.message).to.contain(`payout ${mine[2]} is pending, not failed`);

    expect(await retryFailedPayouts(db.pool, m, mine[0], 'M')).to.deep.equal([mine[0]]);
    expect(await retryFailedPayouts(db.pool, m, null, 'M')).to.deep.equal([mine[1]]);
    const { rows } = await db.pool.query(
      `SELECT id::text, state::text FROM payouts WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [[...mine, theirs]],
    );
    expect(rows.map((r) => r.state)).to.deep.equal(['executing', 'executing', 'pending', 'failed']);
  });
});
