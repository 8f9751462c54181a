// `OncePay`: the merchant's whole lifecycle in one object — database migrations, the on-chain merchant config,
// vaults, payouts executed exactly once, and ledger exceptions settled exactly once. The `oncepay` CLI's merchant,
// vault and exception commands call these same methods.
import * as crypto from 'crypto';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { Pool } from 'pg';
import { OncepayError } from '../common/errors';
import { logger } from '../common/log';
import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';
import { resolveDatabaseUrl } from '../db/local-server';
import { hashApiKey } from '../app/api/api-key-auth';
import { EXCEPTION_CODES, PAYOUT_CODES, SDK_CODES } from '../common/errors/codes';
import { exceptionTotals, getException, listExceptions } from '../app/exception/store';
import { prepareRefund, refundException, resolveException } from '../app/exception/refund';
import { ExceptionFilter, ExceptionTotals } from '../app/exception/types';
import { MerchantAccount } from '../app/merchant/account';
import {
  MerchantChain,
  MerchantChange,
  MerchantInit,
  initMerchant,
  readMerchantAccount,
  setMerchantPaused,
  setMerchantPayoutAuthority,
} from '../app/merchant/lifecycle';
import { createConnectionChain } from '../app/payout/chain';
import { createPayout } from '../app/payout/create-payout';
import { RunLockedDeps, RunPayoutDeps, runPayout } from '../app/payout/run-payout';
import { ONCEPAY_PROGRAM_ID, merchantAddress } from '../app/payout/program';
import {
  MerchantRow,
  getMerchant,
  getMerchantByAddress,
  getPayout,
  insertMerchant,
  listAttempts,
} from '../app/payout/store';
import { resumePayouts } from '../app/payout/resume';
import { startPayoutWorker } from '../app/payout/worker';
import { address } from '../app/types';
import { VaultCheck, VaultCreated, checkVault, createVault } from '../app/vault/vault';
import {
  ExceptionView,
  OncePayOptions,
  Payout,
  PayoutInput,
  PayoutSigners,
  PayoutWorker,
  RegisteredMerchant,
} from './types';
import { toExceptionView, toPayout, toRegistered } from './views';

const key = (k: PublicKey | string) => (typeof k === 'string' ? new PublicKey(k) : k);

export class OncePay {
  /** The oncepay program this instance talks to. */
  readonly programId: PublicKey;
  private pool: Pool | undefined;
  private readonly conn: Connection | undefined;
  private readonly opts: OncePayOptions;

  private constructor(opts: OncePayOptions) {
    this.opts = opts;
    this.programId = key(opts.programId ?? ONCEPAY_PROGRAM_ID);
    this.conn =
      opts.connection ??
      (opts.rpcUrl
        ? new Connection(opts.rpcUrl, { commitment: 'confirmed', disableRetryOnRateLimit: true })
        : undefined);
  }

  /** Open the database pool (lazily connected) and the RPC connection. Call `close()` when done. */
  static connect(opts: OncePayOptions = {}): OncePay {
    return new OncePay(opts);
  }

  /** The database pool, opened on first use (on-chain-only calls never touch the database). */
  private get db(): Pool {
    this.pool ??= createPool({
      url: this.opts.databaseUrl ?? resolveDatabaseUrl(),
      schema: this.opts.schema,
      max: this.opts.maxConnections,
      applicationName: 'oncepay-sdk',
    });
    return this.pool;
  }

  /** Close the database pool (if one was opened). */
  async close(): Promise<void> {
    const p = this.pool;
    this.pool = undefined;
    await p?.end();
  }

  /** Apply the package's SQL migrations (idempotent; safe from several processes at once). Returns the files applied now. */
  async migrate(): Promise<string[]> {
    return migrate(this.db, { schema: this.opts.schema });
  }

  private get connection(): Connection {
    if (!this.conn)
      throw new OncepayError(
        SDK_CODES.RPC_MISSING,
        'this call reads or writes the chain: pass rpcUrl (or connection) to OncePay.connect',
      );
    return this.conn;
  }

  private chain(): MerchantChain {
    return {
      connection: this.connection,
      programId: this.programId,
      send: { commitment: this.opts.commitment, pollIntervalMs: this.opts.pollIntervalMs },
    };
  }

  // ---- the merchant on-chain ----

  /** The merchant config PDA of a merchant authority. */
  merchantAddress(authority: PublicKey | string): PublicKey {
    return merchantAddress(this.programId, key(authority)).merchant;
  }

  /**
   * Create the merchant config on-chain (initialize_merchant), signed by the merchant authority. Idempotent: when it
   * exists already, nothing is sent and `created: false` says so, with `matches` telling whether its payout
   * authority is the one asked for.
   */
  initMerchant(o: {
    authority: Keypair;
    payoutAuthority?: PublicKey | string;
    payer?: Keypair;
  }): Promise<MerchantInit> {
    return initMerchant(this.chain(), {
      authority: o.authority,
      payoutAuthority: key(o.payoutAuthority ?? o.authority.publicKey),
      payer: o.payer,
    });
  }

  /** The merchant config at a merchant PDA (see merchantAddress), or null when there is none. */
  getMerchant(merchant: PublicKey | string): Promise<MerchantAccount | null> {
    return readMerchantAccount(this.chain(), merchant);
  }

  /** Stop (true) or resume (false) the merchant's payouts; a no-op when already so. */
  setPaused(authority: Keypair, paused: boolean): Promise<MerchantChange> {
    return setMerchantPaused(this.chain(), authority, paused);
  }

  /** Rotate who signs payouts; a no-op when already so. */
  setPayoutAuthority(authority: Keypair, payoutAuthority: PublicKey | string): Promise<MerchantChange> {
    return setMerchantPayoutAuthority(this.chain(), authority, key(payoutAuthority));
  }

  // ---- vaults ----

  /** The merchant PDA's token account for `mint` (SPL Token or Token-2022), created if missing. */
  createVault(o: { payer: Keypair; merchant: PublicKey | string; mint: PublicKey | string }): Promise<VaultCreated> {
    return createVault(this.chain(), { payer: o.payer, merchant: key(o.merchant), mint: key(o.mint) });
  }

  /** What the vault's and its mint's settings let others do, or do to payouts (delegates, fees, hooks, freezing…). */
  checkVault(o: {
    merchant: PublicKey | string;
    vault?: PublicKey | string;
    mint?: PublicKey | string;
  }): Promise<VaultCheck> {
    return checkVault(this.chain(), {
      merchant: key(o.merchant),
      vault: o.vault ? key(o.vault) : undefined,
      mint: o.mint ? key(o.mint) : undefined,
    });
  }

  // ---- merchants in the database ----

  /**
   * Register a merchant (its config PDA and vault) for payouts and the HTTP API. Returns its API key once, when
   * created; a merchant already registered is returned as is (`created: false`, `apiKey: null`).
   */
  async registerMerchant(o: {
    name: string;
    merchant: PublicKey | string;
    vault: PublicKey | string;
    tokenProgram?: PublicKey | string;
    apiKey?: string;
  }): Promise<{ merchant: RegisteredMerchant; created: boolean; apiKey: string | null }> {
    const merchantAddr = address(key(o.merchant), 'merchant');
    const existing = await getMerchantByAddress(this.db, merchantAddr);
    if (existing && existing.programId === this.programId.toBase58())
      return { merchant: toRegistered(existing), created: false, apiKey: null };
    let tokenProgram = o.tokenProgram ? key(o.tokenProgram) : undefined;
    if (!tokenProgram && this.conn) tokenProgram = (await this.conn.getAccountInfo(key(o.vault), 'confirmed'))?.owner;
    // An API key is a credential, not an operation key: random is right here.
    const apiKey = o.apiKey ?? `ok_${crypto.randomBytes(24).toString('base64url')}`;
    const m = await insertMerchant(this.db, {
      name: o.name,
      apiKeyHash: hashApiKey(apiKey),
      programId: address(this.programId),
      merchantAddress: merchantAddr,
      vault: address(key(o.vault), 'vault'),
      tokenProgram: tokenProgram ? address(tokenProgram) : undefined,
    });
    return { merchant: toRegistered(m), created: true, apiKey };
  }

  private async merchantRow(m: RegisteredMerchant | string): Promise<MerchantRow> {
    const ref = typeof m === 'string' ? m : m.id;
    const row = /^[0-9]+$/.test(ref) ? await getMerchant(this.db, ref) : await getMerchantByAddress(this.db, ref);
    if (!row)
      throw new OncepayError(
        PAYOUT_CODES.MERCHANT_NOT_FOUND,
        `no registered merchant ${ref}: registerMerchant() first`,
      );
    return row;
  }

  // ---- payouts ----

  /** Store a payout (idempotent on payoutId: `created: false` returns the stored one). Nothing is signed yet. */
  async createPayout(
    merchant: RegisteredMerchant | string,
    input: PayoutInput,
  ): Promise<{ payout: Payout; created: boolean }> {
    const m = await this.merchantRow(merchant);
    const { row, created } = await createPayout(this.db, m, {
      payoutId: input.payoutId,
      recipient: key(input.recipient).toBase58(),
      mint: key(input.mint).toBase58(),
      amount: input.amount,
    });
    return { payout: toPayout(row, await listAttempts(this.db, row.id)), created };
  }

  /** What executing a payout needs, apart from the database (the worker pool brings its own connections). */
  private runDeps(s: Pick<PayoutSigners, 'authority' | 'payer'>): RunLockedDeps {
    return {
      chain: createConnectionChain({
        connection: this.connection,
        settleCommitment: this.opts.commitment,
        // A Connection the caller gave us may carry headers or a fetch of its own: its reads go through it.
        leanOpRead: this.opts.connection === undefined,
      }),
      authority: s.authority,
      payer: s.payer,
      pollIntervalMs: this.opts.pollIntervalMs,
      log: logger('sdk'),
    };
  }

  private executeDeps(s: PayoutSigners): RunPayoutDeps {
    return { ...this.runDeps(s), db: this.db, signal: s.signal, retryFailed: s.retryFailed };
  }

  /**
   * Execute a payout, or finish executing it: every signed attempt is stored before it is sent and resolved from
   * the chain. Call it again at any time, from any process, after any crash: it never pays twice.
   */
  async executePayout(payout: Payout | string, signers: PayoutSigners): Promise<Payout> {
    const id = typeof payout === 'string' ? payout : payout.id;
    await runPayout({ id }, this.executeDeps(signers));
    return this.mustPayout(id);
  }

  /** A payout with its on-chain proof, or null. */
  async getPayout(id: string): Promise<Payout | null> {
    const row = await getPayout(this.db, id);
    return row ? toPayout(row, await listAttempts(this.db, row.id)) : null;
  }

  private async mustPayout(id: string): Promise<Payout> {
    const p = await this.getPayout(id);
    if (!p) throw new OncepayError(PAYOUT_CODES.NOT_FOUND, `payout ${id} not found`);
    return p;
  }

  /** Finish every payout left uncertain by a crash (and, with includePending, start stored ones). */
  async resumePayouts(signers: PayoutSigners & { includePending?: boolean }): Promise<Payout[]> {
    const r = await resumePayouts({ ...this.executeDeps(signers), includePending: signers.includePending });
    return Promise.all(r.results.map((x) => this.mustPayout(x.id)));
  }

  /**
   * Run a pool of `concurrency` payout workers in this process: each claims a due payout (new, or left uncertain)
   * with one SKIP LOCKED statement and executes it. Any number of processes may run workers on one database.
   * `stop({ graceMs })` drains it. Keep `maxConnections` above `concurrency`.
   */
  startWorker(o: {
    authority: Keypair;
    payer?: Keypair;
    concurrency: number;
    onFinished?: (p: Payout) => void;
  }): PayoutWorker {
    const w = startPayoutWorker({
      ...this.runDeps(o),
      db: this.db,
      concurrency: o.concurrency,
      onFinished: o.onFinished ? (r) => void this.getPayout(r.id).then((p) => p && o.onFinished!(p)) : undefined,
    });
    return { name: w.name, inFlight: () => w.inFlight(), stop: (s) => w.stop(s) };
  }

  // ---- exceptions (money the indexer kept: overpayments, late payments, unknown references…) ----

  private async view(id: string): Promise<ExceptionView> {
    const e = await getException(this.db, id);
    if (!e) throw new OncepayError(EXCEPTION_CODES.NOT_FOUND, `exception ${id} not found`);
    return toExceptionView(e, e.resolution?.payoutRowId ? await this.getPayout(e.resolution.payoutRowId) : null);
  }

  async listExceptions(filter: ExceptionFilter = {}): Promise<ExceptionView[]> {
    const rows = await listExceptions(this.db, filter);
    return Promise.all(rows.map((e) => this.view(e.id)));
  }

  getException(id: string): Promise<ExceptionView> {
    return this.view(id);
  }

  /**
   * Refund an exception's amount to the sender's token account (or `to`), exactly once: the refund is a payout
   * whose payoutId is `refund:<cluster>:<signature>:<ix>:<inner>` of the exception's receipt. Running it again —
   * concurrently, or after a crash — finishes that one refund; it never creates a second.
   */
  async refundException(
    id: string,
    o: PayoutSigners & { to?: PublicKey | string; merchant?: RegisteredMerchant | string },
  ): Promise<{ exception: ExceptionView; created: boolean }> {
    const merchant = o.merchant ? await this.merchantRow(o.merchant) : undefined;
    const r = await refundException(this.executeDeps(o), id, { merchant, to: o.to ? key(o.to).toBase58() : undefined });
    return { exception: await this.view(id), created: r.created };
  }

  /** Store the refund payout and its link without executing it (executePayout / resumePayouts do that later). */
  async prepareRefund(
    id: string,
    o: { to?: PublicKey | string; merchant?: RegisteredMerchant | string } = {},
  ): Promise<{ exception: ExceptionView; payout: Payout; created: boolean }> {
    const merchant = o.merchant ? await this.merchantRow(o.merchant) : undefined;
    const r = await prepareRefund(this.db, id, { merchant, to: o.to ? key(o.to).toBase58() : undefined });
    return { exception: await this.view(id), payout: await this.mustPayout(r.payout.id), created: r.created };
  }

  /** Close an exception without moving money (idempotent; refused once it has a refund). */
  async resolveException(id: string, note: string): Promise<{ exception: ExceptionView; changed: boolean }> {
    const r = await resolveException(this.db, id, note);
    return { exception: await this.view(id), changed: r.changed };
  }

  /** Count and sum of exceptions per state: open, refunding, refunded, refund_failed, resolved. */
  exceptionTotals(): Promise<ExceptionTotals> {
    return exceptionTotals(this.db);
  }
}
