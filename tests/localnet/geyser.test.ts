// The localnet's Yellowstone gRPC service, driven by the real client (@triton-one/yellowstone-grpc, its napi
// binary): filters, commitment, slot updates, ping/pong, from_slot replay, a dropped stream, x-token, and the
// streamed transaction equal to what getTransaction answers.
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import Client, {
  ClientDuplexStream,
  CommitmentLevel,
  SlotStatus,
  SubscribeRequest,
  SubscribeUpdate,
  txEncode,
  txErrDecode,
} from '@triton-one/yellowstone-grpc';
import bs58 from 'bs58';
import { LocalnetHandle, startLocalnet } from '../../localnet';
import { encodeTxError, INSTRUCTION_ERROR_VARIANTS, TX_ERROR_VARIANTS } from '../../localnet/geyser/tx-error';
import { connect, funded, mintWithBalance, rpc, until } from './support';

const LAMPORTS = 1_000_000_000n;

function request(r: Partial<SubscribeRequest>): SubscribeRequest {
  return {
    accounts: {},
    slots: {},
    transactions: {},
    transactionsStatus: {},
    blocks: {},
    blocksMeta: {},
    entry: {},
    accountsDataSlice: [],
    ...r,
  };
}
function txFilter(f: { include?: string[]; required?: string[]; failed?: boolean }) {
  return { accountInclude: f.include ?? [], accountExclude: [], accountRequired: f.required ?? [], failed: f.failed };
}

interface Tap {
  stream: ClientDuplexStream;
  updates: SubscribeUpdate[];
  error: Error | null;
  signatures(): string[];
}
async function tap(client: Client, req: SubscribeRequest): Promise<Tap> {
  const stream = await client.subscribe();
  const t: Tap = {
    stream,
    updates: [],
    error: null,
    signatures: () =>
      t.updates.flatMap((u) => (u.transaction ? [bs58.encode(u.transaction.transaction!.signature)] : [])),
  };
  stream.on('data', (u: SubscribeUpdate) => t.updates.push(u));
  stream.on('error', (e: Error) => (t.error = e));
  await new Promise<void>((resolve, reject) => stream.write(req, (e?: Error | null) => (e ? reject(e) : resolve())));
  return t;
}
const settle = (ms = 150) => new Promise((r) => setTimeout(r, ms));
/** An error's message and its causes', as the client nests them (the HTTP/2 reason is a cause). */
const causes = (e: unknown): string => (e instanceof Error ? `${e.message} / ${causes(e.cause)}` : '');

describe('localnet: Yellowstone gRPC Subscribe (real client)', function () {
  this.timeout(60_000);
  let net: LocalnetHandle;
  let client: Client;
  const open: Tap[] = [];
  const sub = async (req: SubscribeRequest): Promise<Tap> => {
    const t = await tap(client, req);
    open.push(t);
    await settle();
    return t;
  };

  before(async () => {
    net = await startLocalnet({ slotMs: 0, finalityDepth: 2, geyser: {} });
    client = new Client(net.grpcUrl!, undefined, undefined);
    await client.connect();
  });
  afterEach(() => {
    for (const t of open.splice(0)) t.stream.destroy();
  });
  after(async () => {
    await net?.stop();
  });

  it('answers the unary calls from the chain (GetSlot, Ping, GetLatestBlockhash, SubscribeReplayInfo)', async () => {
    net.advanceSlots(3);
    expect((await client.getSlot(CommitmentLevel.CONFIRMED)).slot).to.equal(String(net.chain.tipSlot()));
    expect((await client.getSlot(CommitmentLevel.FINALIZED)).slot).to.equal(String(net.chain.finalizedSlot()));
    expect((await client.ping(5)).count).to.equal(5);
    const bh = await client.getLatestBlockhash(CommitmentLevel.CONFIRMED);
    expect(bh.blockhash).to.equal(net.chain.blockAt('confirmed').blockhash);
    expect((await client.isBlockhashValid(bh.blockhash)).valid).to.equal(true);
    expect((await client.subscribeReplayInfo()).firstAvailable).to.equal('0');
  });

  it('sends only transactions naming an account_include address, at confirmed, then the slot update', async () => {
    const a = Keypair.generate().publicKey.toBase58();
    const t = await sub(
      request({
        transactions: { deposits: txFilter({ include: [a] }) },
        slots: { s: { filterByCommitment: true }, every: {} },
        commitment: CommitmentLevel.CONFIRMED,
      }),
    );
    const mine = net.chain.airdrop(a, LAMPORTS);
    net.chain.airdrop(Keypair.generate().publicKey.toBase58(), LAMPORTS);
    net.advanceSlots(1);
    const slot = net.chain.tipSlot();
    await until('the transaction and its slot', async () => t.updates.some((u) => u.slot?.slot === String(slot)));
    expect(t.signatures()).to.deep.equal([mine]);
    const tx = t.updates.find((u) => u.transaction)!;
    expect(tx.filters).to.deep.equal(['deposits']);
    expect(tx.transaction!.slot).to.equal(String(slot));
    const slotUpdate = t.updates.find((u) => u.slot)!;
    expect(slotUpdate.slot!.status).to.equal(SlotStatus.SLOT_CONFIRMED);
    // `every` is a default (empty) slot filter, which the Rust client sends as a bare name: it matches too.
    expect(slotUpdate.filters.sort()).to.deep.equal(['every', 's']);
    expect(t.updates.indexOf(tx)).to.be.lessThan(t.updates.indexOf(slotUpdate));
  });

  it('account_required: only transactions naming every required address', async () => {
    const a = Keypair.generate().publicKey.toBase58();
    const t = await sub(
      request({
        transactions: { both: txFilter({ required: [a, net.chain.faucet.publicKey.toBase58()] }) },
        commitment: CommitmentLevel.CONFIRMED,
      }),
    );
    const hit = net.chain.airdrop(a, LAMPORTS);
    net.chain.airdrop(Keypair.generate().publicKey.toBase58(), LAMPORTS);
    net.advanceSlots(1);
    await until('the transaction', async () => t.signatures().length > 0);
    await settle();
    expect(t.signatures()).to.deep.equal([hit]);
  });

  it('at finalized, a transaction arrives only once its block is final', async () => {
    const a = Keypair.generate().publicKey.toBase58();
    const t = await sub(
      request({ transactions: { d: txFilter({ include: [a] }) }, commitment: CommitmentLevel.FINALIZED }),
    );
    const sig = net.chain.airdrop(a, LAMPORTS);
    net.advanceSlots(1);
    const slot = net.chain.tipSlot();
    await settle(300);
    expect(t.signatures(), 'confirmed, not final yet').to.deep.equal([]);
    net.advanceSlots(2);
    expect(net.chain.finalizedSlot()).to.be.at.least(slot);
    await until('the finalized transaction', async () => t.signatures().length > 0);
    expect(t.signatures()).to.deep.equal([sig]);
    expect(t.updates.find((u) => u.transaction)!.transaction!.slot).to.equal(String(slot));
  });

  it('answers a ping with its pong and keeps the filters', async () => {
    const a = Keypair.generate().publicKey.toBase58();
    const t = await sub(
      request({ transactions: { d: txFilter({ include: [a] }) }, commitment: CommitmentLevel.CONFIRMED }),
    );
    t.stream.write(request({ ping: { id: 42 } }));
    await until('the pong', async () => t.updates.some((u) => u.pong?.id === 42));
    const sig = net.chain.airdrop(a, LAMPORTS);
    net.advanceSlots(1);
    await until('the transaction after the ping', async () => t.signatures().includes(sig));
  });

  it('from_slot replays retained blocks at the commitment, then goes on live; too old a slot is refused', async () => {
    const a = Keypair.generate().publicKey.toBase58();
    const first = net.chain.airdrop(a, LAMPORTS);
    net.advanceSlots(1);
    const from = net.chain.tipSlot();
    const second = net.chain.airdrop(a, LAMPORTS);
    net.advanceSlots(3);
    const t = await sub(
      request({
        transactions: { d: txFilter({ include: [a] }) },
        commitment: CommitmentLevel.FINALIZED,
        fromSlot: String(from),
      }),
    );
    await until('the replay', async () => t.signatures().length >= 2);
    expect(t.signatures()).to.deep.equal([first, second]);
    const third = net.chain.airdrop(a, LAMPORTS);
    net.advanceSlots(3);
    await until('the live one', async () => t.signatures().length >= 3);
    expect(t.signatures()).to.deep.equal([first, second, third]);

    const short = await startLocalnet({ slotMs: 0, finalityDepth: 0, geyser: { replaySlots: 5 } });
    try {
      short.advanceSlots(20);
      const c = new Client(short.grpcUrl!, undefined, undefined);
      await c.connect();
      const old = await tap(c, request({ transactions: { d: txFilter({}) }, fromSlot: '3' }));
      await until('the refusal', async () => old.error);
      expect(old.updates.filter((u) => u.transaction)).to.deep.equal([]);
      old.stream.destroy();
    } finally {
      await short.stop();
    }
  });

  it('a dropped stream ends mid-block with an error; a resubscribe from that slot gets the whole block', async () => {
    const a = Keypair.generate().publicKey.toBase58();
    const req = request({ transactions: { d: txFilter({ include: [a] }) }, commitment: CommitmentLevel.CONFIRMED });
    const t = await sub(req);
    net.faults.dropGeyserStreams({ afterTransactions: 1 });
    const sigs = [
      net.chain.airdrop(a, LAMPORTS),
      net.chain.airdrop(a, 2n * LAMPORTS),
      net.chain.airdrop(a, 3n * LAMPORTS),
    ];
    net.advanceSlots(1);
    const slot = net.chain.tipSlot();
    await until('the drop', async () => t.error);
    expect(t.signatures(), 'one transaction of the block, then the drop').to.deep.equal([sigs[0]]);
    expect(net.geyser!.streams()).to.equal(0);
    const again = await sub({ ...req, fromSlot: String(slot) });
    await until('the block again', async () => again.signatures().length >= 3);
    expect(again.signatures()).to.deep.equal(sigs);
  });

  it('a burst of small updates to a client that stopped reading arrives whole and in order (no too_many_data_frames)', async () => {
    // Its own connection: the client's HTTP/2 layer (h2) keeps a per-connection budget for small DATA frames it
    // holds unread, and closes the connection (GOAWAY ENHANCE_YOUR_CALM "too_many_data_frames") once ~120 frames
    // under 256 bytes wait. 400 slots at confirmed are 800 slot updates of ~30 bytes, written in one tick; the
    // paused client takes ~160 into its own buffers and leaves the rest to h2. One DATA frame per update (grpc-js's
    // way) exhausts the budget; the server's batches (a few 16 KiB frames) do not.
    const c = new Client(net.grpcUrl!, undefined, undefined);
    await c.connect();
    const t = await tap(c, request({ slots: { all: {} }, commitment: CommitmentLevel.CONFIRMED }));
    open.push(t);
    await settle();
    t.updates.length = 0;
    t.stream.pause();
    const first = net.chain.tipSlot() + 1;
    net.advanceSlots(400);
    const tip = net.chain.tipSlot();
    const final = net.chain.finalizedSlot();
    await settle(1000);
    t.stream.resume();
    const key = (u: SubscribeUpdate): string => `${u.slot!.slot}:${u.slot!.status}`;
    const lastKey = `${tip}:${SlotStatus.SLOT_CONFIRMED}`;
    await until('the whole burst, or the error', async () => t.error ?? t.updates.some((u) => key(u) === lastKey));
    expect(causes(t.error), 'the stream was not ended').to.equal('');
    await until('the last finalized update', async () =>
      t.updates.some((u) => key(u) === `${final}:${SlotStatus.SLOT_FINALIZED}`),
    );
    const slotsAt = (status: SlotStatus): number[] =>
      t.updates.filter((u) => u.slot?.status === status).map((u) => Number(u.slot!.slot));
    const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    expect(slotsAt(SlotStatus.SLOT_CONFIRMED), 'every confirmed slot, in order').to.deep.equal(range(first, tip));
    const finals = slotsAt(SlotStatus.SLOT_FINALIZED);
    expect(finals, 'every finalized slot, in order').to.deep.equal(range(finals[0], final));
    expect(finals[0]).to.be.at.most(first);
    // Each finalized update comes after its slot's confirmed one.
    const at = new Map(t.updates.map((u, i) => [key(u), i]));
    for (const s of finals.filter((x) => x >= first))
      expect(at.get(`${s}:${SlotStatus.SLOT_FINALIZED}`)).to.be.greaterThan(
        at.get(`${s}:${SlotStatus.SLOT_CONFIRMED}`)!,
      );
  });

  it('the streamed transaction, encoded by the client, is what getTransaction answers (token balances, CPI)', async () => {
    const live = await startLocalnet({ slotMs: 20, finalityDepth: 1, geyser: {} });
    try {
      const conn = connect(live);
      const payer = await funded(conn);
      const c = new Client(live.grpcUrl!, undefined, undefined);
      await c.connect();
      const t = await tap(
        c,
        request({
          transactions: { p: txFilter({ include: [payer.publicKey.toBase58()] }) },
          commitment: CommitmentLevel.CONFIRMED,
        }),
      );
      await settle();
      await mintWithBalance(conn, payer, 1_234_567n);
      await until('the mint transaction', async () => t.signatures().length > 0);
      const info = t.updates.find((u) => u.transaction)!.transaction!.transaction!;
      const streamed = txEncode.encode(info, txEncode.encoding.Json, 0, false) as unknown as {
        transaction: { message: { instructions: Array<{ stackHeight: number | null }> } };
        meta: Record<string, unknown>;
      };
      const sig = bs58.encode(info.signature);
      const { result } = await rpc<{
        transaction: unknown;
        meta: Record<string, unknown> & { postTokenBalances: Array<{ uiTokenAmount: { amount: string } }> };
      }>(live.url, 'getTransaction', [
        sig,
        { encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0 },
      ]);
      const rpcTx = result!;
      // Agave's encoder (the client's) and the localnet RPC both give top-level instructions stackHeight 1.
      expect(streamed.transaction.message.instructions.map((ix) => ix.stackHeight)).to.include(1);
      expect(streamed.transaction).to.deep.equal(rpcTx.transaction);
      for (const k of [
        'err',
        'fee',
        'preBalances',
        'postBalances',
        'innerInstructions',
        'logMessages',
        'preTokenBalances',
        'postTokenBalances',
        'computeUnitsConsumed',
      ])
        expect(streamed.meta[k], k).to.deep.equal(rpcTx.meta[k]);
      expect(rpcTx.meta.postTokenBalances[0].uiTokenAmount.amount).to.equal('1234567');
      t.stream.destroy();
    } finally {
      await live.stop();
    }
  });

  it('x-token: a stream without the token is refused, with it served', async () => {
    const guarded = await startLocalnet({ slotMs: 0, geyser: { xToken: 'sekret' } });
    try {
      const bad = new Client(guarded.grpcUrl!, 'wrong', undefined);
      await bad.connect();
      const refused = await tap(bad, request({ transactions: { d: txFilter({}) } })).then(
        (t) => until('the refusal', async () => t.error),
        (e: Error) => e,
      );
      expect(causes(refused)).to.match(/x-token is missing or wrong/);
      const good = new Client(guarded.grpcUrl!, 'sekret', undefined);
      await good.connect();
      const served = await tap(
        good,
        request({ transactions: { d: txFilter({}) }, commitment: CommitmentLevel.CONFIRMED }),
      );
      await settle();
      const sig = guarded.chain.airdrop(Keypair.generate().publicKey.toBase58(), LAMPORTS);
      guarded.advanceSlots(1);
      await until('the transaction', async () => served.signatures().includes(sig));
      expect(served.error).to.equal(null);
      served.stream.destroy();
    } finally {
      await guarded.stop();
    }
  });

  it('transaction errors are carried as the bincode the client decodes back to the RPC shape', () => {
    const cases: unknown[] = [
      ...TX_ERROR_VARIANTS.filter(
        (v) =>
          ![
            'InstructionError',
            'DuplicateInstruction',
            'InsufficientFundsForRent',
            'ProgramExecutionTemporarilyRestricted',
          ].includes(v),
      ),
      ...INSTRUCTION_ERROR_VARIANTS.filter((v) => v !== 'Custom').map((v) => ({ InstructionError: [2, v] })),
      { InstructionError: [1, { Custom: 6000 }] },
      { DuplicateInstruction: 3 },
      { InsufficientFundsForRent: { account_index: 1 } },
      { ProgramExecutionTemporarilyRestricted: { account_index: 4 } },
    ];
    for (const err of cases)
      expect(txErrDecode.decode(encodeTxError(err as never)), JSON.stringify(err)).to.deep.equal(err);
  });
});
