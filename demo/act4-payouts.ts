// Act 4: payouts through the merchant API with Idempotency-Keys (one replayed, one conflicting), executed by the
// SDK while the localnet drops a sendTransaction response and expires every blockhash, with a second worker
// racing the first on each payout.
import * as crypto from 'crypto';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import type { Logger } from 'pino';
import type { Pool } from 'pg';
import { hashApiKey } from '../app/api/api-key-auth';
import { buildApiApp } from '../app/api/build-api-app';
import { mintDecimalsFromChain } from '../app/invoice/mint-decimals-rpc';
import { createConnectionChain } from '../app/payout/chain';
import { RunPayoutDeps, runPayout, PayoutResult } from '../app/payout/run-payout';
import { getPayout, listAttempts } from '../app/payout/store';
import { insertMerchant } from '../app/merchant/store';
import { address } from '../app/types';
import { OncepayError } from '../common/errors';
import type { LocalnetHandle } from '../localnet';
import { DECIMALS, World } from './act1-merchant-and-payments';
import { DEMO_CODES } from '../common/errors/codes';
import type { Teardown } from './infra';
import type { Narrator } from './narrator';
import { short, tokens } from './narrator';
import { createTokenAccount } from '../testkit/cluster';
import { sleep } from '../common/sleep';

export interface ApiCall {
  label: string;
  idempotencyKey: string;
  payoutId: string;
  amount: string;
  status: number;
  replayed: boolean;
  code: string | null;
  rowId: string | null;
}

export interface PayoutRun {
  payoutId: string;
  rowId: string;
  recipient: string;
  amount: bigint;
  fault: string;
  workers: Array<PayoutResult | null>;
  attempts: Array<{ no: number; status: string; signature: string; sendCount: number }>;
}

export interface PayoutEvidence {
  apiUrl: string;
  apiKey: string;
  apiCalls: ApiCall[];
  runs: PayoutRun[];
}

/** The demo merchant, registered with a random API key, and its API listening on loopback. */
async function startMerchantApi(deps: {
  world: World;
  net: LocalnetHandle;
  db: Pool;
  teardown: Teardown;
}): Promise<{ apiUrl: string; apiKey: string }> {
  const { world, net, db } = deps;
  // An API key is a credential, not an operation key: random is right here.
  const apiKey = `ok_demo_${crypto.randomBytes(16).toString('hex')}`;
  await insertMerchant(db, {
    name: 'demo shop',
    apiKeyHash: hashApiKey(apiKey),
    programId: address(world.programId.toBase58()),
    merchantAddress: address(world.merchant.toBase58()),
    vault: address(world.vault.toBase58()),
    // Invoices created through the API (demo/pages.ts) are paid to the merchant's wallet.
    receivingAddress: address(world.authority.publicKey.toBase58()),
  });
  // The API as `oncepay payout serve` runs it: the operator console beside it, mints' decimals read from the chain.
  const app = await buildApiApp({
    db,
    console: { explorer: { cluster: 'localnet', rpcUrl: net.url } },
    invoices: { readMintDecimals: mintDecimalsFromChain(world.connection) },
  });
  const apiUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  deps.teardown.push('merchant API', () => app.close());
  return { apiUrl, apiKey };
}

export async function runPayouts(deps: {
  world: World;
  net: LocalnetHandle;
  db: Pool;
  log: Logger;
  say: Narrator;
  teardown: Teardown;
}): Promise<PayoutEvidence> {
  const { world, net, db, say } = deps;
  const { apiUrl, apiKey } = await startMerchantApi(deps);
  say.step(`merchant API listening at ${apiUrl} (POST /v1/payouts, Bearer key, Idempotency-Key)`);

  const suppliers = [];
  for (let i = 0; i < 2; i++)
    suppliers.push(
      await createTokenAccount(world.connection, world.authority, world.mint, Keypair.generate().publicKey),
    );
  const mint = world.mint.toBase58();
  const body = (payoutId: string, recipient: PublicKey, amount: string) => ({
    payoutId,
    recipient: recipient.toBase58(),
    mint,
    amount,
  });
  const k1 = 'demo-key-payout-2001';
  const k2 = 'demo-key-payout-2002';
  const plan: Array<{ label: string; key: string; body: ReturnType<typeof body> }> = [
    { label: 'create payout-2001', key: k1, body: body('payout-2001', suppliers[0], '25000000') },
    { label: 'client retry, same key + same body', key: k1, body: body('payout-2001', suppliers[0], '25000000') },
    { label: 'create payout-2002', key: k2, body: body('payout-2002', suppliers[1], '60000000') },
    { label: 'same key, other amount', key: k1, body: body('payout-2001', suppliers[0], '99000000') },
  ];
  const apiCalls: ApiCall[] = [];
  for (const p of plan) {
    const res = await fetch(`${apiUrl}/v1/payouts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': p.key, 'content-type': 'application/json' },
      body: JSON.stringify(p.body),
    });
    const j = (await res.json()) as { id?: string; code?: string };
    apiCalls.push({
      label: p.label,
      idempotencyKey: p.key,
      payoutId: p.body.payoutId,
      amount: p.body.amount,
      status: res.status,
      replayed: res.headers.get('idempotent-replayed') === 'true',
      code: j.code ?? null,
      rowId: j.id ?? null,
    });
  }
  for (const c of apiCalls)
    say.note(
      `POST /v1/payouts ${c.label} (Idempotency-Key ${c.idempotencyKey}) → ${c.status}${c.replayed ? ' Idempotent-Replayed: true' : ''}${c.code ? ` ${c.code}` : ''}${c.rowId ? ` payout #${c.rowId}` : ''}`,
    );

  const worker = (): RunPayoutDeps => ({
    db,
    // Each worker has its own RPC connection, as two processes would.
    chain: createConnectionChain({
      connection: new Connection(net.url, { commitment: 'confirmed', disableRetryOnRateLimit: true }),
    }),
    authority: world.authority,
    pollIntervalMs: 40,
    rebroadcastIntervalMs: 200,
    log: deps.log,
    signal: AbortSignal.timeout(120_000),
  });
  const rowOf = (payoutId: string) => {
    const id = apiCalls.find((c) => c.payoutId === payoutId && c.status === 201 && c.rowId)?.rowId;
    if (!id) throw new OncepayError(DEMO_CODES.UNEXPECTED_ANSWER, `the API did not create ${payoutId}`);
    return id;
  };
  const runs: PayoutRun[] = [];
  const record = async (payoutId: string, fault: string, workers: Array<PayoutResult | null>) => {
    const rowId = rowOf(payoutId);
    const row = (await getPayout(db, rowId))!;
    const attempts = (await listAttempts(db, rowId)).map((a) => ({
      no: a.attemptNo,
      status: a.status,
      signature: a.signature,
      sendCount: a.sendCount,
    }));
    runs.push({ payoutId, rowId, recipient: row.recipientToken, amount: row.amount, fault, workers, attempts });
    say.step(
      `${payoutId} (${tokens(row.amount, DECIMALS)}) under "${fault}", two workers racing: ${workers.map((w, i) => `worker ${'AB'[i]} → ${w?.state ?? 'skipped'}`).join(', ')}`,
      `attempts: ${attempts.map((a) => `#${a.no} ${a.status} ${short(a.signature)} (sent ${a.sendCount}×)`).join('; ')}; op PDA ${short(row.opPda)}`,
    );
  };

  // payout-2001: the node executes the transaction and the answer is lost on the way back.
  const id1 = rowOf('payout-2001');
  net.faults.dropNextResponses({ method: 'sendTransaction', count: 1 });
  const w1 = await Promise.all([runPayout({ id: id1 }, worker()), runPayout({ id: id1 }, worker())]);
  net.faults.clear();
  await record('payout-2001', 'sendTransaction response dropped after execution', w1);

  // payout-2002: sends never reach the chain, then every blockhash handed out expires; only then may a new attempt be signed.
  const id2 = rowOf('payout-2002');
  net.faults.failNext({ kind: '500', method: 'sendTransaction', count: 1_000_000 });
  const race = Promise.all([runPayout({ id: id2 }, worker()), runPayout({ id: id2 }, worker())]);
  const start = performance.now();
  while (!(await listAttempts(db, id2)).some((a) => a.status === 'sent')) {
    if (performance.now() - start > 90_000)
      throw new OncepayError(DEMO_CODES.TIMEOUT, 'payout-2002: no attempt was sent');
    await sleep(20);
  }
  net.faults.expireBlockhashesNow();
  net.faults.clear();
  const w2 = await race;
  await record('payout-2002', 'sendTransaction failing, then blockhash expired', w2);
  return { apiUrl, apiKey, apiCalls, runs };
}
