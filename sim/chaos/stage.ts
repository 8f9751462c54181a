// The stage of a chaos run, set up before any fault: a localnet running the compiled program (in this process, so
// its fault API is at hand), a PostgreSQL server of the run's own (tests/faults: restartable), a merchant on chain
// with a funded vault and its api_merchants row, the payout authority's keypair file, the invoices with their own
// deposit token accounts, one customer per payment (funded), a token account per payout recipient and one for the
// refund, and the merchant's fulfilment endpoint (demo/merchant-endpoint: verifies, applies each key once).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { requireProgramSo } from '../../common/program-binary';
import { hashApiKey } from '../../app/api/api-key-auth';
import { ONCEPAY_PROGRAM_ID } from '../../app/program/idl';
import { insertMerchant, type MerchantRow } from '../../app/merchant/store';
import { address } from '../../app/types';
import { createLedger } from '../../indexer/ledger';
import { startLocalnet, type LocalnetHandle } from '../../localnet';
import { type EndpointFault, type MerchantEndpoint, startMerchantEndpoint } from '../../demo/merchant-endpoint';
import { airdrop, createTokenAccount, mintTo } from '../../testkit/cluster';
import { connectionIo, type MerchantSetup, setupMerchant } from '../../testkit/payout/setup';
import { type FaultDb, ROOT, startFaultDb } from '../../tests/faults/support';
import { stopLocalServer } from '../../db/local-server';
import type { ChaosPlan } from './plan';

export const CHAOS_CLUSTER = 'chaos';
export const WEBHOOK_SECRET = 'whsec-chaos';

export interface Stage {
  plan: ChaosPlan;
  net: LocalnetHandle;
  connection: Connection;
  db: FaultDb;
  m: MerchantSetup;
  merchant: MerchantRow;
  apiKey: string;
  authorityFile: string;
  tmp: string;
  /** The first slot of the run: the scanner starts here. */
  firstSlot: number;
  invoices: Array<{ id: string; expected: bigint; deposit: PublicKey }>;
  customers: Array<{ kp: Keypair; token: PublicKey }>;
  recipients: PublicKey[];
  refundTo: PublicKey;
  endpoint: MerchantEndpoint;
  /** Faults the merchant endpoint plays on its next requests. */
  endpointFaults: EndpointFault[];
  close(): Promise<void>;
}

export async function setUpStage(plan: ChaosPlan, opts: { net?: LocalnetHandle } = {}): Promise<Stage> {
  const owned = !opts.net;
  const net =
    opts.net ??
    (await startLocalnet({
      slotMs: 100,
      finalityDepth: 3,
      wsOnNextPort: false,
      programs: [{ programId: ONCEPAY_PROGRAM_ID, path: requireProgramSo() }],
    }));
  const closers: Array<() => Promise<void>> = owned ? [() => net.stop()] : [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    const connection = new Connection(net.url, 'confirmed');
    const firstSlot = await connection.getSlot('confirmed');
    const db = await startFaultDb(`chaos_${plan.seed}`);
    // Should this process die before close(), its PostgreSQL server (a daemon of its own) is stopped on the way out.
    const dataDir = path.join(ROOT, '.oncepay', `pg-faults-chaos_${plan.seed}`, 'data');
    const stopServer = () => stopLocalServer({ dataDir });
    process.once('exit', stopServer);
    closers.push(async () => {
      process.removeListener('exit', stopServer);
      await db.close();
    });
    const io = connectionIo(connection);
    const owed = plan.payouts.reduce((n, a) => n + a, 0n);
    const m = await setupMerchant(io, { vaultFunds: owed + 10_000_000n });
    const apiKey = `chaos-${plan.seed}-key-00000000000`;
    const merchant = await insertMerchant(db.pool, {
      name: 'chaos',
      apiKeyHash: hashApiKey(apiKey),
      programId: address(m.programId.toBase58()),
      merchantAddress: address(m.merchant.toBase58()),
      vault: address(m.vault.toBase58()),
    });
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-chaos-'));
    closers.push(async () => fs.rmSync(tmp, { recursive: true, force: true }));
    const authorityFile = path.join(tmp, 'authority.json');
    fs.writeFileSync(authorityFile, JSON.stringify([...m.authority.secretKey]), { mode: 0o600 });

    const ledger = createLedger({ db: db.pool });
    const invoices: Stage['invoices'] = [];
    for (const [i, expected] of plan.invoices.entries()) {
      const deposit = await createTokenAccount(connection, m.authority, m.mint, m.authority.publicKey);
      const id = `INV-${plan.seed}-${i}`;
      await ledger.createInvoice({
        id,
        mint: m.mint.toBase58(),
        expectedAmount: expected,
        depositAddress: deposit.toBase58(),
      });
      invoices.push({ id, expected, deposit });
    }
    const customers: Stage['customers'] = [];
    for (const transfers of plan.payments) {
      const kp = Keypair.generate();
      await airdrop(connection, kp.publicKey, 1_000_000_000);
      const token = await createTokenAccount(connection, m.authority, m.mint, kp.publicKey);
      await mintTo(
        connection,
        m.authority,
        m.mint,
        token,
        transfers.reduce((n, t) => n + t.amount, 0n),
      );
      customers.push({ kp, token });
    }
    const recipients: PublicKey[] = [];
    for (let i = 0; i < plan.payouts.length; i++)
      recipients.push(await createTokenAccount(connection, m.authority, m.mint, Keypair.generate().publicKey));
    const refundTo = await createTokenAccount(connection, m.authority, m.mint, Keypair.generate().publicKey);

    const endpointFaults: EndpointFault[] = [];
    const endpoint = await startMerchantEndpoint({
      secret: WEBHOOK_SECRET,
      fault: () => endpointFaults.shift() ?? null,
    });
    closers.push(() => endpoint.close());
    return {
      plan,
      net,
      connection,
      db,
      m,
      merchant,
      apiKey,
      authorityFile,
      tmp,
      firstSlot,
      invoices,
      customers,
      recipients,
      refundTo,
      endpoint,
      endpointFaults,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
