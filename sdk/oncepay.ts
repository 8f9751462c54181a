// `OncePay`: the merchant's whole lifecycle in one object — database migrations, the on-chain merchant config,
// vaults, payouts executed exactly once, and ledger exceptions settled exactly once. The `oncepay` CLI's merchant,
// vault and exception commands call these same methods.
import * as crypto from 'crypto';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { Pool } from 'pg';
import { ignoreAbort, sleep } from '../common/sleep';
import { OncepayError } from '../common/errors';
import { logger } from '../common/log';
import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';
import { resolveDatabaseUrl } from '../db/local-server';
import { hashApiKey } from '../app/api/api-key-auth';
import { EXCEPTION_CODES, INVOICE_CODES, PAYOUT_CODES, SDK_CODES } from '../common/errors/codes';
import { createInvoice } from '../app/invoice/create-invoice';
import { decodeCursor, encodeCursor } from '../app/invoice/list-cursor';
import { mintDecimalsFromChain } from '../app/invoice/mint-decimals-rpc';
import { getInvoice, invoiceDetail, listInvoices } from '../app/invoice/store';
import { InvoiceEvents, listenForInvoiceChanges } from '../app/invoice/invoice-events';
import { ledgerInvoiceId } from '../app/invoice/prepare';
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
import { ONCEPAY_PROGRAM_ID } from '../app/program/idl';
import { merchantAddress } from '../app/merchant/instructions';
import { signerOfMerchant } from '../app/payout/signers';
import { FINAL_STATES, getPayout, getPayoutOfMerchantById, listAttempts } from '../app/payout/store';
import { MerchantRow, getMerchant, getMerchantByAddress, insertMerchant } from '../app/merchant/store';
import { resumePayouts } from '../app/payout/resume';
import { startPayoutWorker } from '../app/payout/worker';
import { address } from '../app/types';
import { EXCEPTION_KINDS } from '../indexer/match/types';
import { EXCEPTION_STATES, ExceptionScope } from '../app/exception/types';
import {
  abortSignalArg,
  amountArg,
  booleanArg,
  connectionArg,
  functionArg,
  intArg,
  invalid,
  keypairArg,
  keypairsArg,
  objectArg,
  optionalBooleanArg,
  optionalIntArg,
  optionalKeypairArg,
  optionalOneOfArg,
  optionalPubkeyArg,
  payoutIdArg,
  pubkeyArg,
  rowIdArg,
  stringArg,
  urlArg,
} from './arguments';
import { VaultCheck, VaultCreated, checkVault, createVault } from '../app/vault/vault';
import {
  ExceptionView,
  Invoice,
  InvoiceInput,
  InvoicePage,
  InvoiceStatus,
  OncePayOptions,
  Payout,
  PayoutInput,
  PayoutSigners,
  PayoutWorker,
  RegisteredMerchant,
} from './types';
import { toExceptionView, toInvoice, toPayout, toRegistered } from './views';

/** An optional Date argument. */
function dateArg(v: unknown, field: string): Date | undefined {
  if (v === undefined) return undefined;
  if (v instanceof Date && !Number.isNaN(v.getTime())) return v;
  throw invalid(field, 'a Date', v);
}

/** What a method that signs payouts takes: its keys (one, or several), payer, signal and retry flag, checked. */
function signersArg(s: PayoutSigners, field = 'signers') {
  const o = objectArg(s, field);
  return {
    authorities: keypairsArg(o.authority, `${field}.authority`),
    payer: optionalKeypairArg(o.payer, `${field}.payer`),
    signal: abortSignalArg(o.signal, `${field}.signal`),
    retryFailed: optionalBooleanArg(o.retryFailed, `${field}.retryFailed`),
  };
}

/** A merchant reference: a RegisteredMerchant, its row id, or its merchant config address. */
function merchantRefArg(m: unknown, field: string): string {
  const ref = typeof m === 'object' && m !== null ? (m as { id?: unknown }).id : m;
  if (typeof ref === 'string' && /^[0-9]{1,18}$/.test(ref)) return ref;
  if (typeof ref === 'string' && typeof m === 'string') return pubkeyArg(ref, field).toBase58();
  throw invalid(field, 'a RegisteredMerchant, its id, or its merchant config address', m);
}

export class OncePay {
  /** The oncepay program this instance talks to. */
  readonly programId: PublicKey;
  private pool: Pool | undefined;
  /** The one LISTEN connection of waitForPayment's waiters, opened by the first of them. */
  private invoiceEvents: InvoiceEvents | undefined;
  private readonly conn: Connection | undefined;
  private readonly opts: OncePayOptions;

  private constructor(opts: OncePayOptions) {
    const o = objectArg(opts, 'options');
    urlArg(o.databaseUrl, 'options.databaseUrl', ['postgres:', 'postgresql:']);
    stringArg(o.schema, 'options.schema', { optional: true, nonEmpty: true });
    optionalIntArg(o.maxConnections, 'options.maxConnections', 1);
    const rpcUrl = urlArg(o.rpcUrl, 'options.rpcUrl', ['http:', 'https:']);
    const connection = connectionArg(o.connection, 'options.connection');
    this.programId = optionalPubkeyArg(o.programId, 'options.programId') ?? new PublicKey(ONCEPAY_PROGRAM_ID);
    optionalOneOfArg(o.commitment, 'options.commitment', ['confirmed', 'finalized'] as const);
    optionalIntArg(o.pollIntervalMs, 'options.pollIntervalMs', 0);
    this.opts = opts;
    this.conn =
      connection ??
      (rpcUrl ? new Connection(rpcUrl, { commitment: 'confirmed', disableRetryOnRateLimit: true }) : undefined);
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
    const events = this.invoiceEvents;
    this.invoiceEvents = undefined;
    await events?.stop();
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
    return merchantAddress(this.programId, pubkeyArg(authority, 'authority')).merchant;
  }

  /**
   * Create the merchant config on-chain (initialize_merchant), signed by the merchant authority. Idempotent: when it
   * exists already, nothing is sent and `created: false` says so, with `matches` telling whether its payout
   * authority is the one asked for.
   */
  async initMerchant(o: {
    authority: Keypair;
    payoutAuthority?: PublicKey | string;
    payer?: Keypair;
  }): Promise<MerchantInit> {
    const a = objectArg(o, 'options');
    const authority = keypairArg(a.authority, 'authority');
    const payoutAuthority = optionalPubkeyArg(a.payoutAuthority, 'payoutAuthority') ?? authority.publicKey;
    const payer = optionalKeypairArg(a.payer, 'payer');
    return initMerchant(this.chain(), { authority, payoutAuthority, payer });
  }

  /** The merchant config at a merchant PDA (see merchantAddress), or null when there is none. */
  async getMerchant(merchant: PublicKey | string): Promise<MerchantAccount | null> {
    return readMerchantAccount(this.chain(), pubkeyArg(merchant, 'merchant'));
  }

  /** Stop (true) or resume (false) the merchant's payouts; a no-op when already so. */
  async setPaused(authority: Keypair, paused: boolean): Promise<MerchantChange> {
    return setMerchantPaused(this.chain(), keypairArg(authority, 'authority'), booleanArg(paused, 'paused'));
  }

  /** Rotate who signs payouts; a no-op when already so. */
  async setPayoutAuthority(authority: Keypair, payoutAuthority: PublicKey | string): Promise<MerchantChange> {
    const a = keypairArg(authority, 'authority');
    return setMerchantPayoutAuthority(this.chain(), a, pubkeyArg(payoutAuthority, 'payoutAuthority'));
  }

  // ---- vaults ----

  /** The merchant PDA's token account for `mint` (SPL Token or Token-2022), created if missing. */
  async createVault(o: {
    payer: Keypair;
    merchant: PublicKey | string;
    mint: PublicKey | string;
  }): Promise<VaultCreated> {
    const a = objectArg(o, 'options');
    const args = {
      payer: keypairArg(a.payer, 'payer'),
      merchant: pubkeyArg(a.merchant, 'merchant'),
      mint: pubkeyArg(a.mint, 'mint'),
    };
    return createVault(this.chain(), args);
  }

  /** What the vault's and its mint's settings let others do, or do to payouts (delegates, fees, hooks, freezing…). */
  async checkVault(o: {
    merchant: PublicKey | string;
    vault?: PublicKey | string;
    mint?: PublicKey | string;
  }): Promise<VaultCheck> {
    const a = objectArg(o, 'options');
    const args = {
      merchant: pubkeyArg(a.merchant, 'merchant'),
      vault: optionalPubkeyArg(a.vault, 'vault'),
      mint: optionalPubkeyArg(a.mint, 'mint'),
    };
    return checkVault(this.chain(), args);
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
    /** The wallet its invoices are paid to unless an invoice names another. */
    receivingAddress?: PublicKey | string;
    apiKey?: string;
  }): Promise<{ merchant: RegisteredMerchant; created: boolean; apiKey: string | null }> {
    const a = objectArg(o, 'options');
    const name = stringArg(a.name, 'name', { nonEmpty: true })!;
    const merchantAddr = address(pubkeyArg(a.merchant, 'merchant'), 'merchant');
    const vault = pubkeyArg(a.vault, 'vault');
    let tokenProgram = optionalPubkeyArg(a.tokenProgram, 'tokenProgram');
    const receivingAddress = optionalPubkeyArg(a.receivingAddress, 'receivingAddress');
    if (a.apiKey !== undefined && (typeof a.apiKey !== 'string' || !/^[\x21-\x7e]{16,512}$/.test(a.apiKey)))
      // Not shown: it is a credential.
      throw new OncepayError(SDK_CODES.ARGUMENT_INVALID, 'apiKey must be 16–512 visible ASCII characters', {
        field: 'apiKey',
      });
    const existing = await getMerchantByAddress(this.db, merchantAddr);
    if (existing && existing.programId === this.programId.toBase58())
      return { merchant: toRegistered(existing), created: false, apiKey: null };
    if (!tokenProgram && this.conn) tokenProgram = (await this.conn.getAccountInfo(vault, 'confirmed'))?.owner;
    // An API key is a credential, not an operation key: random is right here.
    const apiKey = a.apiKey ?? `ok_${crypto.randomBytes(24).toString('base64url')}`;
    const m = await insertMerchant(this.db, {
      name,
      apiKeyHash: hashApiKey(apiKey),
      programId: address(this.programId),
      merchantAddress: merchantAddr,
      vault: address(vault, 'vault'),
      tokenProgram: tokenProgram ? address(tokenProgram) : undefined,
      receivingAddress: receivingAddress ? address(receivingAddress) : undefined,
    });
    return { merchant: toRegistered(m), created: true, apiKey };
  }

  /** The registered merchant `m` names (checked as `field` first). */
  private async merchantRow(m: RegisteredMerchant | string, field = 'merchant'): Promise<MerchantRow> {
    const ref = merchantRefArg(m, field);
    const row = /^[0-9]+$/.test(ref) ? await getMerchant(this.db, ref) : await getMerchantByAddress(this.db, ref);
    if (!row)
      throw new OncepayError(
        PAYOUT_CODES.MERCHANT_NOT_FOUND,
        `${field}: no registered merchant ${ref}: registerMerchant() first`,
        { field },
      );
    return row;
  }

  /** The exception scope of an optional `merchant` argument (absent: every merchant's). */
  private async scopeOf(merchant: RegisteredMerchant | string | undefined, field: string): Promise<ExceptionScope> {
    return merchant === undefined ? {} : { merchantId: (await this.merchantRow(merchant, field)).id };
  }

  // ---- payouts ----

  /** Store a payout (idempotent on payoutId: `created: false` returns the stored one). Nothing is signed yet. */
  async createPayout(
    merchant: RegisteredMerchant | string,
    input: PayoutInput,
  ): Promise<{ payout: Payout; created: boolean }> {
    const i = objectArg(input, 'input');
    const terms = {
      payoutId: payoutIdArg(i.payoutId, 'input.payoutId'),
      recipient: pubkeyArg(i.recipient, 'input.recipient').toBase58(),
      mint: pubkeyArg(i.mint, 'input.mint').toBase58(),
      amount: amountArg(i.amount, 'input.amount'),
    };
    merchantRefArg(merchant, 'merchant');
    const m = await this.merchantRow(merchant);
    const { row, created } = await createPayout(this.db, m, terms);
    return { payout: toPayout(row, await listAttempts(this.db, row.id)), created };
  }

  // ---- invoices ----

  /**
   * Store an invoice (idempotent on invoiceId: the same terms again return the stored one, `created: false`; other
   * terms throw ONCEPAY__INVOICE__ID_EXISTS). oncepay generates its reference key; the recipient is the merchant's
   * receiving address unless `input.recipient` names one. A mint's decimals are read from the chain once (rpcUrl).
   */
  async createInvoice(
    merchant: RegisteredMerchant | string,
    input: InvoiceInput,
  ): Promise<{ invoice: Invoice; created: boolean }> {
    const i = objectArg(input, 'input');
    const amount = amountArg(i.amount, 'input.amount');
    const m = await this.merchantRow(merchant);
    const read = this.conn ? mintDecimalsFromChain(this.conn) : undefined;
    const { row, created } = await createInvoice(this.db, m, { ...i, amount }, read, 'input.');
    return { invoice: toInvoice(row, await invoiceDetail(this.db, row)), created };
  }

  /** The merchant's invoice `invoiceId` with its receipts, exceptions and fulfilment, or null. */
  async getInvoice(merchant: RegisteredMerchant | string, invoiceId: string): Promise<Invoice | null> {
    const m = await this.merchantRow(merchant);
    return this.invoiceOf(m, stringArg(invoiceId, 'invoiceId', { nonEmpty: true })!);
  }

  /** The invoice of a merchant already looked up (waitForPayment reads it again and again). */
  private async invoiceOf(m: MerchantRow, invoiceId: string): Promise<Invoice | null> {
    const row = await getInvoice(this.db, m.id, invoiceId);
    return row ? toInvoice(row, await invoiceDetail(this.db, row)) : null;
  }

  /** The merchant's invoices, newest first, `limit` (1–100, default 20) at a time. */
  async listInvoices(
    merchant: RegisteredMerchant | string,
    o: { status?: InvoiceStatus; createdFrom?: Date; createdTo?: Date; limit?: number; cursor?: string } = {},
  ): Promise<InvoicePage> {
    const a = objectArg(o, 'options');
    const limit = optionalIntArg(a.limit, 'limit', 1) ?? 20;
    if (limit > 100) throw new OncepayError(INVOICE_CODES.FILTER_INVALID, 'limit must be 1–100', { field: 'limit' });
    const before = a.cursor === undefined ? undefined : decodeCursor(stringArg(a.cursor, 'cursor')!);
    if (before === null)
      throw new OncepayError(INVOICE_CODES.CURSOR_MALFORMED, 'cursor is not one listInvoices returned', {
        field: 'cursor',
      });
    const status = optionalOneOfArg(a.status, 'status', ['open', 'paid', 'expired'] as const);
    const createdFrom = dateArg(a.createdFrom, 'createdFrom');
    const createdTo = dateArg(a.createdTo, 'createdTo');
    const m = await this.merchantRow(merchant);
    const page = await listInvoices(this.db, {
      merchantId: m.id,
      status,
      createdFrom,
      createdTo,
      before,
      limit,
    });
    const data: Invoice[] = [];
    for (const row of page.rows) data.push(toInvoice(row, await invoiceDetail(this.db, row)));
    const last = page.rows[page.rows.length - 1];
    return { data, nextCursor: page.more && last ? encodeCursor(last.id) : null };
  }

  /**
   * Resolves with the invoice once the ledger credited it in full at finality; rejects with
   * ONCEPAY__INVOICE__EXPIRED when it expires unpaid, ONCEPAY__INVOICE__ABORTED on `signal`, NOT_FOUND when there is
   * no such invoice. It reads the invoice again as soon as the ledger's commit notifies a change to it (PostgreSQL
   * NOTIFY; one LISTEN connection per OncePay, shared by all its waiters, closed by `close()`), and every
   * `pollIntervalMs` besides (default 5000): an expiry notifies nothing, and a notification sent while the connection
   * was being made again is lost. To be called on payment instead, from any process, use the fulfilment webhook
   * (`oncepay outbox run`: one signed POST per paid invoice, its operation id as Idempotency-Key).
   */
  async waitForPayment(
    merchant: RegisteredMerchant | string,
    invoiceId: string,
    o: { signal?: AbortSignal; pollIntervalMs?: number } = {},
  ): Promise<Invoice> {
    const a = objectArg(o, 'options');
    const signal = abortSignalArg(a.signal, 'signal');
    const every = optionalIntArg(a.pollIntervalMs, 'pollIntervalMs', 1) ?? 5000;
    const id = stringArg(invoiceId, 'invoiceId', { nonEmpty: true })!;
    const aborted = () => new OncepayError(INVOICE_CODES.ABORTED, undefined, { invoiceId });
    const m = await this.merchantRow(merchant);
    // Watching before the first read: a credit committed between the read and the wait still wakes it.
    let wake: AbortController = new AbortController();
    const events = (this.invoiceEvents ??= listenForInvoiceChanges(this.db, logger('sdk'), {
      lostMessage: 'waitForPayment: invoice notifications lost (LISTEN connection); polling until it is back',
    }));
    const unwatch = events.watch(ledgerInvoiceId(m.id, id), () => wake.abort());
    try {
      for (;;) {
        if (signal?.aborted) throw aborted();
        if (wake.signal.aborted) wake = new AbortController();
        const inv = await this.invoiceOf(m, id);
        if (!inv) throw new OncepayError(INVOICE_CODES.NOT_FOUND, `no invoice ${JSON.stringify(id)}`, { invoiceId });
        if (inv.status === 'paid') return inv;
        if (inv.status === 'expired') throw new OncepayError(INVOICE_CODES.EXPIRED, undefined, { invoiceId });
        // Until the poll interval passes, the invoice is notified, or the caller aborts (which the loop's top sees).
        const until = signal ? AbortSignal.any([signal, wake.signal]) : wake.signal;
        await sleep(every, until).catch(ignoreAbort);
      }
    } finally {
      unwatch();
    }
  }

  /** What executing a payout needs, apart from the database (the worker pool brings its own connections). */
  private runDeps(s: { authorities: Keypair[]; payer?: Keypair }): RunLockedDeps & { authorities: Keypair[] } {
    return {
      chain: createConnectionChain({
        connection: this.connection,
        settleCommitment: this.opts.commitment,
        // A Connection the caller gave us may carry headers or a fetch of its own: its reads go through it.
        leanOpRead: this.opts.connection === undefined,
      }),
      authority: s.authorities[0],
      authorities: s.authorities,
      payer: s.payer,
      pollIntervalMs: this.opts.pollIntervalMs,
      log: logger('sdk'),
    };
  }

  private executeDeps(s: ReturnType<typeof signersArg>): RunPayoutDeps & { authorities: Keypair[] } {
    return { ...this.runDeps(s), db: this.db, signal: s.signal, retryFailed: s.retryFailed };
  }

  /**
   * Execute a payout, or finish executing it: every signed attempt is stored before it is sent and resolved from
   * the chain. Call it again at any time, from any process, after any crash: it never pays twice. It is signed
   * with the key among `signers.authority` that is the merchant's payout authority on chain; when none is, it
   * throws ONCEPAY__PAYOUT__SIGNER_UNAUTHORIZED and signs nothing.
   */
  async executePayout(payout: Payout | string, signers: PayoutSigners): Promise<Payout> {
    const id = rowIdArg(typeof payout === 'object' && payout !== null ? payout.id : payout, 'payout');
    const deps = this.executeDeps(signersArg(signers));
    const row = await getPayout(this.db, id);
    if (!row) throw new OncepayError(PAYOUT_CODES.NOT_FOUND, `payout ${id} not found`, { field: 'payout' });
    if (!FINAL_STATES.includes(row.state) || (deps.retryFailed && row.state === 'failed')) {
      const m = (await getMerchant(this.db, row.merchantId))!;
      deps.authority = await signerOfMerchant(deps.chain, deps.authorities, m, `payout ${id}`);
    }
    await runPayout(row, deps);
    return this.mustPayout(id);
  }

  /** A payout with its on-chain proof, or null; with `merchant`, only if it is that merchant's. */
  async getPayout(id: string, o: { merchant?: RegisteredMerchant | string } = {}): Promise<Payout | null> {
    const pid = rowIdArg(id, 'id');
    const a = objectArg(o, 'options');
    if (a.merchant !== undefined) merchantRefArg(a.merchant, 'options.merchant');
    // With a merchant, read with the merchant in the key: another merchant's payout is null, never read.
    const row =
      a.merchant === undefined
        ? await getPayout(this.db, pid)
        : await getPayoutOfMerchantById(this.db, (await this.merchantRow(a.merchant, 'options.merchant')).id, pid);
    return row ? toPayout(row, await listAttempts(this.db, row.id)) : null;
  }

  private async mustPayout(id: string): Promise<Payout> {
    const p = await this.getPayout(id);
    if (!p) throw new OncepayError(PAYOUT_CODES.NOT_FOUND, `payout ${id} not found`);
    return p;
  }

  /**
   * Finish every payout left uncertain by a crash (and, with includePending, start stored ones) — of the merchants
   * whose payout authority is one of `signers.authority`; other merchants' payouts are not touched.
   */
  async resumePayouts(signers: PayoutSigners & { includePending?: boolean }): Promise<Payout[]> {
    const s = signersArg(signers);
    const includePending = optionalBooleanArg(signers.includePending, 'signers.includePending');
    const r = await resumePayouts({ ...this.executeDeps(s), includePending });
    return Promise.all(r.results.map((x) => this.mustPayout(x.id)));
  }

  /**
   * Run a pool of `concurrency` payout workers in this process: each claims a due payout (new, or left uncertain)
   * with one SKIP LOCKED statement and executes it. Any number of processes may run workers on one database.
   * `stop({ graceMs })` drains it. Keep `maxConnections` above `concurrency`.
   */
  startWorker(o: {
    authority: Keypair | Keypair[];
    payer?: Keypair;
    concurrency: number;
    onFinished?: (p: Payout) => void;
  }): PayoutWorker {
    const a = objectArg(o, 'options');
    const authorities = keypairsArg(a.authority, 'authority');
    const payer = optionalKeypairArg(a.payer, 'payer');
    const concurrency = intArg(a.concurrency, 'concurrency', 1);
    const onFinished = functionArg(a.onFinished, 'onFinished');
    const w = startPayoutWorker({
      ...this.runDeps({ authorities, payer }),
      authority: authorities,
      db: this.db,
      concurrency,
      onFinished: onFinished ? (r) => void this.getPayout(r.id).then((p) => p && onFinished(p)) : undefined,
    });
    return { name: w.name, inFlight: () => w.inFlight(), merchants: () => w.merchants(), stop: (s) => w.stop(s) };
  }

  // ---- exceptions (money the indexer kept: overpayments, late payments, unknown references…) ----

  private async view(id: string, scope: ExceptionScope = {}): Promise<ExceptionView> {
    const e = await getException(this.db, id, scope);
    if (!e) throw new OncepayError(EXCEPTION_CODES.NOT_FOUND, `exception ${id} not found`, { field: 'id' });
    return toExceptionView(e, e.resolution?.payoutRowId ? await this.getPayout(e.resolution.payoutRowId) : null);
  }

  /** Exceptions, filtered; with `merchant`, only that merchant's (its vault received the money, or it refunded it). */
  async listExceptions(
    filter: ExceptionFilter & { merchant?: RegisteredMerchant | string } = {},
  ): Promise<ExceptionView[]> {
    const f = objectArg(filter, 'filter');
    const checked: ExceptionFilter = {
      kind: optionalOneOfArg(f.kind, 'filter.kind', EXCEPTION_KINDS),
      invoiceId: stringArg(f.invoiceId, 'filter.invoiceId', { optional: true }),
      state: optionalOneOfArg(f.state, 'filter.state', EXCEPTION_STATES),
    };
    if (f.merchant !== undefined) merchantRefArg(f.merchant, 'filter.merchant');
    const scope = await this.scopeOf(f.merchant, 'filter.merchant');
    const rows = await listExceptions(this.db, checked, scope);
    return Promise.all(rows.map((e) => this.view(e.id, scope)));
  }

  /** One exception; with `merchant`, only if it is that merchant's (another's is not found). */
  async getException(id: string, o: { merchant?: RegisteredMerchant | string } = {}): Promise<ExceptionView> {
    const eid = rowIdArg(id, 'id');
    const a = objectArg(o, 'options');
    if (a.merchant !== undefined) merchantRefArg(a.merchant, 'merchant');
    return this.view(eid, await this.scopeOf(a.merchant, 'merchant'));
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
    const eid = rowIdArg(id, 'id');
    const s = signersArg(o, 'options');
    const to = optionalPubkeyArg(o.to, 'options.to')?.toBase58();
    if (o.merchant !== undefined) merchantRefArg(o.merchant, 'options.merchant');
    const merchant = o.merchant === undefined ? undefined : await this.merchantRow(o.merchant, 'options.merchant');
    const r = await refundException(this.executeDeps(s), eid, { merchant, to });
    return { exception: await this.view(eid, { merchantId: r.executed.merchantId }), created: r.created };
  }

  /** Store the refund payout and its link without executing it (executePayout / resumePayouts do that later). */
  async prepareRefund(
    id: string,
    o: { to?: PublicKey | string; merchant?: RegisteredMerchant | string } = {},
  ): Promise<{ exception: ExceptionView; payout: Payout; created: boolean }> {
    const eid = rowIdArg(id, 'id');
    const a = objectArg(o, 'options');
    const to = optionalPubkeyArg(a.to, 'options.to')?.toBase58();
    if (a.merchant !== undefined) merchantRefArg(a.merchant, 'options.merchant');
    const merchant = a.merchant === undefined ? undefined : await this.merchantRow(a.merchant, 'options.merchant');
    const r = await prepareRefund(this.db, eid, { merchant, to });
    const exception = await this.view(eid, { merchantId: r.payout.merchantId });
    return { exception, payout: await this.mustPayout(r.payout.id), created: r.created };
  }

  /**
   * Close an exception without moving money (idempotent; refused once it has a refund); with `merchant`, only
   * that merchant's exception.
   */
  async resolveException(
    id: string,
    note: string,
    o: { merchant?: RegisteredMerchant | string } = {},
  ): Promise<{ exception: ExceptionView; changed: boolean }> {
    const eid = rowIdArg(id, 'id');
    stringArg(note, 'note'); // an empty one is EXCEPTION_CODES.NOTE_MISSING, below
    const a = objectArg(o, 'options');
    if (a.merchant !== undefined) merchantRefArg(a.merchant, 'options.merchant');
    const scope = await this.scopeOf(a.merchant, 'options.merchant');
    const r = await resolveException(this.db, eid, note, scope);
    return { exception: await this.view(eid, scope), changed: r.changed };
  }

  /** Count and sum of exceptions per state: open, refunding, refunded, refund_failed, resolved (of one merchant, or all). */
  async exceptionTotals(o: { merchant?: RegisteredMerchant | string } = {}): Promise<ExceptionTotals> {
    const a = objectArg(o, 'options');
    if (a.merchant !== undefined) merchantRefArg(a.merchant, 'options.merchant');
    return exceptionTotals(this.db, await this.scopeOf(a.merchant, 'options.merchant'));
  }
}
