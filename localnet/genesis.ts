// Genesis and restore: the LiteSVM the chain starts from. With a ledger that holds a chain, its state snapshot and
// blocks come back; otherwise a fresh genesis (a funded faucet, block 0) is made and, with a ledger, written first.
import crypto from 'node:crypto';
import bs58 from 'bs58';
import type { Keypair } from '@solana/web3.js';
import { Account, LiteSVM } from 'litesvm';
import { OncepayError } from '../common/errors';
import { logger } from '../common/log';
import type { BlockIndex } from './block-index';
import { LOCALNET_CODES } from '../common/errors/codes';
import { nativeOf } from './execution';
import type { LedgerStore } from './persist';
import { SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID } from './program-ids';
import { BPF_LOADER_2_ID, TokenProgramChoice, legacyTokenProgram } from './token-program';
import type { BlockRecord } from './types';

const FAUCET_LAMPORTS = 500_000_000n * 1_000_000_000n;

export interface ProgramSpec {
  programId: string;
  path: string;
}

export function sha(...parts: Array<string | Uint8Array>): Uint8Array {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Block 0 of a fresh chain. */
export function genesisBlock(genesisHash: string, blockTime: number): BlockRecord {
  return {
    slot: 0,
    parentSlot: 0,
    blockhash: genesisHash,
    previousBlockhash: bs58.encode(new Uint8Array(32)),
    blockHeight: 0,
    blockTime,
    txs: [],
  };
}

/**
 * The chain's starting state, its blocks indexed into `blocks`: restored from `ledger` when it holds a chain,
 * else a fresh genesis. Programs are loaded either way; signatures are verified, blockhash age is the chain's.
 */
export function openGenesis(opts: {
  ledger: LedgerStore | null;
  faucet: Keypair;
  programs: ProgramSpec[];
  blocks: BlockIndex;
  finalityDepth: number;
  /** The SPL Token program at TokenkegQ…: LiteSVM's p-token (default) or the validator's legacy one. */
  tokenProgram?: TokenProgramChoice;
}): { svm: LiteSVM; genesisHash: string } {
  const { ledger, faucet, blocks } = opts;
  const log = logger('localnet.chain');
  const loaded = ledger?.load() ?? null;
  let svm: LiteSVM;
  let genesisHash: string;
  if (loaded && (loaded.blocks.length === 0 || !loaded.snapshot)) {
    // Never start a fresh chain over a ledger we cannot read: that would silently forget its history.
    throw new OncepayError(
      LOCALNET_CODES.LEDGER_CORRUPT,
      `ledger ${ledger?.dir} has no ${loaded.snapshot ? 'blocks' : 'state.bin'}; start with --reset to wipe it`,
    );
  }
  if (loaded && loaded.snapshot) {
    svm = LiteSVM.fromBytes(loaded.snapshot);
    genesisHash = loaded.genesisHash;
    blocks.restore(loaded.blocks);
    blocks.advanceFinality(opts.finalityDepth);
    log.info({ dir: ledger?.dir, tip: blocks.tip().slot, blocks: blocks.blockCount() }, 'ledger restored');
  } else {
    svm = new LiteSVM();
    genesisHash = bs58.encode(sha('oncepay-localnet-genesis', crypto.randomBytes(32)));
    svm.setAccount({
      address: faucet.publicKey.toBase58() as never,
      lamports: FAUCET_LAMPORTS as never,
      programAddress: SYSTEM_PROGRAM_ID as never,
      executable: false,
      data: new Uint8Array(0),
      space: 0n,
    } as never);
    const genesis = genesisBlock(genesisHash, Math.floor(Date.now() / 1000));
    blocks.add(genesis);
    if (ledger) {
      // genesis.json is written last: it marks the ledger as complete (without it, load() starts afresh).
      ledger.wipe();
      ledger.writeSnapshot(svm.toBytes(), genesis);
      ledger.appendBlock(genesis);
      ledger.init(genesisHash);
    }
  }
  const n = nativeOf(svm);
  n.setSigverify(true);
  // Blockhash age is ours: LiteSVM only knows its latest blockhash, a node accepts the last 150 blocks' hashes.
  n.setBlockhashCheck(false);
  if (opts.tokenProgram === 'legacy') {
    // As solana-test-validator 3.1's genesis has it: spl_token-3.5.0 owned by BPF loader 2.
    svm.addProgramWithLoader(TOKEN_PROGRAM_ID as never, legacyTokenProgram(), BPF_LOADER_2_ID as never);
  }
  for (const p of opts.programs) {
    try {
      svm.addProgramFromFile(p.programId as never, p.path);
    } catch (e) {
      throw new OncepayError(
        LOCALNET_CODES.PROGRAM_LOAD_FAILED,
        `cannot load program ${p.path}: ${(e as Error).message}`,
        { ...p },
      );
    }
  }
  // A node's genesis accounts are rent exempt: rentEpoch u64::MAX, as every account a transaction writes (LiteSVM
  // loads programs with 0).
  const ids = [...(opts.tokenProgram === 'legacy' ? [TOKEN_PROGRAM_ID] : []), ...opts.programs.map((p) => p.programId)];
  for (const id of ids) exemptRentEpoch(svm, id);
  return { svm, genesisHash };
}

const RENT_EXEMPT_RENT_EPOCH = 2n ** 64n - 1n;

function exemptRentEpoch(svm: LiteSVM, address: string): void {
  const n = nativeOf(svm);
  const key = bs58.decode(address);
  const a = n.getAccount(key);
  if (!a || a.rentEpoch() === RENT_EXEMPT_RENT_EPOCH) return;
  n.setAccount(key, new Account(a.lamports(), a.data(), a.owner(), a.executable(), RENT_EXEMPT_RENT_EPOCH));
}
