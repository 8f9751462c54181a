// shareChainCalls without a chain: an inner PayoutChain that records its calls and answers when the test says,
// so what is merged, what is shared and what each caller gets back are all visible.
import { expect } from 'chai';
import { PayoutChain, SignatureStatus } from '../../../app/payout/chain';
import { MAX_STATUSES_PER_CALL, shareChainCalls } from '../../../app/payout/shared-chain';
import { OP_ACCOUNT_DISCRIMINATOR, OP_ACCOUNT_LEN } from '../../../app/payout/program';
import { PAYOUT_CODES, RPC_CODES } from '../../../common/errors/codes';
import { Address, Signature } from '../../../app/types';

interface Pending<T> {
  args: unknown;
  resolve(v: T): void;
  reject(e: unknown): void;
}

function recordingChain() {
  const statusCalls: Array<Pending<SignatureStatus[]>> = [];
  const blockhashCalls: Array<Pending<{ blockhash: string; lastValidBlockHeight: bigint }>> = [];
  const opCalls: Array<Pending<Array<Uint8Array | null>>> = [];
  const pending = <T>(list: Array<Pending<T>>, args: unknown) =>
    new Promise<T>((resolve, reject) => list.push({ args, resolve, reject }));
  const chain: PayoutChain = {
    signatureStatuses: (sigs) => pending(statusCalls, sigs),
    latestBlockhash: () => pending(blockhashCalls, undefined),
    sendRawTransaction: async () => undefined,
    blockhashExpired: async () => false,
    getOpAccount: async () => {
      throw new Error('a shared op-account read goes through opAccountsData');
    },
    opAccountsData: (pdas, programId, commitment) => pending(opCalls, { pdas, programId, commitment }),
    opAccountSignatures: async () => [],
  };
  return { chain, statusCalls, blockhashCalls, opCalls };
}

const sig = (s: string) => s as Signature;
/** Each signature's status: found at a slot made of its digits (so a mix-up shows). */
const answer = (sigs: unknown): SignatureStatus[] =>
  (sigs as string[]).map((s) => ({ found: true, settled: true, slot: BigInt(s.replace(/\D/g, '') || '0'), err: null }));
const tick = () => new Promise((r) => setImmediate(r));
const pda = (s: string) => s as Address;
const PROGRAM = 'program' as Address;
/** An op account's data whose amount is the pda's digits (so a mix-up shows); 'short' ones are malformed. */
const opData = (p: string): Uint8Array | null => {
  if (p.startsWith('absent')) return null;
  const b = Buffer.alloc(p.startsWith('short') ? 40 : OP_ACCOUNT_LEN);
  OP_ACCOUNT_DISCRIMINATOR.copy(b, 0);
  if (b.length === OP_ACCOUNT_LEN) b.writeBigUInt64LE(BigInt(p.replace(/\D/g, '') || '0'), 136);
  return b;
};
const opAnswer = (args: unknown) => (args as { pdas: string[] }).pdas.map(opData);
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: Error & { code?: string }) => e,
  );

describe('app/payout shareChainCalls (pure: no chain)', () => {
  it('a lone ask goes out at once, as asked', async () => {
    const { chain, statusCalls } = recordingChain();
    const shared = shareChainCalls(chain);
    const r = shared.signatureStatuses([sig('s1'), sig('s2')]);
    expect(statusCalls.map((c) => c.args)).to.deep.equal([['s1', 's2']]);
    statusCalls[0].resolve(answer(statusCalls[0].args));
    expect((await r).map((s) => (s as { slot: bigint }).slot)).to.deep.equal([1n, 2n]);
  });

  it('asks made while one is in flight go out together in the next call; each caller gets its own statuses', async () => {
    const { chain, statusCalls } = recordingChain();
    const shared = shareChainCalls(chain);
    const first = shared.signatureStatuses([sig('s1')]);
    const a = shared.signatureStatuses([sig('s2'), sig('s3')]);
    const b = shared.signatureStatuses([sig('s3'), sig('s4')]);
    const c = shared.signatureStatuses([sig('s5')]);
    expect(statusCalls).to.have.length(1);
    statusCalls[0].resolve(answer(statusCalls[0].args));
    await first;
    await tick();
    expect(statusCalls.map((x) => x.args)).to.deep.equal([['s1'], ['s2', 's3', 's4', 's5']]);
    statusCalls[1].resolve(answer(statusCalls[1].args));
    const slots = async (p: Promise<SignatureStatus[]>) => (await p).map((s) => (s as { slot: bigint }).slot);
    expect(await slots(a)).to.deep.equal([2n, 3n]);
    expect(await slots(b)).to.deep.equal([3n, 4n]);
    expect(await slots(c)).to.deep.equal([5n]);
  });

  it('a failed call fails every ask it carried (a chain failure decides nothing) and the next asks go on', async () => {
    const { chain, statusCalls } = recordingChain();
    const shared = shareChainCalls(chain);
    const first = shared.signatureStatuses([sig('s1')]);
    const a = shared.signatureStatuses([sig('s2')]);
    const b = shared.signatureStatuses([sig('s3')]);
    statusCalls[0].resolve(answer(statusCalls[0].args));
    await first;
    await tick();
    statusCalls[1].reject(new Error('429'));
    for (const p of [a, b]) {
      const e = await p.then(
        () => null,
        (x: Error) => x,
      );
      expect(e?.message).to.equal('429');
    }
    const later = shared.signatureStatuses([sig('s6')]);
    await tick();
    expect(statusCalls.map((x) => x.args)).to.deep.equal([['s1'], ['s2', 's3'], ['s6']]);
    statusCalls[2].resolve(answer(statusCalls[2].args));
    expect(await later).to.have.length(1);
  });

  it('never more than 256 signatures in one call: the rest wait for the next', async () => {
    const { chain, statusCalls } = recordingChain();
    const shared = shareChainCalls(chain);
    const first = shared.signatureStatuses([sig('s0')]);
    const asks = Array.from({ length: 3 }, (_, k) =>
      shared.signatureStatuses(Array.from({ length: 100 }, (_, i) => sig(`s${k * 100 + i + 1}`))),
    );
    statusCalls[0].resolve(answer(statusCalls[0].args));
    await first;
    await tick();
    expect(statusCalls).to.have.length(2);
    expect((statusCalls[1].args as string[]).length).to.equal(200);
    expect(MAX_STATUSES_PER_CALL).to.equal(256);
    statusCalls[1].resolve(answer(statusCalls[1].args));
    await Promise.all(asks.slice(0, 2));
    await tick();
    expect((statusCalls[2].args as string[]).length).to.equal(100);
    statusCalls[2].resolve(answer(statusCalls[2].args));
    expect((await asks[2])[99]).to.deep.include({ slot: 300n });
  });

  it('a blockhash is shared for blockhashMaxAgeMs (a fetch in flight too), then fetched again', async () => {
    const { chain, blockhashCalls } = recordingChain();
    let t = 0;
    const shared = shareChainCalls(chain, { blockhashMaxAgeMs: 100, now: () => t });
    const a = shared.latestBlockhash();
    t = 50;
    const b = shared.latestBlockhash();
    expect(blockhashCalls).to.have.length(1);
    blockhashCalls[0].resolve({ blockhash: 'h1', lastValidBlockHeight: 150n });
    expect(await a).to.deep.equal({ blockhash: 'h1', lastValidBlockHeight: 150n });
    expect(await b).to.deep.equal({ blockhash: 'h1', lastValidBlockHeight: 150n });
    t = 100;
    const c = shared.latestBlockhash();
    expect(blockhashCalls).to.have.length(2);
    blockhashCalls[1].resolve({ blockhash: 'h2', lastValidBlockHeight: 160n });
    expect((await c).blockhash).to.equal('h2');
  });

  it('a failed blockhash fetch is not reused; by default every attempt fetches its own', async () => {
    const { chain, blockhashCalls } = recordingChain();
    const shared = shareChainCalls(chain, { blockhashMaxAgeMs: 1000, now: () => 0 });
    const a = shared.latestBlockhash();
    blockhashCalls[0].reject(new Error('timeout'));
    await a.catch(() => undefined);
    void shared.latestBlockhash();
    expect(blockhashCalls).to.have.length(2);
    const { chain: c2, blockhashCalls: calls2 } = recordingChain();
    const unshared = shareChainCalls(c2);
    void unshared.latestBlockhash();
    void unshared.latestBlockhash();
    expect(calls2).to.have.length(2);
  });

  it('op-account reads asked while one is in flight go out as one call; each reader gets its own account', async () => {
    const { chain, opCalls } = recordingChain();
    const shared = shareChainCalls(chain);
    const first = shared.getOpAccount(pda('p1'), PROGRAM, 'finalized');
    expect(opCalls.map((c) => c.args)).to.deep.equal([{ pdas: ['p1'], programId: PROGRAM, commitment: 'finalized' }]);
    const reads = ['p2', 'absent3', 'p4', 'short5', 'p2'].map((p) => shared.getOpAccount(pda(p), PROGRAM, 'finalized'));
    expect(opCalls).to.have.length(1);
    opCalls[0].resolve(opAnswer(opCalls[0].args));
    expect((await first)?.amount).to.equal(1n);
    await tick();
    // One call for the five reads (p2 asked once), at the same commitment, for the same program.
    expect(opCalls.map((c) => (c.args as { pdas: string[] }).pdas)).to.deep.equal([
      ['p1'],
      ['p2', 'absent3', 'p4', 'short5'],
    ]);
    expect((opCalls[1].args as { commitment: string }).commitment).to.equal('finalized');
    opCalls[1].resolve(opAnswer(opCalls[1].args));
    expect((await reads[0])?.amount).to.equal(2n);
    expect(await reads[1]).to.equal(null);
    expect((await reads[2])?.amount).to.equal(4n);
    // A malformed account fails its own read only, with the error a lone read gives.
    expect((await failure(reads[3]))?.code).to.equal(PAYOUT_CODES.OP_ACCOUNT_MALFORMED);
    expect((await reads[4])?.amount).to.equal(2n);
  });

  it('a failed or malformed op-account answer fails every read it carried; the next reads go on', async () => {
    const { chain, opCalls } = recordingChain();
    const shared = shareChainCalls(chain);
    const first = shared.getOpAccount(pda('p1'), PROGRAM, 'finalized');
    const [a, b] = ['p2', 'p3'].map((p) => shared.getOpAccount(pda(p), PROGRAM, 'finalized'));
    opCalls[0].reject(new Error('timeout'));
    expect((await failure(first))?.message).to.equal('timeout');
    await tick();
    // One entry for two accounts asked: refused as a whole.
    opCalls[1].resolve([opData('p2')]);
    for (const p of [a, b]) {
      const e = await failure(p);
      expect(e?.code).to.equal(RPC_CODES.MALFORMED_RESPONSE);
      expect(e?.message).to.match(/malformed answer: 1 values for 2 keys/);
    }
    const later = shared.getOpAccount(pda('p6'), PROGRAM, 'finalized');
    expect(opCalls).to.have.length(3);
    opCalls[2].resolve(opAnswer(opCalls[2].args));
    expect((await later)?.amount).to.equal(6n);
  });

  it('op-account reads at another commitment or for another program are not merged into the same call', async () => {
    const { chain, opCalls } = recordingChain();
    const shared = shareChainCalls(chain);
    void shared.getOpAccount(pda('p1'), PROGRAM, 'finalized');
    void shared.getOpAccount(pda('p2'), PROGRAM, 'confirmed');
    void shared.getOpAccount(pda('p3'), 'other' as Address, 'finalized');
    expect(opCalls.map((c) => c.args)).to.deep.equal([
      { pdas: ['p1'], programId: PROGRAM, commitment: 'finalized' },
      { pdas: ['p2'], programId: PROGRAM, commitment: 'confirmed' },
      { pdas: ['p3'], programId: 'other', commitment: 'finalized' },
    ]);
  });

  it('a pausing slot’s signatures ride on a call made meanwhile, and its answer ends the pause with their statuses', async () => {
    const { chain, statusCalls } = recordingChain();
    const shared = shareChainCalls(chain);
    const paused = shared.pauseLooking([sig('s7'), sig('s8')], 60_000);
    const asked = shared.signatureStatuses([sig('s1')]);
    // One call: the ask and the riders.
    expect(statusCalls.map((c) => c.args)).to.deep.equal([['s1', 's7', 's8']]);
    statusCalls[0].resolve(answer(statusCalls[0].args));
    expect((await asked).map((x) => (x as { slot: bigint }).slot)).to.deep.equal([1n]);
    // Ended by the answer, long before its 60 s.
    expect((await paused)?.map((x) => (x as { slot: bigint }).slot)).to.deep.equal([7n, 8n]);
    expect(statusCalls).to.have.length(1);
  });

  it('a pause makes no call of its own: with nobody asking it ends at its time, without statuses', async () => {
    const { chain, statusCalls } = recordingChain();
    const shared = shareChainCalls(chain);
    expect(await shared.pauseLooking([sig('s1')], 5)).to.equal(undefined);
    expect(statusCalls).to.have.length(0);
  });

  it('a pause whose time is up while a call carries it waits for that answer; a failed call answers no pause', async () => {
    const { chain, statusCalls } = recordingChain();
    const shared = shareChainCalls(chain);
    const paused = shared.pauseLooking([sig('s2')], 5);
    void shared.signatureStatuses([sig('s1')]).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 30));
    let ended = false;
    void paused.then(() => (ended = true));
    await tick();
    expect(ended).to.equal(false);
    statusCalls[0].resolve(answer(statusCalls[0].args));
    expect((await paused)?.map((x) => (x as { slot: bigint }).slot)).to.deep.equal([2n]);
    // A failed call: the pause goes on to its time and ends without statuses (its slot then looks itself).
    const again = shared.pauseLooking([sig('s3')], 20);
    void shared.signatureStatuses([sig('s1')]).catch(() => undefined);
    expect(statusCalls[1].args).to.deep.equal(['s1', 's3']);
    statusCalls[1].reject(new Error('429'));
    expect(await again).to.equal(undefined);
    expect(statusCalls).to.have.length(2);
  });
});
