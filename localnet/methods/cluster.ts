// Cluster-level methods: slots, heights, blockhashes, fees, airdrops, version and health.
import { RPC, RpcError, invalidParams } from '../rpc-error';
import { MAX_BLOCKHASH_AGE } from '../chain';
import { API_VERSION, Handler, commitmentOf, config, pubkeyParam, stringParam, withContext } from './context';

const SLOTS_PER_EPOCH = 432_000;
/**
 * Agave 3.1.4's feature-set id (getVersion's "feature-set"): the first 4 bytes, little-endian, of the sha256 over
 * its sorted feature ids (agave-feature-set's ID). LiteSVM 1.5 runs Agave 3's SVM with those features active.
 */
const FEATURE_SET_ID = 2086771155;

export const clusterMethods: Record<string, Handler> = {
  getSlot: ({ chain }, p) => chain.slotAt(commitmentOf(config(p, 0))),
  getBlockHeight: ({ chain }, p) => chain.blockHeightAt(commitmentOf(config(p, 0))),
  getTransactionCount: ({ chain }) => chain.transactionCount(),
  getFirstAvailableBlock: () => 0,
  getEpochInfo: ({ chain }, p) => {
    const c = commitmentOf(config(p, 0));
    const slot = chain.slotAt(c);
    return {
      absoluteSlot: slot,
      blockHeight: chain.blockHeightAt(c),
      epoch: Math.floor(slot / SLOTS_PER_EPOCH),
      slotIndex: slot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount: chain.transactionCount(),
    };
  },
  getEpochSchedule: () => ({
    firstNormalEpoch: 0,
    firstNormalSlot: 0,
    leaderScheduleSlotOffset: SLOTS_PER_EPOCH,
    slotsPerEpoch: SLOTS_PER_EPOCH,
    warmup: false,
  }),
  getVersion: () => ({ 'feature-set': FEATURE_SET_ID, 'solana-core': API_VERSION }),
  getHealth: () => 'ok',
  getGenesisHash: ({ chain }) => chain.genesisHash,
  getIdentity: ({ chain }) => ({ identity: chain.faucet.publicKey.toBase58() }),
  // One node, always the leader.
  getSlotLeader: ({ chain }) => chain.faucet.publicKey.toBase58(),
  getClusterNodes: ({ chain }) => [
    {
      pubkey: chain.faucet.publicKey.toBase58(),
      gossip: null,
      tpu: null,
      rpc: null,
      version: API_VERSION,
      featureSet: FEATURE_SET_ID,
      shredVersion: 0,
    },
  ],
  minimumLedgerSlot: () => 0,
  getLatestBlockhash: (ctx, p) => {
    const c = commitmentOf(config(p, 0));
    const b = ctx.chain.blockAt(c);
    return withContext(ctx, c, { blockhash: b.blockhash, lastValidBlockHeight: b.blockHeight + MAX_BLOCKHASH_AGE });
  },
  isBlockhashValid: (ctx, p) => {
    const bh = stringParam(p, 0, 'blockhash');
    const c = commitmentOf(config(p, 1));
    return withContext(ctx, c, ctx.chain.isBlockhashValidAt(bh, c));
  },
  getFeeForMessage: (ctx, p) => {
    const text = stringParam(p, 0, 'base64 message');
    const bytes = Uint8Array.from(Buffer.from(text, 'base64'));
    if (bytes.length < 36) throw invalidParams('invalid message: too short');
    return withContext(ctx, commitmentOf(config(p, 1)), ctx.chain.feeForMessage(bytes));
  },
  getRecentPrioritizationFees: () => [],
  getMinimumBalanceForRentExemption: ({ chain }, p) => {
    const len = p[0];
    if (typeof len !== 'number' || !Number.isSafeInteger(len) || len < 0)
      throw invalidParams('Invalid params: invalid type: expected usize');
    return chain.svm.minimumBalanceForRentExemption(BigInt(len));
  },
  requestAirdrop: ({ chain }, p) => {
    const to = pubkeyParam(p, 0);
    const lamports = p[1];
    if (typeof lamports !== 'number' || !Number.isSafeInteger(lamports) || lamports <= 0) {
      throw invalidParams('Invalid params: invalid type: expected u64 lamports');
    }
    try {
      return chain.airdrop(to, BigInt(lamports));
    } catch (e) {
      if (e instanceof RpcError && e.code === RPC.SEND_TRANSACTION_PREFLIGHT_FAILURE)
        throw new RpcError(RPC.INTERNAL, 'Internal error');
      throw e;
    }
  },
};
