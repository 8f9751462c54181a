// The chain's pure parts, without LiteSVM or a ledger: the block index with finality (block-index.ts) and the
// account history that answers reads at a commitment (account-history.ts).
import { expect } from 'chai';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { createAccountHistory, sameAccount } from '../../localnet/account-history';
import { MAX_BLOCKHASH_AGE, SLOT_HASHES_MAX, createBlockIndex, keysOfRecord } from '../../localnet/block-index';
import type { AccountSnapshot, RpcMeta } from '../../localnet/encode';
import type { BlockRecord, TxRecord } from '../../localnet/types';

function tx(signature: string, slot: number): TxRecord {
  return { signature, slot, wire: '', meta: { err: null } as unknown as RpcMeta };
}

function block(slot: number, parent: BlockRecord | null, txs: TxRecord[] = []): BlockRecord {
  return {
    slot,
    parentSlot: parent?.slot ?? 0,
    blockhash: `hash-${slot}`,
    previousBlockhash: parent?.blockhash ?? 'none',
    blockHeight: parent ? parent.blockHeight + 1 : 0,
    blockTime: 1_700_000_000 + slot,
    txs,
  };
}

/** A chain of blocks at the given slots (the first is genesis), each with the given transactions. */
function chainOf(slots: number[], txsAt: Record<number, TxRecord[]> = {}): BlockRecord[] {
  const out: BlockRecord[] = [];
  for (const s of slots) out.push(block(s, out[out.length - 1] ?? null, txsAt[s] ?? []));
  return out;
}

function account(lamports: bigint, data = new Uint8Array(0)): AccountSnapshot {
  return { lamports, owner: '11111111111111111111111111111111', data, executable: false, rentEpoch: 0n };
}

describe('localnet block index (pure)', () => {
  it('indexes blocks by slot, lists the slots in a range and moves finality by depth', () => {
    const idx = createBlockIndex();
    const blocks = chainOf([0, 1, 2, 4, 5, 7, 8]);
    for (const b of blocks) idx.add(b, () => []);
    expect(idx.tip().slot).to.equal(8);
    expect(idx.get(4)).to.equal(blocks[3]);
    expect(idx.get(3)).to.equal(undefined);
    expect(idx.slotsIn(2, 7)).to.deep.equal([2, 4, 5, 7]);
    expect(idx.slotsIn(3, 3)).to.deep.equal([]);
    expect(idx.blockCount()).to.equal(7);
    expect(idx.finalized().slot).to.equal(0);
    // Depth 3: the newest block at or under slot 8 - 3 = 5 becomes final, each newly final block once.
    expect(idx.advanceFinality(3).map((b) => b.slot)).to.deep.equal([1, 2, 4, 5]);
    expect(idx.finalized().slot).to.equal(5);
    expect(idx.advanceFinality(3)).to.deep.equal([]);
  });

  it('keeps a blockhash valid for MAX_BLOCKHASH_AGE blocks, then refuses it', () => {
    const idx = createBlockIndex();
    const slots = Array.from({ length: MAX_BLOCKHASH_AGE }, (_, i) => i);
    const blocks = chainOf(slots);
    for (const b of blocks) idx.add(b, () => []);
    expect(idx.lastValidBlockHeight('hash-0')).to.equal(MAX_BLOCKHASH_AGE);
    expect(idx.isBlockhashValid('hash-0')).to.equal(true);
    idx.add(block(MAX_BLOCKHASH_AGE, blocks[blocks.length - 1]), () => []);
    expect(idx.isBlockhashValid('hash-0')).to.equal(false);
    expect(idx.isBlockhashValid('hash-1')).to.equal(true);
    expect(idx.isBlockhashValid('never-seen')).to.equal(false);
    expect(idx.lastValidBlockHeight('never-seen')).to.equal(null);
  });

  it('locates signatures and pages an address newest first with before / until', () => {
    const idx = createBlockIndex();
    const keys: Record<string, string[]> = { a: ['X', 'Y'], b: ['Y'], c: ['X', 'X'], d: ['X'] };
    const blocks = chainOf([0, 1, 2], { 1: [tx('a', 1), tx('b', 1)], 2: [tx('c', 2), tx('d', 2)] });
    for (const b of blocks) idx.add(b, (t) => keys[t.signature]);
    expect(idx.transactionCount()).to.equal(4);
    const loc = idx.locate('c')!;
    expect([loc.block.slot, loc.index]).to.deep.equal([2, 0]);
    const sigs = (o: { before?: string; until?: string; limit: number }): string[] =>
      idx.signaturesForAddress('X', o).map((r) => r.record.signature);
    // A key listed twice in one transaction counts once.
    expect(sigs({ limit: 10 })).to.deep.equal(['d', 'c', 'a']);
    expect(sigs({ limit: 2 })).to.deep.equal(['d', 'c']);
    expect(sigs({ before: 'd', limit: 10 })).to.deep.equal(['c', 'a']);
    expect(sigs({ until: 'a', limit: 10 })).to.deep.equal(['d', 'c']);
    expect(idx.signaturesForAddress('Y', { limit: 10 }).map((r) => r.block.slot)).to.deep.equal([1, 1]);
    expect(idx.signaturesForAddress('Z', { limit: 10 })).to.deep.equal([]);
  });

  it('decodes the account keys of records read back from a ledger', () => {
    const payer = Keypair.generate();
    const to = Keypair.generate().publicKey;
    const t = new Transaction({ feePayer: payer.publicKey, recentBlockhash: bs58.encode(Buffer.alloc(32, 1)) }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1 }),
    );
    t.sign(payer);
    const record: TxRecord = {
      signature: bs58.encode(t.signature!),
      slot: 1,
      wire: t.serialize().toString('base64'),
      meta: { err: null, loadedAddresses: { writable: [], readonly: [] } } as unknown as RpcMeta,
    };
    expect(keysOfRecord(record)).to.include.members([payer.publicKey.toBase58(), to.toBase58()]);
    const idx = createBlockIndex();
    idx.restore(chainOf([0, 1], { 1: [record] }));
    expect(idx.signaturesForAddress(to.toBase58(), { limit: 5 }).map((r) => r.record)).to.deep.equal([record]);
  });

  it('keeps the SlotHashes entries newest first, at most SLOT_HASHES_MAX, whether added or restored', () => {
    const blocks = chainOf(Array.from({ length: SLOT_HASHES_MAX + 10 }, (_, i) => i));
    const added = createBlockIndex();
    for (const b of blocks) added.add(b, () => []);
    const restored = createBlockIndex();
    restored.restore(blocks);
    for (const idx of [added, restored]) {
      const h = idx.slotHashes();
      expect(h.length).to.equal(SLOT_HASHES_MAX);
      expect(h[0]).to.deep.equal({ slot: BigInt(SLOT_HASHES_MAX + 9), hash: `hash-${SLOT_HASHES_MAX + 9}` });
      expect(h[h.length - 1].slot).to.equal(10n);
    }
  });
});

describe('localnet account history (pure)', () => {
  it('answers an account as of a slot from the state before the first later change', () => {
    const h = createAccountHistory();
    const v1 = account(1n);
    const v2 = account(2n);
    const v3 = account(3n);
    h.record(5, ['A', 'B'], [null, account(9n)], [v1, account(9n)]); // B unchanged: not remembered
    h.record(7, ['A'], [v1], [v2]);
    h.record(9, ['A'], [v2], [v3]);
    expect(h.size()).to.equal(1);
    expect(h.at('A', 4, v3)).to.equal(null); // before it existed
    expect(h.at('A', 5, v3)).to.equal(v1);
    expect(h.at('A', 8, v3)).to.equal(v2);
    expect(h.at('A', 9, v3)).to.equal(v3);
    expect(h.at('B', 1, account(9n))).to.deep.equal(account(9n));
  });

  it('prunes changes at or below the finalized slot, keeping later ones readable', () => {
    const h = createAccountHistory();
    const v1 = account(1n);
    const v2 = account(2n);
    h.record(5, ['A'], [null], [v1]);
    h.record(7, ['A'], [v1], [v2]);
    h.prune(5);
    expect(h.at('A', 6, v2)).to.equal(v1);
    h.prune(7);
    expect(h.size()).to.equal(0);
    expect(h.at('A', 6, v2)).to.equal(v2);
  });

  it('compares accounts by lamports, owner, executable and data', () => {
    expect(sameAccount(null, null)).to.equal(true);
    expect(sameAccount(account(1n), null)).to.equal(false);
    expect(sameAccount(account(1n, Uint8Array.of(1)), account(1n, Uint8Array.of(1)))).to.equal(true);
    expect(sameAccount(account(1n, Uint8Array.of(1)), account(1n, Uint8Array.of(2)))).to.equal(false);
    expect(sameAccount(account(1n), { ...account(1n), executable: true })).to.equal(false);
  });
});
