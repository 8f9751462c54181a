// A getBlock result (transactionDetails "full") → the receipts of all its transactions.
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from '../../common/errors/codes';
import { expandBlock } from './input';
import { isRecord } from './json-shape';
import type { Receipt } from './receipt';
import { decodeTransaction, type DecodeOptions } from './transaction';

export interface DecodeBlockOptions extends DecodeOptions {
  /** getBlock results do not carry their own slot: pass the slot you asked for. */
  slot?: bigint | number;
  /**
   * A transaction whose transfers disagree with its own token balances (ONCEPAY__DECODE__BALANCE_MISMATCH) is
   * refused: with this callback it contributes no receipts, is reported here, and the rest of the block is
   * decoded (a finalized block cannot be fixed by reading it again, and one such transaction must not stop a
   * scanner). Without it, it fails the block like any other refused transaction.
   */
  onBalanceMismatch?: (refused: OncepayError, transactionIndex: number) => void;
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
      if (e instanceof OncepayError) {
        const named = new OncepayError(e.code, `transactions[${i}]: ${e.message.replace(`${e.code}: `, '')}`, {
          ...e.context,
          transaction: i,
        });
        if (e.code === DECODE_CODES.BALANCE_MISMATCH && opts.onBalanceMismatch) {
          opts.onBalanceMismatch(named, i);
          return [];
        }
        // one bad transaction fails the block (the caller must not pass it); say which one
        throw named;
      }
      throw e;
    }
  });
}
