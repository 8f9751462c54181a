// Fetch + decode a list of slots with bounded concurrency, one outcome per slot, in slot order. Used by the
// scanner and the backfill alike, so both read blocks exactly the same way.
import type { Receipt } from '../decode/receipt';
import { Commitment, RpcCallError, RpcClient } from '../rpc';
import { SOURCE_CODES } from '../../common/errors/codes';
import type { SlotOutcome } from './scan-plan';

/** Decode one `getBlock` result (json encoding) into receipts; throws if the block is not decodable. */
export type DecodeBlockFn = (block: unknown, slot: number) => Receipt[];

export interface ReadSlotsInput {
  rpc: Pick<RpcClient, 'getBlock'>;
  decode: DecodeBlockFn;
  commitment: Commitment;
  slots: readonly number[];
  concurrency: number;
  signal?: AbortSignal;
}

export async function readSlots(i: ReadSlotsInput): Promise<Array<SlotOutcome<Receipt>>> {
  const out: Array<SlotOutcome<Receipt>> = new Array(i.slots.length);
  let next = 0;
  async function worker(): Promise<void> {
    while (next < i.slots.length) {
      const k = next++;
      out[k] = await readOne(i, i.slots[k]);
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(i.concurrency, i.slots.length)) }, worker));
  return out;
}

async function readOne(i: ReadSlotsInput, slot: number): Promise<SlotOutcome<Receipt>> {
  let r;
  try {
    r = await i.rpc.getBlock(slot, i.commitment, { signal: i.signal });
  } catch (e) {
    // A caller's abort is not a property of the slot: let it end the pass.
    if (i.signal?.aborted) throw e;
    const code = e instanceof RpcCallError ? e.code : SOURCE_CODES.BLOCK_FETCH_FAILED;
    return {
      slot,
      status: 'failed',
      code: SOURCE_CODES.BLOCK_FETCH_FAILED,
      message: `${code}: ${(e as Error).message}`,
    };
  }
  if (r.status === 'skipped') return { slot, status: 'skipped' };
  if (r.status === 'not_available')
    return { slot, status: 'failed', code: SOURCE_CODES.BLOCK_NOT_AVAILABLE, message: r.message };
  try {
    return { slot, status: 'ok', receipts: i.decode(r.block, slot) };
  } catch (e) {
    return { slot, status: 'failed', code: SOURCE_CODES.BLOCK_UNDECODABLE, message: (e as Error).message };
  }
}
