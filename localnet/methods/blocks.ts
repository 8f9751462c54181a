// Block methods: getBlock, getBlocks, getBlocksWithLimit, getBlockTime.
import { RPC, RpcError, invalidParams } from '../rpc-error';
import type { BlockRecord, Commitment } from '../types';
import type { Chain } from '../chain';
import { Handler, atLeastConfirmed, config, slotParam } from './context';
import { encodeTxAccounts, encodeTxWithMeta, encodingOf, maxVersionOf } from './records';

const MAX_GET_BLOCKS_RANGE = 500_000;

/** The block at `slot`, or the node's error for a slot beyond the commitment (-32004) or skipped (-32007). */
export function blockOrError(chain: Chain, slot: number, c: Commitment): BlockRecord {
  if (slot > chain.slotAt(c)) throw new RpcError(RPC.BLOCK_NOT_AVAILABLE, `Block not available for slot ${slot}`);
  const b = chain.getBlock(slot);
  if (!b)
    throw new RpcError(RPC.SLOT_SKIPPED, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
  return b;
}

export const blockMethods: Record<string, Handler> = {
  getBlock: ({ chain }, p) => {
    const slot = slotParam(p, 0);
    const c = typeof p[1] === 'string' ? { encoding: p[1] } : config(p, 1);
    const b = blockOrError(chain, slot, atLeastConfirmed(c));
    const encoding = encodingOf(c, 'json');
    const maxVersion = maxVersionOf(c);
    const details = c.transactionDetails ?? 'full';
    const out: Record<string, unknown> = {
      blockHeight: b.blockHeight,
      blockTime: b.blockTime,
      blockhash: b.blockhash,
      parentSlot: b.parentSlot,
      previousBlockhash: b.previousBlockhash,
    };
    switch (details) {
      case 'full':
        out.transactions = b.txs.map((t) => encodeTxWithMeta(t, encoding, maxVersion, c.rewards !== false));
        break;
      case 'signatures':
        out.signatures = b.txs.map((t) => t.signature);
        break;
      case 'accounts':
        out.transactions = b.txs.map((t) => encodeTxAccounts(t, maxVersion));
        break;
      case 'none':
        break;
      default:
        throw invalidParams(
          `Invalid params: unknown variant \`${String(details)}\`, expected one of \`full\`, \`signatures\`, \`none\`, \`accounts\``,
        );
    }
    if (c.rewards !== false) out.rewards = [];
    return out;
  },
  getBlocks: ({ chain }, p) => {
    const start = slotParam(p, 0);
    const hasEnd = typeof p[1] === 'number';
    const c = config(p, hasEnd ? 2 : 1);
    const top = chain.slotAt(atLeastConfirmed(c));
    const end = hasEnd ? Math.min(slotParam(p, 1), top) : top;
    if (hasEnd && slotParam(p, 1) - start > MAX_GET_BLOCKS_RANGE) {
      throw invalidParams(`Slot range too large; max ${MAX_GET_BLOCKS_RANGE}`);
    }
    return end < start ? [] : chain.blockSlots(start, end);
  },
  getBlocksWithLimit: ({ chain }, p) => {
    const start = slotParam(p, 0);
    const limit = slotParam(p, 1);
    if (limit > MAX_GET_BLOCKS_RANGE) throw invalidParams(`Limit too large; max ${MAX_GET_BLOCKS_RANGE}`);
    const top = chain.slotAt(atLeastConfirmed(config(p, 2)));
    return chain.blockSlots(start, top).slice(0, limit);
  },
  getBlockTime: ({ chain }, p) => {
    const slot = slotParam(p, 0);
    return blockOrError(chain, slot, 'confirmed').blockTime;
  },
};
