// The gRPC stream's finalized-slot settler (indexer/source/stream-settler.ts) over the real subscription sink, with a
// recording ledger (testkit/accepting-ledger.ts) in place of PostgreSQL: which slot's receipts reach the ledger with
// which checkpoint, and when an empty finalized slot's checkpoint is written.
import { expect } from 'chai';
import type { Receipt } from '../../../indexer/decode/receipt';
import { NO_METRICS } from '../../../indexer/source/ports';
import { createStreamSettler, holdReceipts, type PendingSlots } from '../../../indexer/source/stream-settler';
import { createSubscriptionSink, sessionCounts } from '../../../indexer/source/subscription-sink';
import { acceptingLedger } from '../../../testkit/accepting-ledger';
import { receipt as ledgerReceipt } from '../ledger/fixtures';

const receipt = (signature: string, slot: number): Receipt =>
  ledgerReceipt({ signature, slot: BigInt(slot), destination: 'to', amount: 1n });

function settlerWith(checkpointMs: number) {
  const stats = sessionCounts();
  const batches: Array<{ signatures: string[]; checkpoint: number | null }> = [];
  const ledger = acceptingLedger((input) =>
    batches.push({
      signatures: input.receipts.map((r) => r.signature),
      checkpoint: input.checkpoint ? Number(input.checkpoint.slot) : null,
    }),
  );
  const sink = createSubscriptionSink({ ledger }, { cluster: 'c', source: 'stream', commitment: 'finalized' }, stats);
  const settler = createStreamSettler({ sink, metrics: NO_METRICS, cluster: 'c', checkpointMs, stats });
  return { settler, batches, stats };
}

describe('indexer/source stream settler (recording ledger)', () => {
  it("a finalized slot's receipts go to the ledger with its checkpoint; confirmed slots below it are dropped", async () => {
    const { settler, batches, stats } = settlerWith(0);
    const pending: PendingSlots = new Map();
    holdReceipts(pending, 5, [receipt('five', 5)]);
    holdReceipts(pending, 6, [receipt('six-a', 6)]);
    holdReceipts(pending, 6, [receipt('six-b', 6)]);
    holdReceipts(pending, 7, [receipt('seven', 7)]);
    await settler.applyFinalized(6, pending);
    expect(batches).to.deep.equal([{ signatures: ['six-a', 'six-b'], checkpoint: 6 }]);
    expect([...pending.keys()]).to.deep.equal([7]);
    expect(stats.checkpoint).to.equal(6);
  });

  it('an empty finalized slot at or below the checkpoint writes nothing; one with receipts is written', async () => {
    const { settler, batches } = settlerWith(0);
    await settler.applyFinalized(10, new Map());
    batches.length = 0;
    await settler.applyFinalized(9, new Map());
    expect(batches).to.deep.equal([]);
    const pending: PendingSlots = new Map();
    holdReceipts(pending, 8, [receipt('late', 8)]);
    await settler.applyFinalized(8, pending);
    expect(batches).to.deep.equal([{ signatures: ['late'], checkpoint: 8 }]);
  });

  it('empty finalized slots within checkpointMs of the last write wait for a flush, which writes the last of them once', async () => {
    const { settler, batches, stats } = settlerWith(1e12);
    await settler.applyFinalized(10, new Map()); // the first write: none before it
    await settler.applyFinalized(11, new Map());
    await settler.applyFinalized(12, new Map());
    expect(batches.map((b) => b.checkpoint)).to.deep.equal([10]);
    expect(stats.checkpoint).to.equal(10);
    await settler.flush();
    await settler.flush();
    expect(batches.map((b) => b.checkpoint)).to.deep.equal([10, 12]);
    const pending: PendingSlots = new Map();
    holdReceipts(pending, 13, [receipt('paid', 13)]);
    await settler.applyFinalized(13, pending); // receipts are never held back
    expect(batches.map((b) => b.checkpoint)).to.deep.equal([10, 12, 13]);
  });
});
