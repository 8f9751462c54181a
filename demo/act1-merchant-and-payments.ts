// Act 1: a merchant on chain with a funded vault, three invoices with their own deposit accounts and Solana Pay
// references, and customers paying them (one transaction paying two invoices at once). The second payment of
// INV-1001 is made later, in act 2, while the indexer is down.
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { baseUnits } from '../common/amount';
import { initializeMerchantInstruction } from '../app/merchant/instructions';
import type { Ledger } from '../indexer/ledger';
import type { Narrator } from './narrator';
import { short, tokens } from './narrator';
import { airdrop, createMint, createTokenAccount, mintTo, payInstruction, send } from '../testkit/cluster';
import { OncepayError, DEMO_CODES } from '../common/errors';

export const DECIMALS = 6;

export interface DemoInvoice {
  id: string;
  expected: bigint;
  depositAccount: PublicKey;
  reference: PublicKey;
}

export interface Payment {
  label: string;
  signature: string;
  slot: number;
  /** What each transfer of the transaction paid, per invoice. */
  transfers: Array<{ invoiceId: string; amount: bigint }>;
}

export interface World {
  connection: Connection;
  programId: PublicKey;
  authority: Keypair;
  merchant: PublicKey;
  mint: PublicKey;
  vault: PublicKey;
  vaultFunded: bigint;
  invoices: DemoInvoice[];
  customers: { alice: { kp: Keypair; token: PublicKey }; bob: { kp: Keypair; token: PublicKey } };
  payments: Payment[];
  firstSlot: number;
}

export async function setUpMerchantAndPay(deps: {
  connection: Connection;
  programId: PublicKey;
  ledger: Ledger;
  say: Narrator;
}): Promise<World> {
  const { connection, programId, ledger, say } = deps;
  const firstSlot = await connection.getSlot('confirmed');
  const authority = Keypair.generate();
  await airdrop(connection, authority.publicKey, 50_000_000_000);
  const { ix, merchant } = initializeMerchantInstruction(programId, authority.publicKey, authority.publicKey);
  await send(connection, [ix], [authority]);
  const mint = await createMint(connection, authority, DECIMALS);
  const vault = await createTokenAccount(connection, authority, mint, merchant);
  const vaultFunded = 1_000_000_000n; // 1,000.000000 tokens
  await mintTo(connection, authority, mint, vault, vaultFunded);
  say.step(
    `merchant ${short(merchant.toBase58())} initialised (initialize_merchant), vault ${short(vault.toBase58())} funded with ${tokens(vaultFunded, DECIMALS)} of mint ${short(mint.toBase58())}`,
  );

  const plan: Array<[string, bigint]> = [
    ['INV-1001', 12_500_000n],
    ['INV-1002', 40_000_000n],
    ['INV-1003', 7_250_000n],
  ];
  const invoices: DemoInvoice[] = [];
  for (const [id, expected] of plan) {
    const depositAccount = await createTokenAccount(connection, authority, mint, authority.publicKey);
    const reference = Keypair.generate().publicKey;
    await ledger.createInvoice({
      id,
      mint: mint.toBase58(),
      expectedAmount: baseUnits(expected),
      depositAddress: depositAccount.toBase58(),
      referenceKey: reference.toBase58(),
      merchant: 'default',
    });
    invoices.push({ id, expected, depositAccount, reference });
  }
  say.step(
    `3 invoices created: ${invoices.map((i) => `${i.id} ${tokens(i.expected, DECIMALS)}`).join(', ')}`,
    'each with its own deposit token account and a Solana Pay reference key',
  );

  const customer = async () => {
    const kp = Keypair.generate();
    await airdrop(connection, kp.publicKey);
    const token = await createTokenAccount(connection, authority, mint, kp.publicKey);
    await mintTo(connection, authority, mint, token, 500_000_000n);
    return { kp, token };
  };
  const alice = await customer();
  const bob = await customer();
  const world: World = {
    connection,
    programId,
    authority,
    merchant,
    mint,
    vault,
    vaultFunded,
    invoices,
    customers: { alice, bob },
    payments: [],
    firstSlot,
  };

  await pay(world, 'alice pays INV-1001', alice, [['INV-1001', 12_500_000n]]);
  await pay(world, 'bob pays INV-1002 and INV-1003 in one transaction', bob, [
    ['INV-1002', 40_000_000n],
    ['INV-1003', 7_250_000n],
  ]);
  for (const p of world.payments) say.step(`${p.label}: ${short(p.signature)} (slot ${p.slot})`);
  return world;
}

export function invoiceOf(world: World, id: string): DemoInvoice {
  const inv = world.invoices.find((i) => i.id === id);
  if (!inv) throw new OncepayError(DEMO_CODES.UNEXPECTED_ANSWER, `no invoice ${id}`);
  return inv;
}

/** One real token transaction; each transfer carries its invoice's reference key. */
export async function pay(
  world: World,
  label: string,
  who: { kp: Keypair; token: PublicKey },
  items: Array<[string, bigint]>,
): Promise<Payment> {
  const ixs = items.map(([id, amount]) => {
    const inv = invoiceOf(world, id);
    return payInstruction({
      from: who.token,
      mint: world.mint,
      to: inv.depositAccount,
      owner: who.kp.publicKey,
      amount,
      decimals: DECIMALS,
      reference: inv.reference,
    });
  });
  const { signature, slot } = await send(world.connection, ixs, [who.kp]);
  const p: Payment = { label, signature, slot, transfers: items.map(([invoiceId, amount]) => ({ invoiceId, amount })) };
  world.payments.push(p);
  return p;
}
