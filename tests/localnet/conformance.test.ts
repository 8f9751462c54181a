// web3.js v1 against the localnet: every response goes through web3.js's own superstruct schemas.
import { expect } from 'chai';
import {
  AddressLookupTableProgram,
  ComputeBudgetProgram,
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  ParsedAccountData,
  ParsedInstruction,
  SendTransactionError,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import {
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { LocalnetHandle, startLocalnet } from '../../localnet';
import { connect, funded, mintWithBalance, rpc, RpcResponse, send, until } from './support';

/** sendTransaction's preflight failure (-32002): the simulation's error and logs. */
type PreflightFailure = { err: unknown; logs: string[] };
/** simulateTransaction's result, the fields these tests read. */
type Simulated = {
  value: {
    err: unknown;
    replacementBlockhash: { blockhash: string } | null;
    accounts: Array<{ lamports: number }> | null;
    unitsConsumed: number;
  };
};
/** A parsed instruction as getParsedTransaction gives it inside innerInstructions (with the CPI depth). */
type ParsedInner = ParsedInstruction & { stackHeight?: number };

describe('localnet: web3.js conformance', function () {
  let net: LocalnetHandle;
  let conn: Connection;
  let payer: Keypair;

  before(async () => {
    net = await startLocalnet({ slotMs: 20, finalityDepth: 4, wsOnNextPort: false });
    conn = connect(net);
    payer = await funded(conn, 100);
  });
  after(async () => {
    await net.stop();
  });

  it('sends and confirms a SOL transfer with the blockhash strategy; getTransaction reports fee and balances', async () => {
    const to = Keypair.generate().publicKey;
    const before = await conn.getBalance(payer.publicKey);
    const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash();
    // One batch is answered at one instant, so the pair is consistent even with the clock running.
    const pair = (await (
      await fetch(net.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'getLatestBlockhash', params: [{ commitment: 'confirmed' }] },
          { jsonrpc: '2.0', id: 2, method: 'getBlockHeight', params: [{ commitment: 'confirmed' }] },
        ]),
      })
    ).json()) as [RpcResponse<{ value: { lastValidBlockHeight: number } }>, RpcResponse<number>];
    expect(pair[0].result!.value.lastValidBlockHeight).to.equal(pair[1].result! + 150);
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL }),
    );
    tx.sign(payer);
    const sig = await conn.sendRawTransaction(tx.serialize());
    const res = await conn.confirmTransaction({ signature: sig, blockhash, lastValidBlockHeight }, 'confirmed');
    expect(res.value.err).to.equal(null);

    const got = await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(got).to.not.equal(null);
    expect(got!.version).to.equal('legacy');
    expect(got!.meta!.fee).to.equal(5000);
    expect(got!.meta!.err).to.equal(null);
    const keys = got!.transaction.message.staticAccountKeys.map((k) => k.toBase58());
    const pi = keys.indexOf(payer.publicKey.toBase58());
    const ti = keys.indexOf(to.toBase58());
    expect(got!.meta!.preBalances[pi]).to.equal(before);
    expect(got!.meta!.postBalances[pi]).to.equal(before - LAMPORTS_PER_SOL - 5000);
    expect(got!.meta!.preBalances[ti]).to.equal(0);
    expect(got!.meta!.postBalances[ti]).to.equal(LAMPORTS_PER_SOL);
    expect(got!.meta!.logMessages).to.deep.equal([
      'Program 11111111111111111111111111111111 invoke [1]',
      'Program 11111111111111111111111111111111 success',
    ]);
    expect(await conn.getBalance(to)).to.equal(LAMPORTS_PER_SOL);

    // The same transaction in its block, in json and base64.
    const block = await conn.getBlock(got!.slot, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(block!.transactions.map((t) => t.transaction.signatures[0])).to.include(sig);
    expect(block!.parentSlot).to.be.lessThan(got!.slot);
    expect((block as unknown as { blockHeight: number }).blockHeight).to.be.a('number');
    const parent = await conn.getBlock(block!.parentSlot, {
      commitment: 'confirmed',
      maxSupportedTransactionVersion: 0,
    });
    expect(block!.previousBlockhash).to.equal(parent!.blockhash);
    const raw = await rpc<{ transactions: Array<{ transaction: [string, string] }> }>(net.url, 'getBlock', [
      got!.slot,
      { commitment: 'confirmed', encoding: 'base64', maxSupportedTransactionVersion: 0 },
    ]);
    const b64 = raw.result!.transactions.find(
      (t) => VersionedTransaction.deserialize(Buffer.from(t.transaction[0], 'base64')).signatures.length > 0,
    )!;
    expect(b64.transaction[1]).to.equal('base64');
    expect(Buffer.from(b64.transaction[0], 'base64').equals(tx.serialize())).to.equal(true);
    const sigsOnly = await rpc<{ signatures: string[]; transactions?: unknown }>(net.url, 'getBlock', [
      got!.slot,
      { commitment: 'confirmed', transactionDetails: 'signatures', maxSupportedTransactionVersion: 0 },
    ]);
    expect(sigsOnly.result!.signatures).to.include(sig);
    expect(sigsOnly.result!.transactions).to.equal(undefined);
  });

  it('token flow: ATA create (CPI inner instructions with stackHeight), transferChecked parsed, token balances', async () => {
    const t = await mintWithBalance(conn, payer, 5_000_000n);
    expect((await conn.getTokenAccountBalance(t.ata)).value).to.deep.include({
      amount: '5000000',
      decimals: 6,
      uiAmountString: '5',
    });

    const bob = Keypair.generate().publicKey;
    const bobAta = getAssociatedTokenAddressSync(t.mint, bob);
    const sig = await send(conn, payer, [
      createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, bobAta, bob, t.mint),
      createTransferCheckedInstruction(t.ata, t.mint, bobAta, payer.publicKey, 1_250_000n, 6),
    ]);
    const parsed = await conn.getParsedTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    const ixs = parsed!.transaction.message.instructions as ParsedInstruction[];
    expect(ixs[0].program).to.equal('spl-associated-token-account');
    expect(ixs[0].parsed.type).to.equal('createIdempotent');
    expect(ixs[1].program).to.equal('spl-token');
    expect(ixs[1].parsed.type).to.equal('transferChecked');
    expect(ixs[1].parsed.info).to.deep.equal({
      source: t.ata.toBase58(),
      mint: t.mint.toBase58(),
      destination: bobAta.toBase58(),
      authority: payer.publicKey.toBase58(),
      tokenAmount: { amount: '1250000', decimals: 6, uiAmount: 1.25, uiAmountString: '1.25' },
    });
    // The ATA program's CPIs: all at stack height 2, under top-level instruction 0.
    const inner = parsed!.meta!.innerInstructions!;
    expect(inner.map((g) => g.index)).to.deep.equal([0]);
    const innerTypes = (inner[0].instructions as ParsedInner[]).map(
      (i) => `${i.program}:${i.parsed?.type}:${i.stackHeight}`,
    );
    expect(innerTypes).to.include('system:createAccount:2');
    expect(innerTypes).to.include('spl-token:initializeAccount3:2');
    // Token balances: bob's ATA appears only post, payer's ATA pre and post.
    const keys = parsed!.transaction.message.accountKeys.map((k) => k.pubkey.toBase58());
    const bobIdx = keys.indexOf(bobAta.toBase58());
    const payIdx = keys.indexOf(t.ata.toBase58());
    expect(parsed!.meta!.preTokenBalances!.find((b) => b.accountIndex === bobIdx)).to.equal(undefined);
    expect(parsed!.meta!.postTokenBalances!.find((b) => b.accountIndex === bobIdx)).to.deep.include({
      mint: t.mint.toBase58(),
      owner: bob.toBase58(),
      programId: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
    });
    expect(parsed!.meta!.postTokenBalances!.find((b) => b.accountIndex === bobIdx)!.uiTokenAmount.amount).to.equal(
      '1250000',
    );
    expect(parsed!.meta!.preTokenBalances!.find((b) => b.accountIndex === payIdx)!.uiTokenAmount.amount).to.equal(
      '5000000',
    );
    expect(parsed!.meta!.postTokenBalances!.find((b) => b.accountIndex === payIdx)!.uiTokenAmount.amount).to.equal(
      '3750000',
    );

    // The json encoding carries the same inner instructions compiled (indexes into the account keys).
    const json = await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    const ci = json!.meta!.innerInstructions![0].instructions;
    const ckeys = json!.transaction.message.staticAccountKeys.map((k) => k.toBase58());
    expect(ci.map((i) => ckeys[i.programIdIndex])).to.include('11111111111111111111111111111111');
    expect(ci.every((i) => (i as { stackHeight?: number }).stackHeight === 2)).to.equal(true);

    // jsonParsed accounts.
    const info = await conn.getParsedAccountInfo(bobAta);
    expect((info.value!.data as ParsedAccountData).parsed.type).to.equal('account');
    expect((info.value!.data as ParsedAccountData).parsed.info.tokenAmount.amount).to.equal('1250000');
    const mintInfo = await conn.getParsedAccountInfo(t.mint);
    expect((mintInfo.value!.data as ParsedAccountData).parsed.info).to.deep.include({
      decimals: 6,
      supply: '5000000',
      mintAuthority: payer.publicKey.toBase58(),
    });
    const supply = await conn.getTokenSupply(t.mint);
    expect(supply.value).to.deep.include({ amount: '5000000', decimals: 6 });
    const holders = await conn.getProgramAccounts(TOKEN_PROGRAM_ID, {
      filters: [{ dataSize: 165 }, { memcmp: { offset: 0, bytes: t.mint.toBase58() } }],
    });
    expect(holders.map((h) => h.pubkey.toBase58()).sort()).to.deep.equal([t.ata.toBase58(), bobAta.toBase58()].sort());
    const byOwner = await conn.getTokenAccountsByOwner(bob, { mint: t.mint });
    expect(byOwner.value.map((a) => a.pubkey.toBase58())).to.deep.equal([bobAta.toBase58()]);
  });

  it('v0 transaction with an address lookup table: loadedAddresses and indexing', async () => {
    const dests = [Keypair.generate().publicKey, Keypair.generate().publicKey];
    // The real lookup table program: creation checks `recentSlot` against the SlotHashes sysvar we keep.
    const [create, table] = AddressLookupTableProgram.createLookupTable({
      authority: payer.publicKey,
      payer: payer.publicKey,
      recentSlot: await conn.getSlot('confirmed'),
    });
    await send(conn, payer, [
      create,
      AddressLookupTableProgram.extendLookupTable({
        lookupTable: table,
        authority: payer.publicKey,
        payer: payer.publicKey,
        addresses: dests,
      }),
    ]);
    // Extended addresses are usable from the next slot on.
    await send(conn, payer, [
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: LAMPORTS_PER_SOL,
      }),
    ]);
    const lut = (await conn.getAddressLookupTable(table)).value!;
    expect(lut.state.addresses.map((k) => k.toBase58())).to.deep.equal(dests.map((d) => d.toBase58()));
    const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash();
    const msg = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: dests.map((d, i) =>
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: d, lamports: LAMPORTS_PER_SOL * (i + 1) }),
      ),
    }).compileToV0Message([lut]);
    const vtx = new VersionedTransaction(msg);
    vtx.sign([payer]);
    const sig = await conn.sendTransaction(vtx);
    await conn.confirmTransaction({ signature: sig, blockhash, lastValidBlockHeight }, 'confirmed');

    const got = await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(got!.version).to.equal(0);
    expect(got!.meta!.loadedAddresses!.writable.map((k) => k.toBase58())).to.deep.equal(dests.map((d) => d.toBase58()));
    const all = got!.transaction.message.getAccountKeys({ accountKeysFromLookups: got!.meta!.loadedAddresses! });
    expect(all.get(2)!.toBase58()).to.equal(dests[0].toBase58());
    expect(got!.meta!.postBalances[2]).to.equal(LAMPORTS_PER_SOL);
    expect(got!.meta!.postBalances[3]).to.equal(2 * LAMPORTS_PER_SOL);
    const parsed = await conn.getParsedTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(parsed!.transaction.message.accountKeys.map((k) => k.source)).to.deep.equal([
      'transaction',
      'transaction',
      'lookupTable',
      'lookupTable',
    ]);
    // Without maxSupportedTransactionVersion a node refuses v0 with -32015.
    const refused = await rpc(net.url, 'getTransaction', [sig, { commitment: 'confirmed' }]);
    expect(refused.error!.code).to.equal(-32015);
  });

  it('getSignaturesForAddress pages newest first with before/until/limit', async () => {
    const hub = Keypair.generate().publicKey;
    const sigs: string[] = [];
    for (let i = 0; i < 5; i++) {
      sigs.push(
        await send(conn, payer, [
          SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: hub, lamports: LAMPORTS_PER_SOL + i }),
        ]),
      );
    }
    const newestFirst = [...sigs].reverse();
    const page1 = await conn.getSignaturesForAddress(hub, { limit: 2 });
    expect(page1.map((s) => s.signature)).to.deep.equal(newestFirst.slice(0, 2));
    const page2 = await conn.getSignaturesForAddress(hub, { limit: 2, before: page1[1].signature });
    expect(page2.map((s) => s.signature)).to.deep.equal(newestFirst.slice(2, 4));
    const tail = await conn.getSignaturesForAddress(hub, { until: sigs[1] });
    expect(tail.map((s) => s.signature)).to.deep.equal(newestFirst.slice(0, 3));
    expect(page1[0].slot).to.be.at.least(page1[1].slot);
    expect(page1[0].err).to.equal(null);
  });

  it('preflight failure is a -32002 with logs; skipPreflight lands the failed transaction with err and fee', async () => {
    const poorSource = Keypair.generate();
    await send(conn, payer, [
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: poorSource.publicKey,
        lamports: LAMPORTS_PER_SOL,
      }),
    ]);
    const mk = async (): Promise<Transaction> => {
      const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash();
      const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
        SystemProgram.transfer({
          fromPubkey: poorSource.publicKey,
          toPubkey: payer.publicKey,
          lamports: 5 * LAMPORTS_PER_SOL,
        }),
      );
      tx.sign(payer, poorSource);
      return tx;
    };
    const tx = await mk();
    let err: unknown;
    try {
      await conn.sendRawTransaction(tx.serialize());
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(SendTransactionError);
    expect((err as Error).message).to.include('Error processing Instruction 0: custom program error: 0x1');
    // The blockhash is only confirmed: so is the preflight (a node's default, finalized, does not know it yet).
    const raw = await rpc<string, PreflightFailure>(net.url, 'sendTransaction', [
      tx.serialize().toString('base64'),
      { encoding: 'base64', preflightCommitment: 'confirmed' },
    ]);
    expect(raw.error!.code).to.equal(-32002);
    expect(raw.error!.data!.err).to.deep.equal({ InstructionError: [0, { Custom: 1 }] });
    expect(raw.error!.data!.logs.join('\n')).to.include('insufficient lamports');
    // Nothing landed: preflight rejected it before execution.
    const bs58 = (await import('bs58')).default;
    expect(
      (await conn.getSignatureStatus(bs58.encode(tx.signature!), { searchTransactionHistory: true })).value,
    ).to.equal(null);

    const before = await conn.getBalance(payer.publicKey);
    const sig = await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    // (web3.js's confirmTransaction either resolves with the err or rejects with it, depending on which of its
    // websocket and polling paths wins; poll the status instead.)
    const st = await until('failed tx confirmed', async () => {
      const v = (await conn.getSignatureStatus(sig)).value;
      return v && v.confirmationStatus !== 'processed' ? v : null;
    });
    expect(st.err).to.deep.equal({ InstructionError: [0, { Custom: 1 }] });
    const got = await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(got!.meta!.err).to.deep.equal({ InstructionError: [0, { Custom: 1 }] });
    expect(got!.meta!.fee).to.equal(10_000);
    expect(await conn.getBalance(payer.publicKey)).to.equal(before - 10_000);
  });

  it('a resent transaction executes once; preflight says AlreadyProcessed', async () => {
    const to = Keypair.generate().publicKey;
    const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash();
    const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL }),
    );
    tx.sign(payer);
    const sig = await conn.sendRawTransaction(tx.serialize());
    // Immediately again, while still in the pending slot, then after it is confirmed.
    expect(await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true })).to.equal(sig);
    await conn.confirmTransaction({ signature: sig, blockhash, lastValidBlockHeight }, 'confirmed');
    expect(await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true })).to.equal(sig);
    // The blockhash is only confirmed: so is the preflight (a node's default, finalized, does not know it yet).
    const raw = await rpc<string, PreflightFailure>(net.url, 'sendTransaction', [
      tx.serialize().toString('base64'),
      { encoding: 'base64', preflightCommitment: 'confirmed' },
    ]);
    expect(raw.error!.code).to.equal(-32002);
    expect(raw.error!.data!.err).to.equal('AlreadyProcessed');
    net.advanceSlots(1);
    expect(await conn.getBalance(to)).to.equal(LAMPORTS_PER_SOL);
  });

  it('simulateTransaction: sigVerify, replaceRecentBlockhash, and the pair refused', async () => {
    const to = Keypair.generate().publicKey;
    const tx = new Transaction({
      feePayer: payer.publicKey,
      recentBlockhash: Keypair.generate().publicKey.toBase58(),
    }).add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL }));
    tx.sign(payer);
    const b64 = tx.serialize().toString('base64');
    const unknownHash = await rpc<Simulated>(net.url, 'simulateTransaction', [b64, { encoding: 'base64' }]);
    expect(unknownHash.result!.value.err).to.equal('BlockhashNotFound');
    const replaced = await rpc<Simulated>(net.url, 'simulateTransaction', [
      b64,
      {
        encoding: 'base64',
        replaceRecentBlockhash: true,
        accounts: { addresses: [to.toBase58()], encoding: 'base64' },
      },
    ]);
    expect(replaced.result!.value.err).to.equal(null);
    expect(replaced.result!.value.replacementBlockhash!.blockhash).to.be.a('string');
    expect(replaced.result!.value.accounts![0].lamports).to.equal(LAMPORTS_PER_SOL);
    expect(replaced.result!.value.unitsConsumed).to.equal(150);
    const both = await rpc<Simulated>(net.url, 'simulateTransaction', [
      b64,
      { encoding: 'base64', replaceRecentBlockhash: true, sigVerify: true },
    ]);
    expect(both.error!.code).to.equal(-32602);
    // A corrupted signature passes without sigVerify and fails with it.
    const { blockhash } = await conn.getLatestBlockhash();
    const good = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL }),
    );
    good.sign(payer);
    const bytes = good.serialize();
    bytes[10] ^= 0xff;
    const noVerify = await rpc<Simulated>(net.url, 'simulateTransaction', [
      bytes.toString('base64'),
      { encoding: 'base64', commitment: 'confirmed' },
    ]);
    expect(noVerify.result!.value.err).to.equal(null);
    const verify = await rpc<Simulated>(net.url, 'simulateTransaction', [
      bytes.toString('base64'),
      { encoding: 'base64', sigVerify: true, commitment: 'confirmed' },
    ]);
    expect(verify.result!.value.err).to.equal('SignatureFailure');
    expect(await conn.getBalance(to)).to.equal(0);
  });

  it('JSON-RPC envelope: batch, unknown method, bad params, parse error, notifications', async () => {
    const res = await fetch(net.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'getSlot', params: [{ commitment: 'confirmed' }] },
        { jsonrpc: '2.0', id: 2, method: 'noSuchMethod', params: [] },
        { jsonrpc: '2.0', id: 3, method: 'getBlock', params: ['x'] },
        { jsonrpc: '2.0', method: 'getSlot' },
      ]),
    });
    const out = (await res.json()) as RpcResponse[];
    expect(out).to.have.length(3);
    expect(out[0].result).to.be.a('number');
    expect(out[1].error!.code).to.equal(-32601);
    expect(out[2].error!.code).to.equal(-32602);
    const bad = await fetch(net.url, { method: 'POST', body: '{nope' });
    expect(((await bad.json()) as RpcResponse).error!.code).to.equal(-32700);
    const health = await rpc(net.url, 'getHealth');
    expect(health.result).to.equal('ok');
    expect((await rpc(net.url, 'getGenesisHash')).result).to.equal(await conn.getGenesisHash());
    expect((await rpc(net.url, 'getRecentPrioritizationFees')).result).to.deep.equal([]);
    const rent = await conn.getMinimumBalanceForRentExemption(165);
    expect(rent).to.equal(2039280);
    const epoch = await conn.getEpochInfo();
    expect(epoch.absoluteSlot).to.be.a('number');
    const version = await conn.getVersion();
    expect(version['solana-core']).to.be.a('string');
    const { blockhash } = await conn.getLatestBlockhash();
    expect((await conn.isBlockhashValid(blockhash)).value).to.equal(true);
    const msg = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: [],
    }).compileToV0Message();
    expect((await conn.getFeeForMessage(msg)).value).to.equal(5000);
    // A priced transaction: getFeeForMessage agrees with what the runtime charged.
    const pricedTx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 0 }).add(
      ComputeBudgetProgram.setComputeUnitLimit({ units: 300_000 }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 10_001 }),
      SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: LAMPORTS_PER_SOL,
      }),
    );
    const quoted = (await conn.getFeeForMessage(pricedTx.compileMessage(), 'confirmed')).value;
    expect(quoted).to.equal(8001);
    const pricedSig = await send(conn, payer, pricedTx.instructions);
    expect(
      (await conn.getTransaction(pricedSig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }))!.meta!.fee,
    ).to.equal(quoted);
    const metrics = await (await fetch(`${net.url}/metrics`)).text();
    expect(metrics).to.match(/oncepay_localnet_rpc_requests_total\{method="getSlot"\} [1-9]/);
    expect(metrics).to.match(/oncepay_localnet_transactions_total [1-9]/);
  });
});

describe('localnet: commitment in manual mode', function () {
  let net: LocalnetHandle;
  let conn: Connection;
  before(async () => {
    net = await startLocalnet({ slotMs: 0, finalityDepth: 3, wsOnNextPort: false });
    conn = connect(net);
  });
  after(async () => {
    await net.stop();
  });

  it('a transaction moves processed → confirmed → finalized as slots are advanced', async () => {
    const kp = Keypair.generate();
    const sig = await conn.requestAirdrop(kp.publicKey, LAMPORTS_PER_SOL);
    const status = async (): Promise<string | undefined> =>
      (await conn.getSignatureStatuses([sig], { searchTransactionHistory: true })).value[0]?.confirmationStatus;
    expect(await status()).to.equal('processed');
    expect(await conn.getTransaction(sig, { commitment: 'confirmed' })).to.equal(null);
    net.advanceSlots(1);
    expect(await status()).to.equal('confirmed');
    const slot = (await conn.getSignatureStatus(sig)).value!.slot;
    expect(await conn.getTransaction(sig, { commitment: 'finalized' })).to.equal(null);
    expect(await conn.getSlot('finalized')).to.be.lessThan(slot);
    net.advanceSlots(3);
    expect(await status()).to.equal('finalized');
    expect(await conn.getSlot('finalized')).to.equal(slot);
    expect((await conn.getTransaction(sig, { commitment: 'finalized' }))!.slot).to.equal(slot);
    expect((await conn.getSignatureStatus(sig)).value!.confirmations).to.equal(null);
  });
  it('account reads answer at the asked commitment', async () => {
    const from = Keypair.generate();
    const airdrop = await conn.requestAirdrop(from.publicKey, 5 * LAMPORTS_PER_SOL);
    expect(await conn.getBalance(from.publicKey, 'processed')).to.equal(5 * LAMPORTS_PER_SOL);
    expect(await conn.getBalance(from.publicKey, 'confirmed')).to.equal(0);
    expect(await conn.getAccountInfo(from.publicKey, 'confirmed')).to.equal(null);
    net.advanceSlots(1);
    expect(await conn.getBalance(from.publicKey, 'confirmed')).to.equal(5 * LAMPORTS_PER_SOL);
    expect(await conn.getBalance(from.publicKey, 'finalized')).to.equal(0);
    const to = Keypair.generate().publicKey;
    const { blockhash } = await conn.getLatestBlockhash();
    const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL }),
    );
    tx.sign(from);
    await conn.sendRawTransaction(tx.serialize());
    const multi = async (c: 'processed' | 'confirmed' | 'finalized') =>
      (await conn.getMultipleAccountsInfo([from.publicKey, to], c)).map((a) => a?.lamports ?? 0);
    expect(await multi('processed')).to.deep.equal([4 * LAMPORTS_PER_SOL - 5000, LAMPORTS_PER_SOL]);
    expect(await multi('confirmed')).to.deep.equal([5 * LAMPORTS_PER_SOL, 0]);
    net.advanceSlots(3);
    expect(await multi('finalized')).to.deep.equal([5 * LAMPORTS_PER_SOL, 0]);
    expect(await multi('confirmed')).to.deep.equal([4 * LAMPORTS_PER_SOL - 5000, LAMPORTS_PER_SOL]);
    net.advanceSlots(1);
    expect(await multi('finalized')).to.deep.equal([4 * LAMPORTS_PER_SOL - 5000, LAMPORTS_PER_SOL]);
    expect((await conn.getSignatureStatus(airdrop)).value!.confirmationStatus).to.equal('finalized');
  });

  it('getBlocks / getBlocksWithLimit / getBlockTime and commitment bounds', async () => {
    net.advanceSlots(10);
    const tip = await conn.getSlot('confirmed');
    expect(await conn.getSlot('finalized')).to.equal(tip - 3);
    expect(await conn.getBlockHeight('finalized')).to.equal((await conn.getBlockHeight('confirmed')) - 3);
    const blocks = await conn.getBlocks(0, undefined, 'confirmed');
    expect(blocks[0]).to.equal(0);
    expect(blocks[blocks.length - 1]).to.equal(tip);
    expect(await conn.getBlocks(0, undefined, 'finalized')).to.deep.equal(blocks.filter((s) => s <= tip - 3));
    expect(await conn.getBlocks(tip - 1, tip + 100, 'confirmed')).to.deep.equal([tip - 1, tip]);
    const limited = await rpc(net.url, 'getBlocksWithLimit', [1, 3, { commitment: 'confirmed' }]);
    expect(limited.result).to.deep.equal([1, 2, 3]);
    expect(await conn.getBlockTime(1)).to.be.a('number');
    const future = await rpc(net.url, 'getBlock', [tip + 1, { commitment: 'confirmed' }]);
    expect(future.error!.code).to.equal(-32004);
    const notFinal = await rpc(net.url, 'getBlock', [tip, { commitment: 'finalized' }]);
    expect(notFinal.error!.code).to.equal(-32004);
    const processed = await rpc(net.url, 'getBlock', [1, { commitment: 'processed' }]);
    expect(processed.error!.code).to.equal(-32602);
  });
});

describe('localnet: websockets, Token-2022, CLI', function () {
  it('web3.js default websocket (RPC port + 1) confirms; slot, logs and account subscriptions notify', async () => {
    // Port+1 must be free for web3.js's default: take another ephemeral port in the rare case it is not.
    let net = await startLocalnet({ slotMs: 20, finalityDepth: 2 });
    for (let i = 0; i < 5 && !net.wsPorts.includes(net.port + 1); i++) {
      await net.stop();
      net = await startLocalnet({ slotMs: 20, finalityDepth: 2 });
    }
    expect(net.wsPorts).to.include(net.port + 1);
    try {
      // No wsEndpoint: web3.js derives ws://host:(port+1), as for a real validator on 8899/8900.
      const conn = new Connection(net.url, 'confirmed');
      const kp = Keypair.generate();
      const sig = await conn.requestAirdrop(kp.publicKey, LAMPORTS_PER_SOL);
      const bh = await conn.getLatestBlockhash();
      expect((await conn.confirmTransaction({ signature: sig, ...bh }, 'confirmed')).value.err).to.equal(null);
      const slots: number[] = [];
      const id = conn.onSlotChange((s) => slots.push(s.slot));
      await until('slot notifications', async () => slots.length >= 3);
      await conn.removeSlotChangeListener(id);
      expect(slots[1]).to.be.greaterThan(slots[0]);
      // Logs and account changes at 'confirmed'.
      const watched = Keypair.generate().publicKey;
      const logs: Array<{ signature: string; logs: string[] }> = [];
      const changes: number[] = [];
      const logsId = conn.onLogs(watched, (l) => logs.push(l), 'confirmed');
      const accId = conn.onAccountChange(watched, (a) => changes.push(a.lamports), 'confirmed');
      // web3.js subscribes asynchronously: keep paying until both notifications arrived (no timing guess).
      const paid: string[] = [];
      await until(
        'log and account notifications',
        async () => {
          if (logs.length >= 1 && changes.length >= 1) return true;
          paid.push(await conn.requestAirdrop(watched, 2 * LAMPORTS_PER_SOL));
          return false;
        },
        100,
        100,
      );
      expect(paid).to.include(logs[0].signature);
      expect(logs[0].logs).to.include('Program 11111111111111111111111111111111 success');
      expect(changes[0] % (2 * LAMPORTS_PER_SOL)).to.equal(0);
      expect(changes[0]).to.be.greaterThan(0);
      await conn.removeOnLogsListener(logsId);
      await conn.removeAccountChangeListener(accId);
    } finally {
      await net.stop();
    }
  });

  it('Token-2022 transferChecked: token balances name the Token-2022 program, jsonParsed says spl-token-2022', async () => {
    const {
      TOKEN_2022_PROGRAM_ID,
      MINT_SIZE,
      createInitializeMint2Instruction,
      createMintToCheckedInstruction,
      getAssociatedTokenAddressSync: ata,
      createAssociatedTokenAccountIdempotentInstruction: createAta,
      createTransferCheckedInstruction: transferChecked,
    } = await import('@solana/spl-token');
    const net = await startLocalnet({ slotMs: 20, finalityDepth: 2, wsOnNextPort: false });
    try {
      const conn = connect(net);
      const payer = await funded(conn, 10);
      const mint = Keypair.generate();
      const mine = ata(mint.publicKey, payer.publicKey, false, TOKEN_2022_PROGRAM_ID);
      const bob = Keypair.generate().publicKey;
      const bobs = ata(mint.publicKey, bob, false, TOKEN_2022_PROGRAM_ID);
      await send(
        conn,
        payer,
        [
          SystemProgram.createAccount({
            fromPubkey: payer.publicKey,
            newAccountPubkey: mint.publicKey,
            lamports: await conn.getMinimumBalanceForRentExemption(MINT_SIZE),
            space: MINT_SIZE,
            programId: TOKEN_2022_PROGRAM_ID,
          }),
          createInitializeMint2Instruction(mint.publicKey, 3, payer.publicKey, null, TOKEN_2022_PROGRAM_ID),
          createAta(payer.publicKey, mine, payer.publicKey, mint.publicKey, TOKEN_2022_PROGRAM_ID),
          createMintToCheckedInstruction(mint.publicKey, mine, payer.publicKey, 10_000n, 3, [], TOKEN_2022_PROGRAM_ID),
        ],
        [mint],
      );
      const sig = await send(conn, payer, [
        createAta(payer.publicKey, bobs, bob, mint.publicKey, TOKEN_2022_PROGRAM_ID),
        transferChecked(mine, mint.publicKey, bobs, payer.publicKey, 4_321n, 3, [], TOKEN_2022_PROGRAM_ID),
      ]);
      const tx = await conn.getParsedTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
      const ix = tx!.transaction.message.instructions[1] as ParsedInstruction;
      expect(ix.program).to.equal('spl-token-2022');
      expect(ix.parsed.info.tokenAmount.uiAmountString).to.equal('4.321');
      const keys = tx!.transaction.message.accountKeys.map((k) => k.pubkey.toBase58());
      const post = tx!.meta!.postTokenBalances!.find((b) => b.accountIndex === keys.indexOf(bobs.toBase58()))!;
      expect(post.programId).to.equal(TOKEN_2022_PROGRAM_ID.toBase58());
      expect(post.uiTokenAmount.amount).to.equal('4321');
      expect((await conn.getTokenAccountBalance(bobs)).value.amount).to.equal('4321');
      const many = await conn.getMultipleAccountsInfo([bobs, Keypair.generate().publicKey]);
      expect(many[0]!.owner.toBase58()).to.equal(TOKEN_2022_PROGRAM_ID.toBase58());
      expect(many[1]).to.equal(null);
    } finally {
      await net.stop();
    }
  });

  it('`oncepay localnet --help` lists every flag', async () => {
    const { execFileSync } = await import('node:child_process');
    const path = await import('node:path');
    const out = execFileSync(process.execPath, [path.resolve(__dirname, '../../bin/oncepay'), 'localnet', '--help'], {
      encoding: 'utf8',
      env: { ...process.env, ONCEPAY_FROM_SOURCE: '1' },
    });
    for (const flag of ['--program', '--program-id', '--port', '--slot-ms', '--finality-depth', '--ledger', '--reset'])
      expect(out).to.include(flag);
  });
});
