// The SDK's public shapes. Amounts and slots are bigint; addresses are base58 strings. Nothing here refers to a
// database driver's types, so a merchant's project type-checks with only this package and @solana/web3.js.
import type { Commitment, Connection, Keypair, PublicKey } from '@solana/web3.js';

export type { MerchantAccount } from '../app/merchant/account';
export type { MerchantInit, MerchantChange } from '../app/merchant/lifecycle';
export type { VaultCreated, VaultCheck } from '../app/vault/vault';
export type { VaultFinding, FindingSeverity } from '../app/vault/findings';
export type {
  ExceptionKind,
  ExceptionState,
  ExceptionReceipt,
  ExceptionFilter,
  ExceptionTotals,
} from '../app/exception/types';
import type { ExceptionKind, ExceptionReceipt, ExceptionState } from '../app/exception/types';

export interface OncePayOptions {
  /** PostgreSQL URL; default: DATABASE_URL (and without it, the embedded local server of a source checkout). */
  databaseUrl?: string;
  /** Use this PostgreSQL schema (created by `migrate()`); default: the server's search_path. */
  schema?: string;
  /** Maximum connections of the SDK's pool (default 10). */
  maxConnections?: number;
  /** Solana JSON-RPC endpoint; needed by every on-chain call. */
  rpcUrl?: string;
  /** Or a web3.js Connection of your own (takes precedence over rpcUrl). */
  connection?: Connection;
  /** oncepay program id (default: the deployed program). */
  programId?: PublicKey | string;
  /** Commitment at which a transaction counts as landed: `confirmed` (default) or `finalized`. */
  commitment?: Extract<Commitment, 'confirmed' | 'finalized'>;
  /** Pause between two looks at the chain, in ms (default 400). */
  pollIntervalMs?: number;
}

/** A merchant as the payout database knows it: what its payouts are paid from. */
export interface RegisteredMerchant {
  /** Row id (the API's merchant id). */
  id: string;
  name: string;
  programId: string;
  /** The merchant config PDA. */
  merchant: string;
  vault: string;
  tokenProgram: string;
}

export type PayoutState = 'pending' | 'executing' | 'succeeded' | 'conflict' | 'failed';

/** A payout and, once executed, its on-chain proof. */
export interface Payout {
  /** Row id (`oncepay payout show <id>`). */
  id: string;
  /** Your own id of the business operation. */
  payoutId: string;
  /** The merchant config PDA. */
  merchant: string;
  state: PayoutState;
  recipient: string;
  mint: string;
  amount: bigint;
  /** sha256("oncepay:payout:v1" ‖ program ‖ merchant ‖ payoutId), hex. */
  opId: string;
  /** The op account ["op", merchant, opId]: it exists on-chain iff the payout executed. */
  opPda: string;
  /** Set once executed: the transaction that paid, its slot, and the op account that proves it. */
  proof: { signature: string | null; slot: bigint | null; opPda: string } | null;
  /** Signed attempts so far. */
  attempts: number;
  /** For `conflict`: what the op account records instead. */
  conflict: unknown;
  error: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** A pool of payout workers running in this process (OncePay.startWorker). */
export interface PayoutWorker {
  readonly name: string;
  /** Row ids of the payouts being executed right now. */
  inFlight(): string[];
  /**
   * Ids of the registered merchants whose payouts it claims: those whose on-chain payout authority is one of its
   * keys (read at start and every 30 s). Other merchants' payouts are never claimed.
   */
  merchants(): string[];
  /** Stop claiming; let in-flight payouts finish for up to graceMs, then hand the rest back for another worker. */
  stop(opts?: { graceMs?: number }): Promise<{ handedBack: string[] }>;
}

export interface PayoutInput {
  /** Your id of this business operation (1–200 UTF-8 bytes): the same id is never paid twice. */
  payoutId: string;
  /** Recipient token account. */
  recipient: PublicKey | string;
  mint: PublicKey | string;
  /** Base units. */
  amount: bigint;
}

/** Who signs payouts, and who pays fees. */
export interface PayoutSigners {
  /**
   * The merchant's payout authority; or several keys (e.g. of several merchants): each payout is signed with the
   * one its merchant's on-chain config names, and a payout none of them may sign is refused before signing.
   */
  authority: Keypair | Keypair[];
  /** Fee payer (default: the authority). */
  payer?: Keypair;
  /** Stop waiting (the journal keeps every attempt: call again, or `resumePayouts`, later). */
  signal?: AbortSignal;
  /** Re-open a payout that failed with a program error (e.g. after topping up the vault). */
  retryFailed?: boolean;
}

/** An exception the indexer recorded (money it kept), and how it was settled. */
export interface ExceptionView {
  id: string;
  kind: ExceptionKind;
  invoiceId: string | null;
  /** The amount kept (the excess of an overpayment, a whole late payment…): what a refund pays. */
  amount: bigint;
  detail: string | null;
  state: ExceptionState;
  /** The transfer it came from: its key, the sender's token account (`source`) and where it arrived. */
  receipt: ExceptionReceipt;
  /** The refund payout, with its on-chain proof once executed. */
  refund: Payout | null;
  /** The operator's note of a resolved exception. */
  note: string | null;
  settledAt: Date | null;
  createdAt: Date;
}

export type {
  InvoiceInput,
  InvoiceStatus,
  InvoiceReceipt,
  InvoiceException,
  InvoiceFulfilment,
} from '../app/invoice/types';
import type { InvoiceException, InvoiceFulfilment, InvoiceReceipt } from '../app/invoice/types';
import type { InvoiceView } from '../app/invoice/view';

/** The fields an invoice has alike in the API's JSON and here: one definition, app/invoice/view.ts. */
type InvoiceFieldsAsInApi = Omit<
  InvoiceView,
  | 'id'
  | 'amount'
  | 'creditedAmount'
  | 'expiresAt'
  | 'checkoutUrl'
  | 'createdAt'
  | 'paidAt'
  | 'receipts'
  | 'exceptions'
  | 'fulfilment'
>;

/**
 * An invoice: what was asked (amount in base units and in tokens), its Solana Pay request, what the ledger did. The
 * API's view of it (app/invoice/view.ts) with amounts as bigint and times as Date.
 */
export interface Invoice extends InvoiceFieldsAsInApi {
  amount: bigint;
  creditedAmount: bigint;
  expiresAt: Date | null;
  /** The payer's checkout page, relative to where the API is served: /pay/<unguessable id>. */
  checkoutPath: string;
  createdAt: Date;
  paidAt: Date | null;
  receipts: InvoiceReceipt[];
  exceptions: InvoiceException[];
  fulfilment: InvoiceFulfilment | null;
}

/** A page of invoices, newest first; pass nextCursor back as `cursor` for the next one (null: the last page). */
export interface InvoicePage {
  data: Invoice[];
  nextCursor: string | null;
}
