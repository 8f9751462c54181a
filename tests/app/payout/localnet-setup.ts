// A node (a localnet: JSON-RPC over LiteSVM running the program ONCEPAY_PROGRAM selects, common/program-binary.ts; or
// the node ANCHOR_PROVIDER_URL names, testkit/node) with a funded merchant, a test schema with
// its api_merchants row, and the payout authority's keypair in a file for the CLI: what every payout suite on the
// localnet starts from. Plus the checks they share: one transfer per payout, on chain and in the journal.
import { expect } from 'chai';
import { register } from 'prom-client';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { requireProgramSo } from '../../../common/program-binary';
import { hashApiKey } from '../../../app/api/api-key-auth';
import { createPayout } from '../../../app/payout/create-payout';
import { ONCEPAY_PROGRAM_ID } from '../../../app/program/idl';
import { insertMerchant, MerchantRow } from '../../../app/merchant/store';
import { listAttempts, PayoutRow } from '../../../app/payout/store';
import { address } from '../../../app/types';
import { createTestDb, TestDb } from '../../../testkit/test-db';
import { scaledWait, startTestNode, TestNode } from '../../../testkit/node';
import { until as untilTruthy } from '../../../testkit/until';
import {
  connectionIo,
  createTokenAccount,
  MerchantSetup,
  setupMerchant,
  successfulOpTransactions,
  tokenBalance,
} from '../../../testkit/payout/setup';

export interface PayoutLocalnet {
  net: TestNode;
  connection: Connection;
  m: MerchantSetup;
  db: TestDb;
  merchant: MerchantRow;
  /** The merchant's API key (Bearer). */
  apiKey: string;
  /** The payout authority's keypair file (for `oncepay payout … --authority`). */
  authorityFile: string;
  tmp: string;
  /** A fresh recipient token account and a stored payout row for it. */
  newPayout(amount?: string): Promise<{ row: PayoutRow; recipient: PublicKey }>;
  /**
   * Another merchant on the same node and database: its own authority (also its payout authority), mint, funded
   * vault and api_merchants row, with its own newPayout.
   */
  addMerchant(name: string): Promise<TenantMerchant>;
  stop(): Promise<void>;
}

export interface TenantMerchant {
  m: MerchantSetup;
  merchant: MerchantRow;
  apiKey: string;
  /** Its payout authority's keypair file (for `--authority`). */
  authorityFile: string;
  newPayout(amount?: string): Promise<{ row: PayoutRow; recipient: PublicKey }>;
}

export async function startPayoutLocalnet(
  label: string,
  opts: { db?: () => Promise<TestDb> } = {},
): Promise<PayoutLocalnet> {
  const net = await startTestNode({
    slotMs: 20,
    finalityDepth: 4,
    programs: [{ programId: ONCEPAY_PROGRAM_ID, path: requireProgramSo() }],
  });
  const connection = net.connection();
  const m = await setupMerchant(connectionIo(connection));
  const db = await (opts.db ?? (() => createTestDb(label)))();
  const apiKey = `${label}-key-000000000`;
  const merchant = await insertMerchant(db.pool, {
    name: 'm',
    apiKeyHash: hashApiKey(apiKey),
    programId: address(m.programId),
    merchantAddress: address(m.merchant),
    vault: address(m.vault),
  });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-app-'));
  const authorityFile = path.join(tmp, 'authority.json');
  fs.writeFileSync(authorityFile, JSON.stringify([...m.authority.secretKey]), { mode: 0o600 });
  let seq = 0;
  const payoutFor =
    (ms: MerchantSetup, row: MerchantRow) =>
    async (amount = '1000') => {
      const recipient = await createTokenAccount(
        connectionIo(connection),
        ms.authority,
        ms.mint,
        Keypair.generate().publicKey,
      );
      const { row: payout } = await createPayout(db.pool, row, {
        payoutId: `${label}-${++seq}`,
        recipient: recipient.toBase58(),
        mint: ms.mint.toBase58(),
        amount,
      });
      return { row: payout, recipient };
    };
  return {
    net,
    connection,
    m,
    db,
    merchant,
    apiKey,
    authorityFile,
    tmp,
    newPayout: payoutFor(m, merchant),
    async addMerchant(name: string) {
      const other = await setupMerchant(connectionIo(connection));
      const key = `${label}-${name}-key-00000000`;
      const row = await insertMerchant(db.pool, {
        name,
        apiKeyHash: hashApiKey(key),
        programId: address(other.programId),
        merchantAddress: address(other.merchant),
        vault: address(other.vault),
      });
      const file = path.join(tmp, `${name}-authority.json`);
      fs.writeFileSync(file, JSON.stringify([...other.authority.secretKey]), { mode: 0o600 });
      return { m: other, merchant: row, apiKey: key, authorityFile: file, newPayout: payoutFor(other, row) };
    },
    async stop() {
      await db.drop();
      await net.stop();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** The recipient got exactly the row's amount, by exactly one successful transaction on the op account. */
export async function expectExactlyOneTransfer(
  connection: Connection,
  row: PayoutRow,
  recipient: PublicKey,
): Promise<void> {
  expect(await tokenBalance(connection, recipient)).to.equal(row.amount);
  expect(await successfulOpTransactions(connection, row.opPda)).to.have.length(1);
}

/**
 * The journal agrees with the chain: the payout succeeded, exactly one of its attempts landed and it is the
 * result's signature, no attempt is left open, and the op account exists with the row's terms.
 */
export async function expectJournalConsistent(db: TestDb, connection: Connection, row: PayoutRow): Promise<void> {
  const p = (await db.pool.query('SELECT state, result_signature FROM payouts WHERE id = $1', [row.id])).rows[0];
  expect(p.state, `payout ${row.id}`).to.equal('succeeded');
  const attempts = await listAttempts(db.pool, row.id);
  const landed = attempts.filter((a) => a.status === 'landed');
  expect(landed, `payout ${row.id} attempts ${attempts.map((a) => a.status)}`).to.have.length(1);
  expect(p.result_signature).to.equal(landed[0].signature);
  expect(attempts.filter((a) => a.status === 'built' || a.status === 'sent')).to.deep.equal([]);
  expect(await successfulOpTransactions(connection, row.opPda)).to.deep.equal([landed[0].signature]);
}

/** testkit's until, every 20 ms, for `timeoutMs` (longer on a real validator: testkit/node scaledWait). */
export function until<T>(f: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 60_000): Promise<T> {
  return untilTruthy(what, f, { timeoutMs: scaledWait(timeoutMs), intervalMs: 20 });
}

/** The sum of a default-registry metric's values whose labels include `labels` (0 when it does not exist yet). */
export async function metricValue(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = register.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))
    .reduce((n, v) => n + v.value, 0);
}
