// The websocket subscription source (logsSubscribe with mentions + getTransaction) against localnet: transfers
// made before it started caught up from --from-slot, live ones notified, a socket dropped mid-flight with more
// transfers landing while it is down, an invoice opened while it runs subscribed by the refresh; each transfer
// credited once, confirmed ones kept provisional first and settled final, and the scanner afterwards finds only
// duplicates. On a node given by ANCHOR_PROVIDER_URL (testkit/node: a real validator's logsSubscribe) the same runs
// without the dropped socket (localnet's fault).
import { expect } from 'chai';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { logger } from '../../../common/log';
import { onExternalNode, startTestNode, TestNode } from '../../../testkit/node';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { decodeBlock } from '../../../indexer/decode';
import { createRpcClient } from '../../../indexer/rpc';
import { createScanner } from '../../../indexer/source/scanner';
import { createProvisionalStore } from '../../../indexer/source/provisional';
import { watchedAddresses } from '../../../indexer/source/watched';
import { createWsSource } from '../../../indexer/source/ws-source';
import { confirm } from '../../../testkit/cluster';
import { credited, merchantWithInvoice, QUICK_WS, sum, transfers, until } from './transfer-fixture';

const cluster = 'localnet-ws';

describe('indexer/source ws: logsSubscribe + getTransaction over localnet', function () {
  this.timeout(onExternalNode() ? 600_000 : 120_000);
  let net: TestNode;
  let db: TestDb;

  before(async () => {
    // Finality 32 slots behind, as on a node (~32 slots): longer than the refresh period, so a new address's
    // first catch-up runs before its first transfers are final.
    net = await startTestNode({ slotMs: 20, finalityDepth: 32 });
    db = await createTestDb('ws_localnet');
  });
  after(async () => {
    await net?.stop();
    await db?.drop();
  });

  const title = onExternalNode()
    ? 'catches up, follows, and a new invoice (no dropped socket: localnet only): each transfer credited once'
    : 'catches up, follows, survives a dropped socket and a new invoice: each transfer credited once';
  it(title, async () => {
    const before = [700_000n, 3n];
    const live = [1_500_000n, 2_250_000n];
    const whileDown = [999_999n, 1n];
    const m = await merchantWithInvoice(net, db, 'inv-ws', sum([...before, ...live, ...whileDown]));
    // Before the source runs: found by its catch-up from --from-slot.
    const s0 = await transfers(m, before);
    const last0 = Math.max(...(await Promise.all(s0.map((s) => confirm(m.connection, s)))));
    await until('finality past them', async () => (await m.connection.getSlot('finalized')) >= last0);

    const ac = new AbortController();
    const source = createWsSource(
      {
        url: net.wsUrl,
        rpc: createRpcClient({ url: net.url }),
        ledger: m.ledger,
        watched: () => watchedAddresses(db.pool),
        provisional: createProvisionalStore(db.pool),
        log: logger('ws'),
      },
      {
        ...QUICK_WS,
        cluster,
        fromSlot: m.startSlot,
        // At least 1 s down after the drop: the transfers sent meanwhile are final before it is back.
        backoff: { baseMs: 2_000, capMs: 2_000 },
      },
    );
    const running = source.run({ signal: ac.signal });
    try {
      await until('the caught-up transfers', async () => (await credited(db, 'inv-ws')) === sum(before));
      expect(source.stats().caughtUp, 'found by the catch-up').to.be.at.least(before.length);

      const s1 = await transfers(m, live);
      await until('the live transfers', async () => (await credited(db, 'inv-ws')) === sum([...before, ...live]));
      expect(source.stats().notifications, 'notified').to.be.at.least(live.length);

      if (net.localnet) expect(net.localnet.faults.dropWebsockets()).to.equal(1);
      const s2 = await transfers(m, whileDown);
      // A transfer nobody watches (native SOL to a stranger), and an invoice opened while the source runs.
      const other = await m.connection.sendTransaction(
        new Transaction().add(
          SystemProgram.transfer({
            fromPubkey: m.payer.publicKey,
            toPubkey: Keypair.generate().publicKey,
            lamports: 1e9,
          }),
        ),
        [m.payer],
      );
      await until(
        'every transfer credited',
        async () => (await credited(db, 'inv-ws')) === sum([...before, ...live, ...whileDown]),
      );
      if (net.localnet) expect(source.stats().reconnects, 'the dropped socket was opened again').to.be.at.least(1);

      // An invoice opened while the socket is up, paid at once: its transfers execute before the refresh has
      // subscribed its address (a node never notifies those) and are final only after the refresh's first
      // catch-up; the source catches the new address up again once finality has passed its subscription.
      const n = await merchantWithInvoice(net, db, 'inv-ws-new', 42n);
      const s3 = await transfers(n, [40n, 2n]);
      const slots = await Promise.all([...s1, ...s2, ...s3, other].map((s) => confirm(m.connection, s)));
      const last = Math.max(...slots);
      await until('the new invoice paid', async () => (await credited(db, 'inv-ws-new')) === 42n);
      await until('the checkpoint past the transfers', async () => (source.stats().checkpoint ?? 0) >= last);
      // Both invoices are paid: no longer watched, their addresses are unsubscribed.
      await until('the paid invoices unsubscribed', async () => source.stats().subscribed === 0);

      const receipts = await db.pool.query(
        `SELECT signature, first_source::text AS s FROM receipts WHERE cluster = $1 ORDER BY signature`,
        [cluster],
      );
      expect(receipts.rows.map((r) => r.signature).sort(), 'one receipt per transfer').to.deep.equal(
        [...s0, ...s1, ...s2, ...s3].sort(),
      );
      expect(new Set(receipts.rows.map((r) => r.s))).to.deep.equal(new Set(['ws']));
      // Confirmed notifications became provisional rows; the checkpoint settled every one of them final.
      const prov = await db.pool.query(
        `SELECT state::text, count(*)::int AS n FROM provisional_receipts WHERE cluster = $1 GROUP BY state`,
        [cluster],
      );
      expect(prov.rows.map((r) => r.state)).to.deep.equal(['final']);
      expect(prov.rows[0].n).to.be.at.least(live.length);

      ac.abort();
      const stats = await running;
      expect(stats.inserted).to.equal(s0.length + s1.length + s2.length + s3.length);

      // The scanner, the source of truth, reads the same blocks: every transfer the source credited is a duplicate.
      const scanner = createScanner(
        {
          rpc: createRpcClient({ url: net.url }),
          ledger: m.ledger,
          decode: (block, slot) => decodeBlock(block, { slot, cluster }),
        },
        {
          cluster,
          commitment: 'finalized',
          rescanWindow: 0,
          fromSlot: m.startSlot,
          maxSlotsPerPass: 5000,
          chunkSize: 50,
          concurrency: 4,
          pollMs: 20,
        },
      );
      // Passes until its checkpoint is past the transfers: on a real node a pass may stop right at the finality
      // boundary (a block the node does not serve yet at finalized: the scanner stops there, the next pass reads it).
      let inserted = 0;
      for (;;) {
        const pass = (await scanner.run({ once: true }))!;
        inserted += pass.inserted;
        if (!pass.stoppedAt && (pass.checkpointAfter ?? -1) >= last) break;
      }
      // New to it: transfers nobody watches (the stranger's SOL, the second merchant's setup), none of ours.
      const fromScanner = await db.pool.query(
        `SELECT signature FROM receipts WHERE cluster = $1 AND first_source = 'scanner'`,
        [cluster],
      );
      expect(fromScanner.rows.map((r) => r.signature)).to.include(other);
      expect(fromScanner.rows.map((r) => r.signature)).to.not.include.members([...s0, ...s1, ...s2, ...s3]);
      const counts = await db.pool.query(
        `SELECT source::text, inserted::int, duplicates::int FROM receipt_delivery_counts WHERE cluster = $1 ORDER BY source`,
        [cluster],
      );
      expect(counts.rows).to.deep.equal([
        { source: 'scanner', inserted, duplicates: stats.inserted },
        { source: 'ws', inserted: stats.inserted, duplicates: stats.duplicates },
      ]);
      expect(await credited(db, 'inv-ws')).to.equal(sum([...before, ...live, ...whileDown]));
    } finally {
      ac.abort();
      await running;
    }
  });
});
