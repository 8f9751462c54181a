// An in-flight Idempotency-Key belongs to the database session of the request that claimed it (migration 0110):
// free at once when that session is gone, never taken from a session that lives, and a holder that lost its
// session cannot complete (its effect rolls back). Real PostgreSQL, real sessions, real pg_terminate_backend.
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import { PoolClient } from 'pg';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { canonicalRequestHash, claimKey, withIdempotencyKey } from '../../../app/api/idempotency';
import { insertMerchant, MerchantRow } from '../../../app/merchant/store';
import { ONCEPAY_PROGRAM_ID } from '../../../app/program/idl';
import { address } from '../../../app/types';
import { createPool } from '../../../db/pool';
import { createTestDb, TestDb } from '../../../testkit/test-db';

const pk = () => address(Keypair.generate().publicKey);

describe('app/api/idempotency: a key is held by a database session', () => {
  let db: TestDb;
  let m: MerchantRow;
  const hash = canonicalRequestHash('POST', '/v1/payouts', { payoutId: 'p', amount: '1' });

  before(async () => {
    db = await createTestDb('idem_holder');
    m = await insertMerchant(db.pool, {
      name: 'M',
      apiKeyHash: hashApiKey('idem-holder-key-0000001'),
      programId: address(ONCEPAY_PROGRAM_ID),
      merchantAddress: pk(),
      vault: pk(),
    });
  });
  after(async () => db?.drop());

  /** A second "process": its own pool, so its sessions are not the test's. */
  async function holder(): Promise<{ c: PoolClient; pid: number; close(): Promise<void> }> {
    const pool = createPool({ url: db.url, schema: db.schema, max: 1 });
    const c = await pool.connect();
    const pid = (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    return {
      c,
      pid,
      close: async () => {
        c.release(true);
        await pool.end();
      },
    };
  }

  it('a live holder keeps its key (in progress); once its session is terminated the retry takes over at once', async () => {
    const h = await holder();
    expect(await claimKey(h.c, m.id, 'k-live', hash)).to.deep.equal({ kind: 'claimed' });
    const retry = await db.pool.connect();
    try {
      expect(await claimKey(retry, m.id, 'k-live', hash)).to.deep.equal({ kind: 'in_progress' });
      await db.pool.query('SELECT pg_terminate_backend($1)', [h.pid]);
      // No fixed wait: the session is gone as soon as PostgreSQL has ended it.
      let claim = await claimKey(retry, m.id, 'k-live', hash);
      for (let i = 0; claim.kind === 'in_progress' && i < 200; i++) {
        await new Promise((r) => setTimeout(r, 10));
        claim = await claimKey(retry, m.id, 'k-live', hash);
      }
      expect(claim).to.deep.equal({ kind: 'claimed' });
    } finally {
      retry.release();
      await h.close();
    }
  });

  it('a holder whose key was taken (it lost its session) cannot complete: its effect rolls back, nothing commits twice', async () => {
    await db.pool.query(`CREATE TABLE IF NOT EXISTS effects (k text PRIMARY KEY)`);
    // The request's session is terminated between claim and effect; the retry takes the key and completes.
    const pool = createPool({ url: db.url, schema: db.schema, max: 1 });
    try {
      const p = withIdempotencyKey(pool, m.id, 'k-lost', hash, async (c) => {
        const pid = (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
        await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
        await c.query(`INSERT INTO effects VALUES ('k-lost')`);
        return { status: 201, body: { ok: true } };
      });
      const e = await p.then(
        () => null,
        (x: Error) => x,
      );
      expect(e, 'the original request must fail, not answer 2xx').to.be.instanceOf(Error);
      const retry = await withIdempotencyKey(db.pool, m.id, 'k-lost', hash, async (c) => {
        await c.query(`INSERT INTO effects VALUES ('k-lost')`);
        return { status: 201, body: { ok: true, retry: true } };
      });
      expect(retry).to.deep.equal({ kind: 'done', status: 201, body: { ok: true, retry: true } });
      const again = await withIdempotencyKey(db.pool, m.id, 'k-lost', hash, async () => ({ status: 500, body: {} }));
      expect(again).to.deep.equal({ kind: 'replay', status: 201, body: { ok: true, retry: true } });
      expect((await db.pool.query(`SELECT count(*)::int AS n FROM effects`)).rows[0].n).to.equal(1);
    } finally {
      await pool.end();
    }
  });

  it('a claim from before migration 0110 (no holder recorded) keeps the old rule: free after the fixed minute', async () => {
    await db.pool.query(
      `INSERT INTO idempotency_keys (merchant_id, key, request_hash, state, locked_at) VALUES ($1, 'k-old', $2, 'in_flight', now() - interval '10 minutes'),
                                                                                       ($1, 'k-new', $2, 'in_flight', now())`,
      [m.id, hash],
    );
    const c = await db.pool.connect();
    try {
      expect(await claimKey(c, m.id, 'k-old', hash)).to.deep.equal({ kind: 'claimed' });
      expect(await claimKey(c, m.id, 'k-new', hash)).to.deep.equal({ kind: 'in_progress' });
    } finally {
      c.release();
    }
  });
});
