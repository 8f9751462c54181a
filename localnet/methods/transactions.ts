// Transaction methods: sendTransaction, simulateTransaction, getSignatureStatuses, getTransaction,
// getSignaturesForAddress.
import { encodeAccount } from '../encode';
import { invalidParams } from '../rpc-error';
import { decodeWireText } from '../wire';
import { isOncepayError } from '../../common/errors';
import { Handler, atLeastConfirmed, commitmentOf, config, pubkeyParam, stringParam, withContext } from './context';
import { encodeTxWithMeta, encodingOf, maxVersionOf } from './records';

const MAX_STATUSES = 256;
const MAX_SIGNATURES_LIMIT = 1000;

function wireBytes(p: unknown[], c: Record<string, unknown>): Uint8Array {
  const text = stringParam(p, 0, 'encoded transaction');
  const enc = c.encoding ?? 'base58';
  if (enc !== 'base58' && enc !== 'base64')
    throw invalidParams(`Invalid params: unsupported encoding: ${String(enc)}. Supported encodings: base58, base64`);
  try {
    return decodeWireText(text, enc);
  } catch (e) {
    if (isOncepayError(e)) throw invalidParams(`invalid ${enc} encoding: ${(e as Error).message}`);
    throw e;
  }
}

export const transactionMethods: Record<string, Handler> = {
  sendTransaction: ({ chain }, p) => {
    const c = config(p, 1);
    return chain.submit(wireBytes(p, c), {
      skipPreflight: c.skipPreflight === true,
      preflightCommitment: commitmentOf({ commitment: c.preflightCommitment }),
    });
  },
  simulateTransaction: (ctx, p) => {
    const c = config(p, 1);
    if (c.sigVerify === true && c.replaceRecentBlockhash === true) {
      throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
    }
    const accountsCfg = c.accounts as { addresses?: unknown; encoding?: unknown } | undefined;
    const addresses = Array.isArray(accountsCfg?.addresses) ? (accountsCfg!.addresses as string[]) : undefined;
    const commitment = commitmentOf(c);
    const r = ctx.chain.simulate(wireBytes(p, c), {
      sigVerify: c.sigVerify === true,
      replaceRecentBlockhash: c.replaceRecentBlockhash === true,
      accounts: addresses,
      commitment,
    });
    const accEnc = accountsCfg?.encoding === 'jsonParsed' ? 'jsonParsed' : 'base64';
    // Agave 3.1's RpcSimulateTransactionResult, every field present (null when absent).
    return withContext(ctx, commitment, {
      accounts: addresses
        ? addresses.map((a) => {
            const s = r.err === null ? r.postAccounts.get(a) : null;
            return s ? encodeAccount(s, accEnc, ctx.chain.decimalsOf) : null;
          })
        : null,
      err: r.err,
      fee: r.fee,
      innerInstructions: c.innerInstructions === true ? r.innerInstructions : null,
      loadedAccountsDataSize: r.loadedAccountsDataSize,
      loadedAddresses: r.loadedAddresses,
      logs: r.logs,
      postBalances: r.postBalances,
      postTokenBalances: r.postTokenBalances,
      preBalances: r.preBalances,
      preTokenBalances: r.preTokenBalances,
      replacementBlockhash: r.replacementBlockhash,
      returnData: r.returnData,
      unitsConsumed: r.unitsConsumed,
    });
  },
  getSignatureStatuses: (ctx, p) => {
    const sigs = p[0];
    if (!Array.isArray(sigs) || sigs.some((s) => typeof s !== 'string'))
      throw invalidParams('Invalid params: expected an array of signatures');
    if (sigs.length > MAX_STATUSES) throw invalidParams(`Too many inputs provided; max ${MAX_STATUSES}`);
    const search = config(p, 1).searchTransactionHistory === true && !ctx.historyless;
    return withContext(
      ctx,
      'processed',
      sigs.map((s: string) => (ctx.unseen ? null : ctx.chain.signatureStatus(s, search))),
    );
  },
  getTransaction: ({ chain }, p) => {
    const sig = stringParam(p, 0, 'signature');
    const c = typeof p[1] === 'string' ? { encoding: p[1] } : config(p, 1);
    const cm = atLeastConfirmed(c);
    const encoding = encodingOf(c, 'json');
    const maxVersion = maxVersionOf(c);
    const found = chain.findTransaction(sig);
    if (!found || (cm === 'finalized' && found.block.slot > chain.finalizedSlot())) return null;
    return {
      blockTime: found.block.blockTime,
      slot: found.block.slot,
      ...encodeTxWithMeta(found.record, encoding, maxVersion),
    };
  },
  getSignaturesForAddress: ({ chain }, p) => {
    const address = pubkeyParam(p, 0);
    const c = config(p, 1);
    const cm = atLeastConfirmed(c);
    const limit = c.limit ?? MAX_SIGNATURES_LIMIT;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_SIGNATURES_LIMIT) {
      throw invalidParams('Invalid limit; max 1000');
    }
    const finalized = chain.finalizedSlot();
    return chain
      .signaturesForAddress(address, {
        before: c.before as string | undefined,
        until: c.until as string | undefined,
        limit: cm === 'finalized' ? MAX_SIGNATURES_LIMIT * 4 : limit,
      })
      .filter((x) => cm !== 'finalized' || x.block.slot <= finalized)
      .slice(0, limit)
      .map(({ record, block }) => ({
        blockTime: block.blockTime,
        confirmationStatus: block.slot <= finalized ? 'finalized' : 'confirmed',
        err: record.meta.err,
        memo: null,
        signature: record.signature,
        slot: block.slot,
      }));
  },
};
