export { createMatcher, matchBatch, matchReceipt, selectInvoice } from './match';
export type { Matcher } from './match';
export { EXCEPTION_KINDS } from './types';
export type { ExceptionKind, InvoiceState, MatchReceipt, MatchException, ReceiptOutcome, BatchOutcome } from './types';
