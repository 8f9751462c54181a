// The golden scenario: one scripted conversation with a Solana node over JSON-RPC and websockets — an airdrop, a
// mint and token accounts, a token and a SOL transfer, an oncepay execute_payout, a failing transaction that lands,
// preflight failures, simulations, and the reads the SDK and the indexer make — recording every response whole.
// scripts/record-golden.ts runs it against a real solana-test-validator (tests/fixtures/golden/), and
// tests/localnet/golden.test.ts against localnet, comparing the two (compare.ts).
//
// Keys are seeded, so addresses (and so the PDAs, the op account's bump and the compute units) are the same on
// every node; what must differ (signatures, blockhashes, slots, times) is named in the recording's `volatile` and
// compared by type.
import crypto from 'node:crypto';
import {
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeAccount3Instruction,
  createMintToCheckedInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import WebSocket from 'ws';
import bs58 from 'bs58';
import { opId } from '../../app/op-id';
import { executePayoutInstruction } from '../../app/payout/program';
import { initializeMerchantInstruction } from '../../app/merchant/instructions';
import { mintAccountInstructions } from '../cluster';
import { sleep } from '../../common/sleep';

export interface Exchange {
  request: { method: string; params: unknown[] };
  response: { result?: unknown; error?: { code: number; message: string; data?: unknown } };
}

export interface Recording {
  /** What answered: getVersion's result. */
  node: unknown;
  exchanges: Record<string, Exchange>;
  /** Websocket subscriptions: the subscribe answer and the first notifications. */
  notifications: Record<string, { subscribe: unknown; messages: unknown[] }>;
  /** Values that differ from node to node by nature, and the name they are compared under. */
  volatile: Record<string, string>;
}

export interface ScenarioTarget {
  url: string;
  wsUrl: string;
  programId: string;
  /** Give up waiting for a commitment after this long (a real node needs ~13 s to finalize). */
  timeoutMs?: number;
}

const seeded = (name: string): Keypair =>
  Keypair.fromSeed(crypto.createHash('sha256').update(`oncepay-golden:${name}`).digest());

/** The scenario's keys (seeded: the same addresses on every node). */
export const GOLDEN_KEYS = {
  payer: seeded('payer'),
  mint: seeded('mint'),
  vault: seeded('vault'),
  recipient: seeded('recipient'),
  stranger: seeded('stranger'),
  /** Never funded: an account that does not exist. */
  missing: seeded('missing'),
};
/** A signature no node has seen. */
const UNKNOWN_SIGNATURE = bs58.encode(crypto.createHash('sha512').update('oncepay-golden:unknown').digest());
const OP_ID = new Uint8Array(32).fill(7);

/** One run of the scenario: its target, its recording so far, and the JSON-RPC id counter (HTTP and websocket). */
interface Session {
  target: ScenarioTarget;
  timeoutMs: number;
  rec: Recording;
  id: number;
}

export async function runGoldenScenario(target: ScenarioTarget): Promise<Recording> {
  const s: Session = {
    target,
    timeoutMs: target.timeoutMs ?? 60_000,
    rec: { node: null, exchanges: {}, notifications: {}, volatile: {} },
    id: 0,
  };
  const programId = new PublicKey(target.programId);

  // The node itself.
  s.rec.node = (await call(s, 'getVersion', 'getVersion')).result;
  await call(s, 'getHealth', 'getHealth');
  volatile(s, (await call(s, 'getGenesisHash', 'getGenesisHash')).result, '<genesis-hash>');

  // Websockets first, so their notifications cover what follows.
  const ws = await openSocket(target.wsUrl);
  const slots = subscribe(s, ws, 'slotSubscribe', 'slotSubscribe', [], 1);
  const logs = subscribe(
    s,
    ws,
    'logsSubscribe:mentions-payer',
    'logsSubscribe',
    [{ mentions: [GOLDEN_KEYS.payer.publicKey.toBase58()] }, { commitment: 'confirmed' }],
    2,
  );
  await slots;

  const tokens = await landTokens(s);
  const payout = await landPayout(s, programId, tokens.recipientAta);
  const failed = await payoutAgain(s, payout.ix);
  await strangerTransfer(s, ws);
  await logs;

  await reads(s, { ...tokens, merchant: payout.merchant, payoutSig: payout.sig, failed });
  ws.close();
  return s.rec;
}

async function raw(s: Session, method: string, params: unknown[]): Promise<Exchange['response']> {
  const res = await fetch(s.target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++s.id, method, params }),
  });
  const body = (await res.json()) as Exchange['response'] & { jsonrpc?: string; id?: number };
  return body.error ? { error: body.error } : { result: body.result };
}

/** A call whose whole response is part of the recording. */
async function call(s: Session, name: string, method: string, params: unknown[] = []): Promise<Exchange['response']> {
  const response = await raw(s, method, params);
  s.rec.exchanges[name] = { request: { method, params }, response };
  return response;
}

function volatile(s: Session, value: unknown, as: string): void {
  // A landed transaction's own name replaces the generic '<signature>'; any other first name stays (localnet's
  // genesis hash is also block 0's blockhash, read again while block 0 is the finalized one).
  if (typeof value !== 'string') return;
  const had = s.rec.volatile[value];
  if (had === undefined || (had === '<signature>' && as.startsWith('<sig:'))) s.rec.volatile[value] = as;
}

async function waitFor(s: Session, what: string, commitment: 'confirmed' | 'finalized', sig: string): Promise<void> {
  const end = Date.now() + s.timeoutMs;
  for (;;) {
    const r = await raw(s, 'getSignatureStatuses', [[sig], { searchTransactionHistory: true }]);
    const st = (r.result as { value: Array<{ confirmationStatus: string } | null> } | undefined)?.value[0];
    if (st && (st.confirmationStatus === 'finalized' || st.confirmationStatus === commitment)) return;
    if (Date.now() > end) throw new Error(`golden scenario: ${what} not ${commitment} in ${s.timeoutMs} ms`);
    await sleep(100);
  }
}

async function confirmedBlockhash(s: Session, name?: string): Promise<string> {
  const r = name
    ? await call(s, name, 'getLatestBlockhash', [{ commitment: 'confirmed' }])
    : await raw(s, 'getLatestBlockhash', [{ commitment: 'confirmed' }]);
  const bh = (r.result as { value: { blockhash: string } }).value.blockhash;
  volatile(s, bh, '<blockhash>');
  return bh;
}

function signed(s: Session, blockhash: string, ixs: TransactionInstruction[], signers: Keypair[]): Transaction {
  const tx = new Transaction({ feePayer: GOLDEN_KEYS.payer.publicKey, recentBlockhash: blockhash }).add(...ixs);
  tx.sign(...signers);
  // Every signature depends on the blockhash; the fee payer's gets its own name where the transaction lands.
  for (const x of tx.signatures) if (x.signature) volatile(s, bs58.encode(x.signature), '<signature>');
  return tx;
}

const b64 = (tx: Transaction) => tx.serialize().toString('base64');

/** Send at confirmed preflight, wait for confirmed, name the signature. */
async function land(s: Session, name: string, ixs: TransactionInstruction[], signers: Keypair[]): Promise<string> {
  const tx = signed(s, await confirmedBlockhash(s), ixs, [GOLDEN_KEYS.payer, ...signers]);
  const r = await call(s, `sendTransaction:${name}`, 'sendTransaction', [
    b64(tx),
    { encoding: 'base64', preflightCommitment: 'confirmed' },
  ]);
  if (typeof r.result !== 'string') throw new Error(`golden scenario: ${name} refused: ${JSON.stringify(r.error)}`);
  volatile(s, r.result, `<sig:${name}>`);
  await waitFor(s, name, 'confirmed', r.result);
  return r.result;
}

async function transactionViews(s: Session, name: string, sig: string): Promise<void> {
  for (const encoding of ['json', 'jsonParsed']) {
    const r = await call(s, `getTransaction:${name}:${encoding}`, 'getTransaction', [
      sig,
      { commitment: 'confirmed', encoding, maxSupportedTransactionVersion: 0 },
    ]);
    // oncepay's PayoutExecuted event ends with the slot it executed in (u64 LE): that log line is volatile.
    const got = r.result as { slot: number; meta: { logMessages: string[] } } | null;
    for (const line of got?.meta.logMessages ?? []) {
      const data = line.startsWith('Program data: ') ? Buffer.from(line.slice(14), 'base64') : null;
      if (data && data.length >= 8 && data.readBigUInt64LE(data.length - 8) === BigInt(got!.slot))
        volatile(s, line, 'Program data: <event ending with its slot>');
    }
  }
}

/** A websocket subscription recorded with its first `count` notifications; resolves when they have come. */
function subscribe(
  s: Session,
  ws: WebSocket,
  name: string,
  method: string,
  params: unknown[],
  count: number,
): Promise<void> {
  const entry = { subscribe: null as unknown, messages: [] as unknown[] };
  s.rec.notifications[name] = entry;
  const sid = ++s.id;
  const done = new Promise<void>((resolve) => {
    let subId: number | null = null;
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString()) as { id?: number; result?: number; params?: { subscription: number } };
      if (m.id === sid) {
        entry.subscribe = m;
        subId = m.result ?? null;
      } else if (subId !== null && m.params?.subscription === subId && entry.messages.length < count) {
        entry.messages.push(m);
        if (entry.messages.length === count) resolve();
      }
    });
  });
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: sid, method, params }));
  return done;
}

/**
 * An airdrop (the faucet's own transaction, so its signature is volatile); a mint, the payer's ATA with 5 tokens, an
 * empty ATA for the recipient (a zero token balance); a token transfer and a SOL transfer in one transaction.
 */
async function landTokens(s: Session): Promise<{ recipientAta: PublicKey; mintSig: string; transferSig: string }> {
  const k = GOLDEN_KEYS;
  const payer = k.payer.publicKey;
  const airdrop = await call(s, 'requestAirdrop', 'requestAirdrop', [payer.toBase58(), 10 * LAMPORTS_PER_SOL]);
  volatile(s, airdrop.result, '<sig:airdrop>');
  await waitFor(s, 'airdrop', 'confirmed', airdrop.result as string);
  await call(s, 'getBalance:payer', 'getBalance', [payer.toBase58(), { commitment: 'confirmed' }]);

  const payerAta = getAssociatedTokenAddressSync(k.mint.publicKey, payer);
  const recipientAta = getAssociatedTokenAddressSync(k.mint.publicKey, k.recipient.publicKey);
  const mintRent = (
    await call(s, 'getMinimumBalanceForRentExemption:mint', 'getMinimumBalanceForRentExemption', [MINT_SIZE])
  ).result as number;
  const mintSig = await land(
    s,
    'mint',
    [
      ...mintAccountInstructions(payer, k.mint.publicKey, 6, mintRent),
      createAssociatedTokenAccountIdempotentInstruction(payer, payerAta, payer, k.mint.publicKey),
      createAssociatedTokenAccountIdempotentInstruction(payer, recipientAta, k.recipient.publicKey, k.mint.publicKey),
      createMintToCheckedInstruction(k.mint.publicKey, payerAta, payer, 5_000_000n, 6),
    ],
    [k.mint],
  );
  await transactionViews(s, 'mint', mintSig);

  const transferSig = await land(
    s,
    'transfer',
    [
      createTransferCheckedInstruction(payerAta, k.mint.publicKey, recipientAta, payer, 1_250_000n, 6),
      SystemProgram.transfer({ fromPubkey: payer, toPubkey: k.recipient.publicKey, lamports: LAMPORTS_PER_SOL }),
    ],
    [],
  );
  await transactionViews(s, 'transfer', transferSig);
  return { recipientAta, mintSig, transferSig };
}

/** oncepay: a merchant with a vault, then execute_payout. */
async function landPayout(
  s: Session,
  programId: PublicKey,
  recipientAta: PublicKey,
): Promise<{ merchant: PublicKey; ix: TransactionInstruction; sig: string }> {
  const k = GOLDEN_KEYS;
  const payer = k.payer.publicKey;
  const { ix: initIx, merchant } = initializeMerchantInstruction(programId, payer, payer);
  const vaultRent = (await raw(s, 'getMinimumBalanceForRentExemption', [ACCOUNT_SIZE])).result as number;
  await land(
    s,
    'merchant',
    [
      initIx,
      SystemProgram.createAccount({
        fromPubkey: payer,
        newAccountPubkey: k.vault.publicKey,
        lamports: vaultRent,
        space: ACCOUNT_SIZE,
        programId: TOKEN_PROGRAM_ID,
      }),
      createInitializeAccount3Instruction(k.vault.publicKey, k.mint.publicKey, merchant),
      createMintToCheckedInstruction(k.mint.publicKey, k.vault.publicKey, payer, 3_000_000n, 6),
    ],
    [k.vault],
  );
  const [operation, opBump] = PublicKey.findProgramAddressSync(
    [Buffer.from('op'), merchant.toBuffer(), OP_ID],
    programId,
  );
  const ix = executePayoutInstruction(
    programId,
    {
      payoutAuthority: payer,
      payer,
      merchant,
      operation,
      vault: k.vault.publicKey,
      mint: k.mint.publicKey,
      recipientToken: recipientAta,
      tokenProgram: TOKEN_PROGRAM_ID,
    },
    { opId: opId(OP_ID), amount: 1_000_000n, opBump },
  );
  const sig = await land(s, 'payout', [ix], []);
  await transactionViews(s, 'payout', sig);
  return { merchant, ix, sig };
}

/** The same payout again: refused at preflight (6000), then sent without preflight it lands with the error. */
async function payoutAgain(s: Session, payoutIx: TransactionInstruction): Promise<string> {
  const again = signed(s, await confirmedBlockhash(s), [payoutIx], [GOLDEN_KEYS.payer]);
  await call(s, 'sendTransaction:payout-again:preflight', 'sendTransaction', [
    b64(again),
    { encoding: 'base64', preflightCommitment: 'confirmed' },
  ]);
  await call(s, 'simulateTransaction:payout-again', 'simulateTransaction', [
    b64(again),
    { encoding: 'base64', commitment: 'confirmed' },
  ]);
  const failed = await call(s, 'sendTransaction:payout-again:skip', 'sendTransaction', [
    b64(again),
    { encoding: 'base64', skipPreflight: true },
  ]);
  volatile(s, failed.result, '<sig:payout-again>');
  await waitFor(s, 'payout-again', 'confirmed', failed.result as string);
  await transactionViews(s, 'payout-again', failed.result as string);
  return failed.result as string;
}

/**
 * Preflight at the default (finalized) with a confirmed blockhash; a bad signature; a simulation that passes; then
 * the transfer sent and seen through signatureSubscribe.
 */
async function strangerTransfer(s: Session, ws: WebSocket): Promise<void> {
  const k = GOLDEN_KEYS;
  const fresh = signed(
    s,
    await confirmedBlockhash(s, 'getLatestBlockhash:confirmed'),
    [
      SystemProgram.transfer({
        fromPubkey: k.payer.publicKey,
        toPubkey: k.stranger.publicKey,
        lamports: LAMPORTS_PER_SOL,
      }),
    ],
    [k.payer],
  );
  await call(s, 'isBlockhashValid:confirmed', 'isBlockhashValid', [fresh.recentBlockhash, { commitment: 'confirmed' }]);
  await call(s, 'isBlockhashValid:finalized', 'isBlockhashValid', [fresh.recentBlockhash, { commitment: 'finalized' }]);
  await call(s, 'sendTransaction:finalized-preflight', 'sendTransaction', [b64(fresh), { encoding: 'base64' }]);
  await call(s, 'simulateTransaction:finalized', 'simulateTransaction', [b64(fresh), { encoding: 'base64' }]);
  const tampered = fresh.serialize();
  tampered[10] ^= 0xff;
  await call(s, 'sendTransaction:bad-signature', 'sendTransaction', [
    tampered.toString('base64'),
    { encoding: 'base64', preflightCommitment: 'confirmed' },
  ]);
  await call(s, 'simulateTransaction:transfer', 'simulateTransaction', [
    b64(fresh),
    {
      encoding: 'base64',
      commitment: 'confirmed',
      accounts: { addresses: [k.stranger.publicKey.toBase58()], encoding: 'base64' },
    },
  ]);

  const sigName = bs58.encode(fresh.signature!);
  volatile(s, sigName, '<sig:stranger>');
  const sigNote = subscribe(
    s,
    ws,
    'signatureSubscribe',
    'signatureSubscribe',
    [sigName, { commitment: 'confirmed' }],
    1,
  );
  await call(s, 'sendTransaction:stranger', 'sendTransaction', [
    b64(fresh),
    { encoding: 'base64', preflightCommitment: 'confirmed' },
  ]);
  await sigNote;
}

/** Reads, after everything landed. */
async function reads(
  s: Session,
  x: {
    recipientAta: PublicKey;
    merchant: PublicKey;
    mintSig: string;
    transferSig: string;
    payoutSig: string;
    failed: string;
  },
): Promise<void> {
  const k = GOLDEN_KEYS;
  await call(s, 'getSignatureStatuses', 'getSignatureStatuses', [
    [x.mintSig, x.transferSig, x.payoutSig, x.failed, UNKNOWN_SIGNATURE],
  ]);
  await call(s, 'getSignaturesForAddress:recipient', 'getSignaturesForAddress', [
    k.recipient.publicKey.toBase58(),
    { commitment: 'confirmed' },
  ]);
  const transferSlot = ((s.rec.exchanges['getTransaction:transfer:json'].response.result ?? {}) as { slot: number })
    .slot;
  await call(s, 'getBlock:transfer', 'getBlock', [
    transferSlot,
    { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0, rewards: false },
  ]);
  const accounts: Array<[string, PublicKey, Record<string, unknown>]> = [
    ['mint:base64', k.mint.publicKey, { encoding: 'base64' }],
    ['mint:jsonParsed', k.mint.publicKey, { encoding: 'jsonParsed' }],
    ['recipient-ata:jsonParsed', x.recipientAta, { encoding: 'jsonParsed' }],
    ['merchant', x.merchant, { encoding: 'base64' }],
    ['missing', k.missing.publicKey, { encoding: 'base64' }],
    ['token-program', TOKEN_PROGRAM_ID, { encoding: 'base64', dataSlice: { offset: 0, length: 0 } }],
  ];
  for (const [name, address, config] of accounts) {
    await call(s, `getAccountInfo:${name}`, 'getAccountInfo', [
      address.toBase58(),
      { commitment: 'confirmed', ...config },
    ]);
  }
  await call(s, 'getTokenAccountBalance:recipient-ata', 'getTokenAccountBalance', [
    x.recipientAta.toBase58(),
    { commitment: 'confirmed' },
  ]);
  await call(s, 'getSlot:confirmed', 'getSlot', [{ commitment: 'confirmed' }]);
  await call(s, 'getBlockHeight:confirmed', 'getBlockHeight', [{ commitment: 'confirmed' }]);
  const fin = await call(s, 'getLatestBlockhash:finalized', 'getLatestBlockhash', []);
  volatile(s, (fin.result as { value?: { blockhash?: string } } | undefined)?.value?.blockhash, '<blockhash>');
}

function openSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}
