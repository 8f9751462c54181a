// What the websocket source does with observed signatures (indexer/source/ws-apply.ts) and how a catch-up lists
// them (ws-catch-up.ts), without a node or a database: a scripted getTransaction / getSignaturesForAddress and a
// recording sink stand for them.
import { expect } from 'chai';
import type { Receipt } from '../../../indexer/decode/receipt';
import { createObservedApplier, finalSlot, type Observed, uniqueObserved } from '../../../indexer/source/ws-apply';
import { catchUp } from '../../../indexer/source/ws-catch-up';
import { receipt } from '../ledger/fixtures';

const seen = (signature: string, slot: number, commitment: Observed['commitment'] = 'finalized'): Observed => ({
  signature,
  slot,
  commitment,
});

/** A sink that decodes each transaction to one receipt named after it, and records what it is given. */
function recordingSink() {
  const calls = { applied: [] as Array<{ receipts: string[]; slot: number }>, provisional: [] as string[][] };
  const sink = {
    decode: (_decode: () => Receipt[], at: { signature: string; slot: number }) => [
      receipt({ signature: at.signature, destination: 'D', amount: 1n, slot: BigInt(at.slot) }),
    ],
    provisional: async (rows: Array<{ slot: number; receipt: Receipt }>) =>
      void calls.provisional.push(rows.map((r) => r.receipt.signature)),
    apply: async (receipts: Receipt[], at: { slot: number }) =>
      void calls.applied.push({ receipts: receipts.map((r) => r.signature).sort(), slot: at.slot }),
  };
  return { calls, sink: sink as never };
}

/** An applier over `rpc` and a recording sink, retrying after 1–2 ms. */
function applier(
  rpc: { getTransaction: (...a: never[]) => Promise<unknown> },
  o: { concurrency: number; fetchAttempts: number },
) {
  const stats = { transactions: 0, notFound: 0, provisional: 0 };
  const { calls, sink } = recordingSink();
  const options = { cluster: 'localnet', ...o, backoff: { baseMs: 1, capMs: 2 } };
  const apply = createObservedApplier({ rpc: rpc as never, sink, stats, options }, new AbortController().signal);
  return { stats, calls, apply };
}

describe('indexer/source ws apply (pure parts)', () => {
  it('takes each signature once per commitment, and applies finalized ones at their highest slot', () => {
    const batch = [seen('a', 5), seen('a', 6), seen('a', 5, 'confirmed'), seen('b', 9, 'confirmed'), seen('c', 7)];
    expect(uniqueObserved(batch)).to.deep.equal([
      seen('a', 5),
      seen('a', 5, 'confirmed'),
      seen('b', 9, 'confirmed'),
      seen('c', 7),
    ]);
    expect(finalSlot(batch)).to.equal(7);
    expect(finalSlot([seen('b', 9, 'confirmed')])).to.equal(null);
  });
});

describe('indexer/source ws apply (scripted getTransaction)', () => {
  it('finalized receipts through the ledger, confirmed ones kept provisional, a signature never returned given up', async () => {
    const asked: string[] = [];
    const rpc = {
      getTransaction: async (signature: string, commitment: string) => {
        asked.push(`${commitment}:${signature}`);
        return signature === 'missing' ? null : { slot: signature === 'a' ? 11 : undefined };
      },
    };
    const { stats, calls, apply } = applier(rpc, { concurrency: 2, fetchAttempts: 3 });
    await apply([seen('a', 10), seen('b', 12), seen('a', 10), seen('c', 13, 'confirmed'), seen('missing', 14)]);
    expect(asked.filter((x) => x === 'finalized:missing').length).to.equal(3); // fetchAttempts
    expect(asked.filter((x) => x === 'finalized:a').length).to.equal(1); // repeats fetched once
    expect(stats).to.deep.equal({ transactions: 3, notFound: 1, provisional: 1 });
    expect(calls.provisional).to.deep.equal([['c']]);
    // The batch is applied at the highest finalized slot observed (the given-up one included).
    expect(calls.applied).to.deep.equal([{ receipts: ['a', 'b'], slot: 14 }]);
  });

  it('a batch of confirmed signatures only applies nothing to the ledger', async () => {
    const rpc = { getTransaction: async () => ({ slot: 3 }) };
    const { calls, apply } = applier(rpc, { concurrency: 8, fetchAttempts: 1 });
    await apply([seen('x', 3, 'confirmed')]);
    expect(calls.applied).to.deep.equal([]);
    expect(calls.provisional).to.deep.equal([['x']]);
  });
});

describe('indexer/source ws catch-up (scripted getSignaturesForAddress)', () => {
  it('pages back until a page ends below the first slot, succeeded transactions only, from a node at minContextSlot', async () => {
    const page = (n: number, top: number) =>
      Array.from({ length: n }, (_, i) => ({
        signature: `s${top - i}`,
        slot: top - i,
        err: (top - i) % 5 === 0 ? {} : null,
      }));
    const pages: Record<string, unknown[]> = { first: page(1000, 2000), s1001: page(1000, 1000) };
    const configs: Array<Record<string, unknown>> = [];
    const rpc = {
      call: async (method: string, params: unknown[]) => {
        expect(method).to.equal('getSignaturesForAddress');
        const config = params[1] as Record<string, unknown>;
        configs.push(config);
        return pages[(config.before as string | undefined) ?? 'first'];
      },
    };
    const read: Observed[] = [];
    await catchUp(rpc as never, ['ADDR'], 990, (o) => read.push(...o), {
      signal: new AbortController().signal,
      minContextSlot: 2001,
    });
    expect(configs.map((c) => [c.before, c.minContextSlot, c.commitment, c.limit])).to.deep.equal([
      [undefined, 2001, 'finalized', 1000],
      ['s1001', 2001, 'finalized', 1000],
    ]);
    expect(read.every((o) => o.commitment === 'finalized' && o.slot >= 990 && o.slot % 5 !== 0)).to.equal(true);
    expect(read.length).to.equal(1011 - 203); // slots 990..2000, without every fifth (failed)
  });

  it('a page that is not a list fails the catch-up', async () => {
    const rpc = { call: async () => ({ error: 'nope' }) };
    let message = '';
    await catchUp(rpc as never, ['ADDR'], 0, () => undefined, { signal: new AbortController().signal }).catch(
      (e: Error) => (message = e.message),
    );
    expect(message).to.equal('ONCEPAY__RPC__MALFORMED_RESPONSE: getSignaturesForAddress(ADDR): not a list');
  });
});
