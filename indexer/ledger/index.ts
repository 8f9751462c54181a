// The indexer's ledger. `createLedger({ db })` → { applyBatch, pipeline, getCheckpoint, setCheckpoint, createInvoice, getInvoice, report }.
export { applyInOrder, createLedger } from './ledger';
export type { BatchPipeline, Ledger, LedgerDeps } from './ledger';
export { LEDGER_CODES } from '../../common/errors/codes';
export { fulfilmentOpId, invoicePaidPayload } from './fulfilment';
export { RECEIPT_SOURCES } from './types';
export type {
  ApplyBatchInput,
  ApplyBatchResult,
  CreditedAmount,
  RaisedException,
  RejectedReceipt,
  NewInvoice,
  InvoiceRow,
  LedgerReport,
  ReceiptSource,
} from './types';
