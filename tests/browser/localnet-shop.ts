// A shop on the local chain, for the browser suites: `oncepay localnet` (LiteSVM behind our RPC) running the compiled
// payout program (common/program-binary.ts), a real on-chain merchant (initialize_merchant; a vault owned by the
// merchant PDA, funded with the mint: testkit/payout/setup.ts) registered in a test schema with its receiving wallet,
// a payer holding the mint in its associated token account, the merchant API (invoices, checkout pages and, when
// asked, the operator console) listening on loopback, and the indexer's scanner in-process reading the node's
// finalized blocks into the same database. `payFromUrl` pays an invoice as a wallet does, from its Solana Pay URL.
import type { FastifyInstance } from 'fastify';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { parseURL, TransferRequestURL } from '@solana/pay';
import { createAssociatedTokenAccountIdempotentInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { requireProgramSo } from '../../common/program-binary';
import { buildApiApp } from '../../app/api/build-api-app';
import { hashApiKey } from '../../app/api/api-key-auth';
import { ConsoleOptions } from '../../app/console/console-app';
import { mintDecimalsFromChain } from '../../app/invoice/mint-decimals-rpc';
import { insertMerchant, MerchantRow } from '../../app/merchant/store';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { address } from '../../app/types';
import { createLedger } from '../../indexer/ledger';
import { decodeBlock } from '../../indexer/decode';
import { createRpcClient } from '../../indexer/rpc';
import { createScanner } from '../../indexer/source/scanner';
import { airdrop, mintTo, payInstruction, send } from '../../testkit/cluster';
import { startTestNode, TestNode } from '../../testkit/node';
import { connectionIo, MerchantSetup, setupMerchant } from '../../testkit/payout/setup';
import { createTestDb, TestDb } from '../../testkit/test-db';
import { freePort } from '../../common/free-port';

/** The mint's decimals (testkit/payout/setup.ts makes 6-decimal mints). */
export const DECIMALS = 6;
const CLUSTER = 'localnet';

/** What POST /v1/invoices answers, as far as the suites read it. */
export interface ApiInvoice {
  invoiceId: string;
  checkoutUrl: string;
  paymentUrl: string;
  reference: string;
  recipient: string;
}

export interface LocalnetShop {
  node: TestNode;
  connection: Connection;
  db: TestDb;
  /** The API (and console) origin, http://127.0.0.1:<port>. */
  base: string;
  /** The merchant's API key (Bearer). */
  apiKey: string;
  /** On chain: program, authority (also the payout authority and the mint's authority), merchant PDA, mint, vault. */
  m: MerchantSetup;
  merchant: MerchantRow;
  /** The merchant's receiving wallet: invoices are paid to its associated token account. */
  wallet: PublicKey;
  payer: Keypair;
  /** The payer's associated token account of the mint: where a payment comes from and a refund goes back to. */
  payerAccount: PublicKey;
  createInvoice(body: Record<string, unknown>, idempotencyKey: string): Promise<ApiInvoice>;
  /** Pays as a wallet would (everything from the Solana Pay URL); resolves to the transaction's signature. */
  payFromUrl(paymentUrl: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startLocalnetShop(
  label: string,
  opts: { console?: Omit<ConsoleOptions, 'db'> } = {},
): Promise<LocalnetShop> {
  const node = await startTestNode({
    slotMs: 20,
    finalityDepth: 4,
    programs: [{ programId: ONCEPAY_PROGRAM_ID, path: requireProgramSo() }],
  });
  const connection = node.connection();
  const db = await createTestDb(label);
  const stopScanner = new AbortController();
  let app: FastifyInstance | undefined;
  let scanning: Promise<unknown> | undefined;
  const stop = async () => {
    stopScanner.abort();
    await scanning?.catch(() => undefined);
    await app?.close();
    await node.stop();
    await db.drop();
  };
  try {
    const m = await setupMerchant(connectionIo(connection), { vaultFunds: 1_000_000_000n });
    const payer = Keypair.generate();
    const wallet = Keypair.generate().publicKey;
    await airdrop(connection, payer.publicKey, 10_000_000_000);
    const payerAccount = getAssociatedTokenAddressSync(m.mint, payer.publicKey);
    // The payer's and the receiving wallet's associated token accounts, where wallets pay from and to.
    await send(
      connection,
      [payer.publicKey, wallet].map((owner) =>
        createAssociatedTokenAccountIdempotentInstruction(
          payer.publicKey,
          getAssociatedTokenAddressSync(m.mint, owner),
          owner,
          m.mint,
        ),
      ),
      [payer],
    );
    await mintTo(connection, m.authority, m.mint, payerAccount, 1_000_000_000n);
    const fromSlot = await connection.getSlot('finalized');

    const apiKey = `${label}-key-0123456789`;
    const merchant = await insertMerchant(db.pool, {
      name: 'shop',
      apiKeyHash: hashApiKey(apiKey),
      programId: address(m.programId),
      merchantAddress: address(m.merchant),
      vault: address(m.vault),
      receivingAddress: address(wallet),
    });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    app = await buildApiApp({
      db: db.pool,
      invoices: { readMintDecimals: mintDecimalsFromChain(connection), publicUrl: base },
      ...(opts.console ? { console: opts.console } : {}),
    });
    await app.listen({ host: '127.0.0.1', port });

    // The indexer: the scanner, in-process, reading the node's finalized blocks into the same database.
    const scanner = createScanner(
      {
        rpc: createRpcClient({ url: node.url }),
        ledger: createLedger({ db: db.pool }),
        decode: (block, slot) => decodeBlock(block, { slot, cluster: CLUSTER }),
      },
      {
        cluster: CLUSTER,
        commitment: 'finalized',
        rescanWindow: 32,
        fromSlot,
        maxSlotsPerPass: 5000,
        chunkSize: 16,
        concurrency: 2,
        pollMs: 50,
      },
    );
    scanning = scanner.run({ signal: stopScanner.signal });

    return {
      node,
      connection,
      db,
      base,
      apiKey,
      m,
      merchant,
      wallet,
      payer,
      payerAccount,
      async createInvoice(body, idempotencyKey) {
        const res = await fetch(`${base}/v1/invoices`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${apiKey}`,
            'idempotency-key': idempotencyKey,
            'content-type': 'application/json',
          },
          body: JSON.stringify(body),
        });
        if (res.status !== 201) throw new Error(`POST /v1/invoices answered ${res.status}: ${await res.text()}`);
        return (await res.json()) as ApiInvoice;
      },
      async payFromUrl(paymentUrl) {
        const url = parseURL(paymentUrl) as TransferRequestURL;
        const splToken = url.splToken!;
        const ix = payInstruction({
          from: getAssociatedTokenAddressSync(splToken, payer.publicKey),
          mint: splToken,
          to: getAssociatedTokenAddressSync(splToken, url.recipient),
          owner: payer.publicKey,
          amount: BigInt(url.amount!.shiftedBy(DECIMALS).toFixed(0)),
          decimals: DECIMALS,
          reference: url.reference![0],
        });
        return (await send(connection, [ix], [payer])).signature;
      },
      stop,
    };
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
}
