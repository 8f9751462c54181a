// The SDK keeps its contract on bad input, table-driven: every public method of OncePay (and every function the
// package exports) called with malformed arguments throws an OncepayError — the class the package exports — whose
// code is the stable one for that kind of input and whose context.field (and message) names the bad argument, and
// nothing in the database changed. A method added to OncePay without a row here fails the completeness check.
import { expect } from 'chai';
import { Keypair } from '@solana/web3.js';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { deriveOperation, deriveOpId, OncePay, OncepayError, readKeypairFile, refundPayoutId } from '../../sdk';
import { createTestDb, TestDb } from '../../testkit/test-db';
import { schemaSnapshot } from './test-db-env';

const ADDRESS = 'ONCEPAY__PAYOUT__ADDRESS_MALFORMED';
const KEYPAIR = 'ONCEPAY__PAYOUT__KEYPAIR_MALFORMED';
const ARGUMENT = 'ONCEPAY__SDK__ARGUMENT_INVALID';
const PAYOUT_ID = 'ONCEPAY__PAYOUT__ID_MALFORMED';
const AMOUNT = 'ONCEPAY__AMOUNT__MALFORMED';
const AMOUNT_RANGE = 'ONCEPAY__AMOUNT__OUT_OF_RANGE';
const RECEIPT_KEY = 'ONCEPAY__EXCEPTION__RECEIPT_KEY_INVALID';

/** Public methods that take no argument (nothing to malform). */
const NO_INPUT = new Set(['close', 'migrate']);
/** OncePay's members that are not public (TypeScript `private`): everything else must have rows below. */
const PRIVATE = new Set([
  'db',
  'connection',
  'chain',
  'merchantRow',
  'invoiceOf',
  'scopeOf',
  'runDeps',
  'executeDeps',
  'mustPayout',
  'view',
]);

interface Case {
  /** The method (or exported function) called. */
  method: string;
  call: (op: OncePay) => unknown;
  code: string;
  field: string;
}

describe('sdk contract: every public method refuses malformed input with an OncepayError naming the field', function () {
  this.timeout(120_000);
  let db: TestDb;
  let op: OncePay;
  const kp = Keypair.generate();
  const ok = Keypair.generate().publicKey;
  const okStr = ok.toBase58();
  const signers = { authority: kp };
  let tmp: string;

  const snapshot = () => schemaSnapshot(db);

  before(async () => {
    db = await createTestDb('sdk_contracts');
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-contracts-'));
    // Nothing here reaches a node: every call is refused before it would (the endpoint does not exist).
    op = OncePay.connect({ databaseUrl: db.url, schema: db.schema, rpcUrl: 'http://127.0.0.1:9' });
    await op.registerMerchant({ name: 'shop', merchant: okStr, vault: Keypair.generate().publicKey, tokenProgram: ok });
  });
  after(async () => {
    await op?.close();
    await db?.drop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  const cases: Case[] = [
    {
      method: 'connect',
      call: () => OncePay.connect({ rpcUrl: 'ftp://node' }),
      code: ARGUMENT,
      field: 'options.rpcUrl',
    },
    {
      method: 'connect',
      call: () => OncePay.connect({ databaseUrl: 'http://db' }),
      code: ARGUMENT,
      field: 'options.databaseUrl',
    },
    {
      method: 'connect',
      call: () => OncePay.connect({ programId: 'nope' }),
      code: ADDRESS,
      field: 'options.programId',
    },
    {
      method: 'connect',
      call: () => OncePay.connect({ commitment: 'processed' as never }),
      code: ARGUMENT,
      field: 'options.commitment',
    },
    {
      method: 'connect',
      call: () => OncePay.connect({ pollIntervalMs: -1 }),
      code: ARGUMENT,
      field: 'options.pollIntervalMs',
    },
    {
      method: 'connect',
      call: () => OncePay.connect({ maxConnections: 0 }),
      code: ARGUMENT,
      field: 'options.maxConnections',
    },
    {
      method: 'connect',
      call: () => OncePay.connect({ connection: {} as never }),
      code: ARGUMENT,
      field: 'options.connection',
    },
    { method: 'connect', call: () => OncePay.connect(5 as never), code: ARGUMENT, field: 'options' },
    { method: 'merchantAddress', call: (o) => o.merchantAddress('not base58 0OIl'), code: ADDRESS, field: 'authority' },
    {
      method: 'merchantAddress',
      call: (o) => o.merchantAddress(undefined as never),
      code: ADDRESS,
      field: 'authority',
    },
    {
      method: 'initMerchant',
      call: (o) => o.initMerchant({ authority: 'secret' as never }),
      code: KEYPAIR,
      field: 'authority',
    },
    {
      method: 'initMerchant',
      call: (o) => o.initMerchant({ authority: kp, payoutAuthority: 'x' }),
      code: ADDRESS,
      field: 'payoutAuthority',
    },
    {
      method: 'initMerchant',
      call: (o) => o.initMerchant({ authority: kp, payer: {} as never }),
      code: KEYPAIR,
      field: 'payer',
    },
    { method: 'initMerchant', call: (o) => o.initMerchant(null as never), code: ARGUMENT, field: 'options' },
    { method: 'getMerchant', call: (o) => o.getMerchant('1111'), code: ADDRESS, field: 'merchant' },
    { method: 'setPaused', call: (o) => o.setPaused('k' as never, true), code: KEYPAIR, field: 'authority' },
    { method: 'setPaused', call: (o) => o.setPaused(kp, 'yes' as never), code: ARGUMENT, field: 'paused' },
    {
      method: 'setPayoutAuthority',
      call: (o) => o.setPayoutAuthority(kp, 'x'),
      code: ADDRESS,
      field: 'payoutAuthority',
    },
    {
      method: 'setPayoutAuthority',
      call: (o) => o.setPayoutAuthority(null as never, ok),
      code: KEYPAIR,
      field: 'authority',
    },
    {
      method: 'createVault',
      call: (o) => o.createVault({ payer: kp, merchant: 'x', mint: ok }),
      code: ADDRESS,
      field: 'merchant',
    },
    {
      method: 'createVault',
      call: (o) => o.createVault({ payer: kp, merchant: ok, mint: 'x' }),
      code: ADDRESS,
      field: 'mint',
    },
    {
      method: 'createVault',
      call: (o) => o.createVault({ payer: 'x' as never, merchant: ok, mint: ok }),
      code: KEYPAIR,
      field: 'payer',
    },
    { method: 'checkVault', call: (o) => o.checkVault({ merchant: 'x' }), code: ADDRESS, field: 'merchant' },
    { method: 'checkVault', call: (o) => o.checkVault({ merchant: ok, mint: 'x' }), code: ADDRESS, field: 'mint' },
    { method: 'checkVault', call: (o) => o.checkVault({ merchant: ok, vault: 'x' }), code: ADDRESS, field: 'vault' },
    {
      method: 'registerMerchant',
      call: (o) => o.registerMerchant({ name: '', merchant: ok, vault: ok }),
      code: ARGUMENT,
      field: 'name',
    },
    {
      method: 'registerMerchant',
      call: (o) => o.registerMerchant({ name: 'n', merchant: 'x', vault: ok }),
      code: ADDRESS,
      field: 'merchant',
    },
    {
      method: 'registerMerchant',
      call: (o) => o.registerMerchant({ name: 'n', merchant: ok, vault: 'x' }),
      code: ADDRESS,
      field: 'vault',
    },
    {
      method: 'registerMerchant',
      call: (o) => o.registerMerchant({ name: 'n', merchant: ok, vault: ok, tokenProgram: 'x' }),
      code: ADDRESS,
      field: 'tokenProgram',
    },
    {
      method: 'registerMerchant',
      call: (o) => o.registerMerchant({ name: 'n', merchant: ok, vault: ok, apiKey: 'short' }),
      code: ARGUMENT,
      field: 'apiKey',
    },
    {
      method: 'createInvoice',
      call: (o) => o.createInvoice(okStr, { invoiceId: '', amount: 1n, mint: 'SOL', recipient: okStr }),
      code: 'ONCEPAY__INVOICE__ID_MALFORMED',
      field: 'input.invoiceId',
    },
    {
      method: 'createInvoice',
      call: (o) => o.createInvoice(okStr, { invoiceId: 'i', amount: '1' as never, mint: 'SOL', recipient: okStr }),
      code: AMOUNT,
      field: 'input.amount',
    },
    {
      method: 'createInvoice',
      call: (o) => o.createInvoice(okStr, { invoiceId: 'i', amount: 1n, mint: 'x', recipient: okStr }),
      code: ADDRESS,
      field: 'input.mint',
    },
    {
      method: 'createInvoice',
      call: (o) => o.createInvoice(okStr, { invoiceId: 'i', amount: 1n, mint: 'SOL' }),
      code: 'ONCEPAY__INVOICE__RECEIVING_ADDRESS_MISSING',
      field: 'input.recipient',
    },
    {
      method: 'createInvoice',
      call: (o) => o.createInvoice(okStr, { invoiceId: 'i', amount: 1n, mint: 'SOL', recipient: okStr, label: '\n' }),
      code: 'ONCEPAY__INVOICE__TEXT_INVALID',
      field: 'input.label',
    },
    {
      method: 'createInvoice',
      call: (o) =>
        o.createInvoice(okStr, { invoiceId: 'i', amount: 1n, mint: 'SOL', recipient: okStr, expiresAt: new Date(0) }),
      code: 'ONCEPAY__INVOICE__EXPIRY_INVALID',
      field: 'input.expiresAt',
    },
    {
      method: 'getInvoice',
      call: (o) => o.getInvoice(okStr, 5 as never),
      code: ARGUMENT,
      field: 'invoiceId',
    },
    {
      method: 'listInvoices',
      call: (o) => o.listInvoices(okStr, { cursor: 'nope' }),
      code: 'ONCEPAY__INVOICE__CURSOR_MALFORMED',
      field: 'cursor',
    },
    {
      method: 'listInvoices',
      call: (o) => o.listInvoices(okStr, { limit: 101 }),
      code: 'ONCEPAY__INVOICE__FILTER_INVALID',
      field: 'limit',
    },
    {
      method: 'waitForPayment',
      call: (o) => o.waitForPayment(okStr, 'i', { signal: 'x' as never }),
      code: ARGUMENT,
      field: 'signal',
    },
    {
      method: 'createPayout',
      call: (o) => o.createPayout('not a merchant!', { payoutId: 'p', recipient: ok, mint: ok, amount: 1n }),
      code: ADDRESS,
      field: 'merchant',
    },
    {
      method: 'createPayout',
      call: (o) => o.createPayout(okStr, { payoutId: '', recipient: ok, mint: ok, amount: 1n }),
      code: PAYOUT_ID,
      field: 'input.payoutId',
    },
    {
      method: 'createPayout',
      call: (o) => o.createPayout(okStr, { payoutId: 'p', recipient: 'x', mint: ok, amount: 1n }),
      code: ADDRESS,
      field: 'input.recipient',
    },
    {
      method: 'createPayout',
      call: (o) => o.createPayout(okStr, { payoutId: 'p', recipient: ok, mint: 'x', amount: 1n }),
      code: ADDRESS,
      field: 'input.mint',
    },
    {
      method: 'createPayout',
      call: (o) => o.createPayout(okStr, { payoutId: 'p', recipient: ok, mint: ok, amount: 5 as never }),
      code: AMOUNT,
      field: 'input.amount',
    },
    {
      method: 'createPayout',
      call: (o) => o.createPayout(okStr, { payoutId: 'p', recipient: ok, mint: ok, amount: 1n << 64n }),
      code: AMOUNT_RANGE,
      field: 'input.amount',
    },
    { method: 'createPayout', call: (o) => o.createPayout(okStr, null as never), code: ARGUMENT, field: 'input' },
    { method: 'executePayout', call: (o) => o.executePayout('abc', signers), code: ARGUMENT, field: 'payout' },
    {
      method: 'executePayout',
      call: (o) => o.executePayout('1', { authority: 'k' as never }),
      code: KEYPAIR,
      field: 'signers.authority',
    },
    {
      method: 'executePayout',
      call: (o) => o.executePayout('1', { authority: [] }),
      code: ARGUMENT,
      field: 'signers.authority',
    },
    {
      method: 'executePayout',
      call: (o) => o.executePayout('1', { authority: kp, payer: 'p' as never }),
      code: KEYPAIR,
      field: 'signers.payer',
    },
    {
      method: 'executePayout',
      call: (o) => o.executePayout('1', { authority: kp, signal: 'x' as never }),
      code: ARGUMENT,
      field: 'signers.signal',
    },
    {
      method: 'executePayout',
      call: (o) => o.executePayout('1', { authority: kp, retryFailed: 'y' as never }),
      code: ARGUMENT,
      field: 'signers.retryFailed',
    },
    { method: 'getPayout', call: (o) => o.getPayout('1 OR 1=1'), code: ARGUMENT, field: 'id' },
    {
      method: 'getPayout',
      call: (o) => o.getPayout('1', { merchant: 'm!' }),
      code: ADDRESS,
      field: 'options.merchant',
    },
    {
      method: 'resumePayouts',
      call: (o) => o.resumePayouts({ authority: 'k' as never }),
      code: KEYPAIR,
      field: 'signers.authority',
    },
    {
      method: 'resumePayouts',
      call: (o) => o.resumePayouts({ authority: kp, includePending: 'y' as never }),
      code: ARGUMENT,
      field: 'signers.includePending',
    },
    {
      method: 'startWorker',
      call: (o) => o.startWorker({ authority: kp, concurrency: 0 }),
      code: ARGUMENT,
      field: 'concurrency',
    },
    {
      method: 'startWorker',
      call: (o) => o.startWorker({ authority: 'k' as never, concurrency: 1 }),
      code: KEYPAIR,
      field: 'authority',
    },
    {
      method: 'startWorker',
      call: (o) => o.startWorker({ authority: kp, concurrency: 1, onFinished: 'f' as never }),
      code: ARGUMENT,
      field: 'onFinished',
    },
    {
      method: 'listExceptions',
      call: (o) => o.listExceptions({ kind: 'gift' as never }),
      code: ARGUMENT,
      field: 'filter.kind',
    },
    {
      method: 'listExceptions',
      call: (o) => o.listExceptions({ state: 'gone' as never }),
      code: ARGUMENT,
      field: 'filter.state',
    },
    {
      method: 'listExceptions',
      call: (o) => o.listExceptions({ invoiceId: 5 as never }),
      code: ARGUMENT,
      field: 'filter.invoiceId',
    },
    {
      method: 'listExceptions',
      call: (o) => o.listExceptions({ merchant: 'not a merchant!' }),
      code: ADDRESS,
      field: 'filter.merchant',
    },
    { method: 'getException', call: (o) => o.getException('x'), code: ARGUMENT, field: 'id' },
    { method: 'getException', call: (o) => o.getException('1', { merchant: 'x!' }), code: ADDRESS, field: 'merchant' },
    { method: 'refundException', call: (o) => o.refundException('x', signers), code: ARGUMENT, field: 'id' },
    {
      method: 'refundException',
      call: (o) => o.refundException('1', { authority: kp, to: 'not an address' }),
      code: ADDRESS,
      field: 'options.to',
    },
    {
      method: 'refundException',
      call: (o) => o.refundException('1', { authority: 'k' as never }),
      code: KEYPAIR,
      field: 'options.authority',
    },
    {
      method: 'refundException',
      call: (o) => o.refundException('1', { authority: kp, merchant: 'm!' }),
      code: ADDRESS,
      field: 'options.merchant',
    },
    { method: 'prepareRefund', call: (o) => o.prepareRefund('x'), code: ARGUMENT, field: 'id' },
    { method: 'prepareRefund', call: (o) => o.prepareRefund('1', { to: 'x' }), code: ADDRESS, field: 'options.to' },
    { method: 'resolveException', call: (o) => o.resolveException('x', 'why'), code: ARGUMENT, field: 'id' },
    { method: 'resolveException', call: (o) => o.resolveException('1', 5 as never), code: ARGUMENT, field: 'note' },
    {
      method: 'resolveException',
      call: (o) => o.resolveException('1', 'why', { merchant: 'm!' }),
      code: ADDRESS,
      field: 'options.merchant',
    },
    {
      method: 'exceptionTotals',
      call: (o) => o.exceptionTotals({ merchant: 'm!' }),
      code: ADDRESS,
      field: 'options.merchant',
    },
    // The package's exported functions.
    {
      method: 'readKeypairFile',
      call: () => readKeypairFile(path.join(tmp, 'missing.json')),
      code: KEYPAIR,
      field: 'path',
    },
    { method: 'readKeypairFile', call: () => readKeypairFile(5 as never), code: KEYPAIR, field: 'path' },
    {
      method: 'deriveOperation',
      call: () => deriveOperation({ programId: 'x', merchant: okStr, payoutId: 'p' }),
      code: ADDRESS,
      field: 'programId',
    },
    {
      method: 'deriveOpId',
      call: () => deriveOpId({ programId: okStr, merchant: 'x', payoutId: 'p' }),
      code: ADDRESS,
      field: 'merchant',
    },
    {
      method: 'deriveOpId',
      call: () => deriveOpId({ programId: okStr, merchant: okStr, payoutId: '\u0000' }),
      code: PAYOUT_ID,
      field: 'payoutId',
    },
    {
      method: 'refundPayoutId',
      call: () => refundPayoutId({ cluster: 'c', signature: 's', ixIndex: -1, innerIndex: -1 }),
      code: RECEIPT_KEY,
      field: 'receipt.ixIndex',
    },
    {
      method: 'refundPayoutId',
      call: () => refundPayoutId(null as never),
      code: RECEIPT_KEY,
      field: 'receipt.cluster',
    },
  ];

  it('has rows for every public method of OncePay', () => {
    const members = Object.getOwnPropertyNames(OncePay.prototype).filter((m) => m !== 'constructor');
    const covered = new Set(cases.map((c) => c.method));
    const missing = members.filter((m) => !PRIVATE.has(m) && !NO_INPUT.has(m) && !covered.has(m));
    expect(missing, 'public methods without a malformed-input row').to.deep.equal([]);
    expect(covered).to.include('connect');
  });

  it('each malformed call throws an OncepayError with the stable code, naming the field; nothing in the database changed', async () => {
    const before = await snapshot();
    const wrong: string[] = [];
    for (const c of cases) {
      let err: unknown;
      try {
        const r = c.call(op);
        if (r instanceof Promise) await r;
        else if (r && typeof (r as { stop?: unknown }).stop === 'function')
          await (r as { stop(): Promise<unknown> }).stop();
      } catch (e) {
        err = e;
      }
      const got =
        err instanceof OncepayError
          ? { code: err.code, field: err.context.field, named: err.message.includes(c.field) }
          : { code: String((err as Error)?.constructor?.name ?? err), field: undefined, named: false };
      if (got.code !== c.code || got.field !== c.field || !got.named)
        wrong.push(`${c.method} (${c.field}): got ${JSON.stringify(got)} — ${(err as Error)?.message ?? 'no error'}`);
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
    expect(await snapshot(), 'the database after the refusals').to.equal(before);
  });
});
