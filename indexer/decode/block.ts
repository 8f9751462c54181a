// A getBlock result (transactionDetails "full") → the receipts of all its transactions.
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from './codes';
import { expandBlock } from './input';
import { isRecord } from './json-shape';
import type { Receipt } from './receipt';
import { decodeTransaction, type DecodeOptions } from './transaction';

export interface DecodeBlockOptions extends DecodeOptions {
  /** getBlock results do not carry their own slot: pass the slot you asked for. */
  slot?: bigint | number;
}

/**
 * Receipts of every transaction of a getBlock result (transactionDetails "full"; an RPC envelope is accepted).
 * The block does not carry its own slot: pass `opts.slot` (else a `slot` field on the block is used, else null).
 */
export function decodeBlock(block: unknown, opts: DecodeBlockOptions = {}): Receipt[] {
  let b = block;
  if (isRecord(b) && 'jsonrpc' in b) b = b.result;
  if (!isRecord(b) || !Array.isArray(b.transactions)) {
    throw new OncepayError(
      DECODE_CODES.MALFORMED_BLOCK,
      'block has no transactions array (fetch getBlock with transactionDetails "full")',
    );
  }
  const slot = opts.slot === undefined ? undefined : BigInt(opts.slot);
  return expandBlock(b, slot).flatMap((tx, i) => {
    try {
      return decodeTransaction(tx, { cluster: opts.cluster });
    } catch (e) {
      // one bad transaction fails the block (the caller must not pass it); say which one
      if (e instanceof OncepayError) {
        throw new OncepayError(e.code, `transactions[${i}]: ${e.message.replace(`${e.code}: `, '')}`, { ...e.context, transaction: i });
      }
      throw e;
    }
  });
}
