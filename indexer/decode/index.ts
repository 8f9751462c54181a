// The decoder: transaction JSON (as the RPC returns it) → receipts. Pure: no I/O, no clock, no randomness.
export { DECODE_CODES } from '../../common/errors/codes';
export type { Receipt, ReceiptKind, ReceiptProgram } from './receipt';
export { TOP_LEVEL } from './receipt';
export { readTransactionsInput, readTransactionsInputLenient } from './input';
export type { InputError, LenientInput } from './input';
export { decodeTransaction } from './transaction';
export { decodeBlock } from './block';
export type { DecodeOptions } from './transaction';
export type { DecodeBlockOptions } from './block';
export { receiptToJson, receiptToJsonObject } from './receipt-json';
export type { ReceiptJson } from './receipt-json';
export { parseJsonExact } from './json-reader';
