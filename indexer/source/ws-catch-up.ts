// The catch-up: every finalized, succeeded transaction naming some addresses from a slot on, listed page by page
// with getSignaturesForAddress (newest first; ws-plan.ts catchUpPage decides where a listing ends). With
// `minContextSlot`, only from a node whose finalized slot has reached it (else the call fails: no silent short list).
import type { RpcClient } from '../rpc';
import type { Observed } from './ws-apply';
import { catchUpPage, type SignatureInfo } from './ws-plan';
import { OncepayError, RPC_CODES } from '../../common/errors';

const PAGE = 1000;

/** Lists the signatures of `addresses` from slot `from` on, handing each page's to `read` (as finalized). */
export async function catchUp(
  rpc: Pick<RpcClient, 'call'>,
  addresses: readonly string[],
  from: number,
  read: (observed: Observed[]) => void,
  o: { signal: AbortSignal; minContextSlot?: number },
): Promise<void> {
  for (const address of addresses) {
    let before: string | null = null;
    do {
      const config = {
        commitment: 'finalized',
        limit: PAGE,
        ...(before === null ? {} : { before }),
        ...(o.minContextSlot === undefined ? {} : { minContextSlot: o.minContextSlot }),
      };
      const page = await rpc.call<SignatureInfo[]>('getSignaturesForAddress', [address, config], { signal: o.signal });
      if (!Array.isArray(page))
        throw new OncepayError(RPC_CODES.MALFORMED_RESPONSE, `getSignaturesForAddress(${address}): not a list`);
      const step = catchUpPage(page, from, PAGE);
      read(step.read.map((r) => ({ ...r, commitment: 'finalized' as const })));
      before = step.before;
    } while (before !== null);
  }
}
