// The subscription sources' sink (indexer/source/subscription-sink.ts), with recording ports in place of the ledger and the
// provisional table: when provisional rows settle relative to the checkpoint a caller can see.
import { expect } from 'chai';
import type { Receipt } from '../../../indexer/decode/receipt';
import { ProvisionalPort, createSubscriptionSink, sessionCounts } from '../../../indexer/source/subscription-sink';
import { acceptingLedger } from '../../../testkit/accepting-ledger';
import type { BaseUnits } from '../../../common/amount';

const receipt = (signature: string, slot: number): Receipt => ({
  signature,
  slot: BigInt(slot),
  blockTime: null,
  ixIndex: 0,
  innerIndex: -1,
  program: 'spl-token',
  kind: 'transferChecked',
  mint: 'mint',
  source: 'from',
  destination: 'to',
  destinationOwner: null,
  amount: 1n as BaseUnits,
});

function recordingPorts() {
  const stats = sessionCounts();
  const events: string[] = [];
  const ledger = acceptingLedger((input) => events.push(`ledger checkpoint=${input.checkpoint?.slot ?? '-'}`));
  const provisional: ProvisionalPort = {
    async upsert(_cluster, rows) {
      events.push(`upsert ${rows.map((r) => r.slot).join(',')}`);
    },
    async settle(_cluster, slot) {
      // What a caller polling the source's stats would see at this moment.
      events.push(`settle ${slot} (checkpoint shown: ${stats.checkpoint ?? '-'})`);
      return { final: 0, reversed: 0 };
    },
  };
  const sink = createSubscriptionSink(
    { ledger, provisional },
    { cluster: 'c', source: 'ws', commitment: 'confirmed' },
    stats,
  );
  return { sink, stats, events };
}

describe('indexer/source observed sink (pure: recording ports)', () => {
  it('settles the provisional rows below a new checkpoint before the checkpoint is shown', async () => {
    const { sink, stats, events } = recordingPorts();
    await sink.apply([], { slot: 10, checkpoint: 10 });
    expect(events).to.deep.equal(['ledger checkpoint=10', 'settle 10 (checkpoint shown: -)']);
    expect(stats.checkpoint).to.equal(10);
  });

  it('a confirmed receipt seen after the checkpoint passed its slot settles at once; one above it waits', async () => {
    const { sink, events } = recordingPorts();
    await sink.apply([], { slot: 10, checkpoint: 10 });
    events.length = 0;
    await sink.provisional([{ slot: 12, receipt: receipt('above', 12) }]);
    expect(events).to.deep.equal(['upsert 12']);
    await sink.provisional([{ slot: 9, receipt: receipt('late', 9) }]);
    expect(events).to.deep.equal(['upsert 12', 'upsert 9', 'settle 10 (checkpoint shown: 10)']);
  });

  it('before any checkpoint a confirmed receipt just waits', async () => {
    const { sink, events } = recordingPorts();
    await sink.provisional([{ slot: 3, receipt: receipt('early', 3) }]);
    expect(events).to.deep.equal(['upsert 3']);
  });
});
