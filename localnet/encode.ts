// Pure: LiteSVM results and our ledger records → the RPC's JSON shapes (getTransaction, getBlock, getAccountInfo,
// simulation errors). No I/O here; unit-tested in tests/localnet/encode.test.ts.
import bs58 from 'bs58';
import { parseInstruction } from './parsed';
import { TOKEN_PROGRAM_ID } from './program-ids';
import { decodeMint, decodeTokenAccount, uiTokenAmount } from './token-state';
import { LoadedAddresses, WireTransaction, allAccountKeys, isSigner, isWritable } from './wire';

// Order = LiteSVM's (Agave's) enum discriminants: never reorder.
export const TX_ERR_NAMES = [
  'AccountInUse',
  'AccountLoadedTwice',
  'AccountNotFound',
  'ProgramAccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'CallChainTooDeep',
  'MissingSignatureForFee',
  'InvalidAccountIndex',
  'SignatureFailure',
  'InvalidProgramForExecution',
  'SanitizeFailure',
  'ClusterMaintenance',
  'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit',
  'UnsupportedVersion',
  'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'InvalidRentPayingAccount',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit',
  'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit',
  'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit',
  'CommitCancelled',
] as const;
export const IX_ERR_NAMES = [
  'GenericError',
  'InvalidArgument',
  'InvalidInstructionData',
  'InvalidAccountData',
  'AccountDataTooSmall',
  'InsufficientFunds',
  'IncorrectProgramId',
  'MissingRequiredSignature',
  'AccountAlreadyInitialized',
  'UninitializedAccount',
  'UnbalancedInstruction',
  'ModifiedProgramId',
  'ExternalAccountLamportSpend',
  'ExternalAccountDataModified',
  'ReadonlyLamportChange',
  'ReadonlyDataModified',
  'DuplicateAccountIndex',
  'ExecutableModified',
  'RentEpochModified',
  'NotEnoughAccountKeys',
  'AccountDataSizeChanged',
  'AccountNotExecutable',
  'AccountBorrowFailed',
  'AccountBorrowOutstanding',
  'DuplicateAccountOutOfSync',
  'InvalidError',
  'ExecutableDataModified',
  'ExecutableLamportChange',
  'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId',
  'CallDepth',
  'MissingAccount',
  'ReentrancyNotAllowed',
  'MaxSeedLengthExceeded',
  'InvalidSeeds',
  'InvalidRealloc',
  'ComputationalBudgetExceeded',
  'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure',
  'ProgramFailedToComplete',
  'ProgramFailedToCompile',
  'Immutable',
  'IncorrectAuthority',
  'AccountNotRentExempt',
  'InvalidAccountOwner',
  'ArithmeticOverflow',
  'UnsupportedSysvar',
  'IllegalOwner',
  'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits',
  'BorshIoError',
] as const;

/** A TransactionError as the RPC serialises it: "BlockhashNotFound" or {"InstructionError":[0,{"Custom":6000}]}. */
export type RpcTxError = string | Record<string, unknown>;

type Native = { constructor: { name: string } } & Record<string, unknown>;

function instructionErrorToRpc(e: unknown): unknown {
  if (typeof e === 'number') return IX_ERR_NAMES[e] ?? 'GenericError';
  const n = e as Native;
  if (typeof n.code === 'number') return { Custom: n.code };
  // Agave 3 made BorshIoError fieldless; the RPC prints it as a bare name.
  if (typeof n.msg === 'string') return 'BorshIoError';
  return 'GenericError';
}

/** LiteSVM's native error objects → the RPC JSON shape. */
export function toRpcTxError(e: unknown): RpcTxError {
  if (typeof e === 'number') return TX_ERR_NAMES[e] ?? 'SanitizeFailure';
  const n = e as Native;
  const name = n.constructor?.name ?? '';
  if (name.includes('InstructionError') && typeof n.err === 'function') {
    return { InstructionError: [n.index as number, instructionErrorToRpc((n.err as () => unknown).call(n))] };
  }
  if (name.includes('DuplicateInstruction')) return { DuplicateInstruction: n.index as number };
  if (name.includes('InsufficientFundsForRent'))
    return { InsufficientFundsForRent: { account_index: n.accountIndex as number } };
  if (name.includes('ProgramExecutionTemporarilyRestricted')) {
    return { ProgramExecutionTemporarilyRestricted: { account_index: n.accountIndex as number } };
  }
  return 'SanitizeFailure';
}

const IX_MESSAGES: Record<string, string> = {
  GenericError: 'generic instruction error',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  AccountDataTooSmall: 'account data too small for instruction',
  InsufficientFunds: 'insufficient funds for instruction',
  IncorrectProgramId: 'incorrect program id for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  AccountAlreadyInitialized: 'instruction requires an uninitialized account',
  UninitializedAccount: 'instruction requires an initialized account',
  NotEnoughAccountKeys: 'insufficient account keys for instruction',
  ComputationalBudgetExceeded: 'Computational budget exceeded',
  PrivilegeEscalation: 'Cross-program invocation with unauthorized signer or writable account',
  IllegalOwner: 'Provided owner is not allowed',
  InvalidSeeds: 'Provided seeds do not result in a valid address',
};
const TX_MESSAGES: Record<string, string> = {
  AccountInUse: 'Account in use',
  AccountLoadedTwice: 'Account loaded twice',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  SignatureFailure: 'Transaction did not pass signature verification',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
  AddressLookupTableNotFound: "Transaction loads an address table account that doesn't exist",
  UnsupportedVersion: 'Transaction version is unsupported',
};

/** The Display text of a TransactionError, as the RPC puts it in "Transaction simulation failed: …". */
export function txErrorMessage(err: RpcTxError): string {
  if (typeof err === 'string') return TX_MESSAGES[err] ?? err;
  if ('InstructionError' in err) {
    const [i, ie] = err.InstructionError as [number, unknown];
    let text: string;
    if (typeof ie === 'string') text = IX_MESSAGES[ie] ?? ie;
    else if (ie && typeof ie === 'object' && 'Custom' in ie)
      text = `custom program error: 0x${(ie as { Custom: number }).Custom.toString(16)}`;
    else text = JSON.stringify(ie);
    return `Error processing Instruction ${i}: ${text}`;
  }
  if ('InsufficientFundsForRent' in err) {
    return `Transaction results in an account (${(err.InsufficientFundsForRent as { account_index: number }).account_index}) with insufficient funds for rent`;
  }
  if ('DuplicateInstruction' in err)
    return `Transaction contains a duplicate instruction (${String(err.DuplicateInstruction)}) that is not allowed`;
  return JSON.stringify(err);
}

/** Errors after which a transaction still lands (fee paid, block entry with `err`), as on a real cluster. */
export function isExecutionError(err: RpcTxError): boolean {
  return (
    typeof err === 'object' &&
    ('InstructionError' in err || 'InsufficientFundsForRent' in err || 'ProgramExecutionTemporarilyRestricted' in err)
  );
}

export interface AccountSnapshot {
  lamports: bigint;
  owner: string;
  data: Uint8Array;
  executable: boolean;
  rentEpoch: bigint;
}

export interface RpcInnerInstruction {
  programIdIndex: number;
  accounts: number[];
  data: string;
  stackHeight: number | null;
}

export interface RpcTokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: Omit<ReturnType<typeof uiTokenAmount>, 'uiAmount'> & { uiAmount: number | null };
}

/** Transaction status meta in the `json` encoding; bigints are written as JSON numbers. */
export interface RpcMeta {
  err: RpcTxError | null;
  status: { Ok: null } | { Err: RpcTxError };
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  innerInstructions: Array<{ index: number; instructions: RpcInnerInstruction[] }>;
  logMessages: string[];
  preTokenBalances: RpcTokenBalance[];
  postTokenBalances: RpcTokenBalance[];
  rewards: unknown[];
  loadedAddresses: LoadedAddresses;
  computeUnitsConsumed: bigint;
  /** The cost model's units for the landed transaction (cost.ts); absent in records written before it existed. */
  costUnits?: bigint;
  returnData?: { programId: string; data: [string, 'base64'] };
}

/**
 * Token balances of `states` (Token and Token-2022 accounts). `stored`: as a node answers them from its ledger,
 * where the protobuf round trip turns a zero `uiAmount` into null (getTransaction, getBlock); simulation answers
 * the account decoder's value (0).
 */
export function tokenBalances(
  states: Array<AccountSnapshot | null>,
  decimalsOf: (mint: string) => number,
  stored: boolean,
): RpcTokenBalance[] {
  const out: RpcTokenBalance[] = [];
  states.forEach((s, i) => {
    if (!s) return;
    const t = decodeTokenAccount(s.owner, s.data);
    if (!t) return;
    out.push({
      accountIndex: i,
      mint: t.mint,
      owner: t.owner,
      programId: s.owner,
      uiTokenAmount: stored
        ? storedUiAmount(uiTokenAmount(t.amount, decimalsOf(t.mint)))
        : uiTokenAmount(t.amount, decimalsOf(t.mint)),
    });
  });
  return out;
}

/** Agave's blockstore keeps uiAmount as an f64 and reads a value within f64::EPSILON of 0 back as None. */
function storedUiAmount(u: ReturnType<typeof uiTokenAmount>): RpcTokenBalance['uiTokenAmount'] {
  return Math.abs(u.uiAmount) > Number.EPSILON ? u : { ...u, uiAmount: null };
}

export interface ExecutionCapture {
  keys: string[];
  pre: Array<AccountSnapshot | null>;
  post: Array<AccountSnapshot | null>;
  /** Decimals of a mint (read from the post state, then the pre state). */
  decimalsOf: (mint: string) => number;
  err: RpcTxError | null;
  fee: bigint;
  logs: string[];
  /** Per top-level instruction, LiteSVM's inner instructions (indexes into `keys`). */
  inner: Array<Array<{ programIdIndex: number; accounts: number[]; data: Uint8Array; stackHeight: number }>>;
  computeUnits: bigint;
  /** The cost model's units (cost.ts). */
  costUnits: bigint;
  loaded: LoadedAddresses;
  returnData?: { programId: string; data: Uint8Array };
}

/** Inner instructions as the RPC lists them: one group per top-level instruction that has any, data in base58. */
export function rpcInnerInstructions(inner: ExecutionCapture['inner']): RpcMeta['innerInstructions'] {
  return inner
    .map((list, index) => ({
      index,
      instructions: list.map((ix) => ({
        programIdIndex: ix.programIdIndex,
        accounts: ix.accounts,
        data: bs58.encode(ix.data),
        stackHeight: ix.stackHeight,
      })),
    }))
    .filter((x) => x.instructions.length > 0);
}

export function buildMeta(c: ExecutionCapture): RpcMeta {
  const innerInstructions = rpcInnerInstructions(c.inner);
  const meta: RpcMeta = {
    err: c.err,
    status: c.err === null ? { Ok: null } : { Err: c.err },
    fee: c.fee,
    preBalances: c.pre.map((s) => s?.lamports ?? 0n),
    postBalances: c.post.map((s) => s?.lamports ?? 0n),
    innerInstructions,
    logMessages: c.logs,
    preTokenBalances: tokenBalances(c.pre, c.decimalsOf, true),
    postTokenBalances: tokenBalances(c.post, c.decimalsOf, true),
    rewards: [],
    loadedAddresses: c.loaded,
    computeUnitsConsumed: c.computeUnits,
    costUnits: c.costUnits,
  };
  if (c.returnData && c.returnData.data.length > 0) {
    meta.returnData = {
      programId: c.returnData.programId,
      data: [Buffer.from(c.returnData.data).toString('base64'), 'base64'],
    };
  }
  return meta;
}

/** solana_instruction::TRANSACTION_LEVEL_STACK_HEIGHT. */
export const TOP_LEVEL_STACK_HEIGHT = 1;

export type TxEncoding = 'json' | 'jsonParsed' | 'base64' | 'base58';

function compiledJson(tx: WireTransaction): Record<string, unknown> {
  const message: Record<string, unknown> = {
    accountKeys: tx.staticKeys,
    header: tx.header,
    recentBlockhash: tx.recentBlockhash,
    instructions: tx.instructions.map((ix) => ({
      programIdIndex: ix.programIdIndex,
      accounts: ix.accounts,
      data: bs58.encode(ix.data),
      // Agave 3.1 writes the transaction level (1) for top-level instructions, not null.
      stackHeight: TOP_LEVEL_STACK_HEIGHT,
    })),
  };
  if (tx.version === 0) message.addressTableLookups = tx.lookups;
  return { signatures: tx.signatures, message };
}

export function parsedAccountKeys(
  tx: WireTransaction,
  loaded: LoadedAddresses,
): Array<{ pubkey: string; writable: boolean; signer: boolean; source: string }> {
  return allAccountKeys(tx, loaded).map((pubkey, i) => ({
    pubkey,
    writable: isWritable(tx, loaded, i),
    signer: isSigner(tx, i),
    source: i < tx.staticKeys.length ? 'transaction' : 'lookupTable',
  }));
}

function parsedJson(tx: WireTransaction, loaded: LoadedAddresses): Record<string, unknown> {
  const keys = allAccountKeys(tx, loaded);
  const message: Record<string, unknown> = {
    accountKeys: parsedAccountKeys(tx, loaded),
    recentBlockhash: tx.recentBlockhash,
    instructions: tx.instructions.map((ix) =>
      parseInstruction(
        keys[ix.programIdIndex],
        ix.accounts.map((a) => keys[a]),
        ix.data,
        TOP_LEVEL_STACK_HEIGHT,
      ),
    ),
  };
  if (tx.version === 0) message.addressTableLookups = tx.lookups;
  return { signatures: tx.signatures, message };
}

/** The `transaction` field of getTransaction / getBlock in the asked encoding. */
export function encodeTransaction(tx: WireTransaction, loaded: LoadedAddresses, encoding: TxEncoding): unknown {
  switch (encoding) {
    case 'base64':
      return [Buffer.from(tx.bytes).toString('base64'), 'base64'];
    case 'base58':
      return [bs58.encode(tx.bytes), 'base58'];
    case 'jsonParsed':
      return parsedJson(tx, loaded);
    default:
      return compiledJson(tx);
  }
}

/** The `meta` field in the asked encoding (jsonParsed parses inner instructions and drops loadedAddresses). */
export function encodeMeta(meta: RpcMeta, tx: WireTransaction, encoding: TxEncoding): unknown {
  if (encoding !== 'jsonParsed') return meta;
  const keys = allAccountKeys(tx, meta.loadedAddresses);
  const { loadedAddresses: _drop, ...rest } = meta;
  return {
    ...rest,
    innerInstructions: meta.innerInstructions.map((g) => ({
      index: g.index,
      instructions: g.instructions.map((ix) =>
        parseInstruction(
          keys[ix.programIdIndex],
          ix.accounts.map((a) => keys[a]),
          bs58.decode(ix.data),
          ix.stackHeight,
        ),
      ),
    })),
  };
}

export type AccountEncoding = 'base64' | 'base58' | 'jsonParsed' | 'base64+zstd';

function parsedAccountData(s: AccountSnapshot, decimalsOf: (mint: string) => number | null): unknown | null {
  const program = s.owner === TOKEN_PROGRAM_ID ? 'spl-token' : 'spl-token-2022';
  const t = decodeTokenAccount(s.owner, s.data);
  if (t) {
    const decimals = decimalsOf(t.mint);
    if (decimals === null) return null;
    const info: Record<string, unknown> = {
      isNative: t.isNative !== null,
      mint: t.mint,
      owner: t.owner,
      state: t.state,
      tokenAmount: uiTokenAmount(t.amount, decimals),
    };
    if (t.delegate) {
      info.delegate = t.delegate;
      info.delegatedAmount = uiTokenAmount(t.delegatedAmount, decimals);
    }
    if (t.closeAuthority) info.closeAuthority = t.closeAuthority;
    return { program, parsed: { type: 'account', info }, space: s.data.length };
  }
  const m = decodeMint(s.owner, s.data);
  if (m) {
    return {
      program,
      parsed: {
        type: 'mint',
        info: {
          decimals: m.decimals,
          freezeAuthority: m.freezeAuthority,
          isInitialized: m.isInitialized,
          mintAuthority: m.mintAuthority,
          supply: m.supply.toString(),
        },
      },
      space: s.data.length,
    };
  }
  return null;
}

/** One account as getAccountInfo returns it (`null` for a missing account is the caller's). */
export function encodeAccount(
  s: AccountSnapshot,
  encoding: AccountEncoding,
  decimalsOf: (mint: string) => number | null,
  dataSlice?: { offset: number; length: number },
): Record<string, unknown> {
  let data: unknown;
  const bytes = dataSlice ? s.data.subarray(dataSlice.offset, dataSlice.offset + dataSlice.length) : s.data;
  if (encoding === 'jsonParsed' && !dataSlice) data = parsedAccountData(s, decimalsOf);
  if (data === undefined || data === null) {
    data = encoding === 'base58' ? [bs58.encode(bytes), 'base58'] : [Buffer.from(bytes).toString('base64'), 'base64'];
  }
  return {
    data,
    executable: s.executable,
    lamports: s.lamports,
    owner: s.owner,
    rentEpoch: s.rentEpoch,
    space: s.data.length,
  };
}
