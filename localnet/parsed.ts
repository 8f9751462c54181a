// Pure: the `jsonParsed` view of System, SPL Token (+2022) and ATA instructions, as the real RPC names them.
// Anything we do not parse falls back to the partially-decoded shape {programId, accounts, data}, like the RPC.
import bs58 from 'bs58';
import { ATA_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './program-ids';
import { uiTokenAmount } from './token-state';

export interface ParsedIx {
  program: string;
  programId: string;
  parsed: { type: string; info: Record<string, unknown> };
  stackHeight: number | null;
}
export interface PartialIx {
  programId: string;
  accounts: string[];
  data: string;
  stackHeight: number | null;
}

const u64 = (d: Uint8Array, o: number): bigint => Buffer.from(d.buffer, d.byteOffset, d.byteLength).readBigUInt64LE(o);
const u32 = (d: Uint8Array, o: number): number => Buffer.from(d.buffer, d.byteOffset, d.byteLength).readUInt32LE(o);
const key = (d: Uint8Array, o: number): string => bs58.encode(d.subarray(o, o + 32));

const tokenAmount = uiTokenAmount;

/** Token-2022's ExtensionType, by number, as the RPC names them (UiExtensionType). */
const EXTENSION_TYPES = [
  'uninitialized',
  'transferFeeConfig',
  'transferFeeAmount',
  'mintCloseAuthority',
  'confidentialTransferMint',
  'confidentialTransferAccount',
  'defaultAccountState',
  'immutableOwner',
  'memoTransfer',
  'nonTransferable',
  'interestBearingConfig',
  'cpiGuard',
  'permanentDelegate',
  'nonTransferableAccount',
  'transferHook',
  'transferHookAccount',
  'confidentialTransferFeeConfig',
  'confidentialTransferFeeAmount',
  'metadataPointer',
  'tokenMetadata',
  'groupPointer',
  'tokenGroup',
  'groupMemberPointer',
  'tokenGroupMember',
];

function parseSystem(a: string[], d: Uint8Array): { type: string; info: Record<string, unknown> } | null {
  if (d.length < 4) return null;
  switch (u32(d, 0)) {
    case 0: // CreateAccount
      if (d.length < 52 || a.length < 2) return null;
      return {
        type: 'createAccount',
        info: { source: a[0], newAccount: a[1], lamports: u64(d, 4), space: u64(d, 12), owner: key(d, 20) },
      };
    case 1: // Assign
      if (d.length < 36 || a.length < 1) return null;
      return { type: 'assign', info: { account: a[0], owner: key(d, 4) } };
    case 2: // Transfer
      if (d.length < 12 || a.length < 2) return null;
      return { type: 'transfer', info: { source: a[0], destination: a[1], lamports: u64(d, 4) } };
    case 8: // Allocate
      if (d.length < 12 || a.length < 1) return null;
      return { type: 'allocate', info: { account: a[0], space: u64(d, 4) } };
    default:
      return null;
  }
}

function parseToken(a: string[], d: Uint8Array): { type: string; info: Record<string, unknown> } | null {
  if (d.length < 1) return null;
  const need = (n: number, bytes: number): boolean => a.length >= n && d.length >= bytes;
  switch (d[0]) {
    case 0: // InitializeMint
    case 20: // InitializeMint2
      if (!need(1, 35)) return null;
      return {
        type: d[0] === 0 ? 'initializeMint' : 'initializeMint2',
        info: {
          mint: a[0],
          decimals: d[1],
          mintAuthority: key(d, 2),
          ...(d.length >= 67 && d[34] === 1 ? { freezeAuthority: key(d, 35) } : {}),
          ...(d[0] === 0 && a[1] ? { rentSysvar: a[1] } : {}),
        },
      };
    case 1: // InitializeAccount
      if (!need(4, 1)) return null;
      return { type: 'initializeAccount', info: { account: a[0], mint: a[1], owner: a[2], rentSysvar: a[3] } };
    case 16: // InitializeAccount2
      if (!need(3, 33)) return null;
      return { type: 'initializeAccount2', info: { account: a[0], mint: a[1], owner: key(d, 1), rentSysvar: a[2] } };
    case 18: // InitializeAccount3
      if (!need(2, 33)) return null;
      return { type: 'initializeAccount3', info: { account: a[0], mint: a[1], owner: key(d, 1) } };
    case 3: // Transfer
      if (!need(3, 9)) return null;
      return {
        type: 'transfer',
        info: {
          source: a[0],
          destination: a[1],
          ...signers(a, 2, 'authority', 'multisigAuthority'),
          amount: u64(d, 1).toString(),
        },
      };
    case 7: // MintTo
      if (!need(3, 9)) return null;
      return { type: 'mintTo', info: { mint: a[0], account: a[1], mintAuthority: a[2], amount: u64(d, 1).toString() } };
    case 8: // Burn
      if (!need(3, 9)) return null;
      return {
        type: 'burn',
        info: {
          account: a[0],
          mint: a[1],
          ...signers(a, 2, 'authority', 'multisigAuthority'),
          amount: u64(d, 1).toString(),
        },
      };
    case 9: // CloseAccount
      if (!need(3, 1)) return null;
      return { type: 'closeAccount', info: { account: a[0], destination: a[1], owner: a[2] } };
    case 12: // TransferChecked
      if (!need(4, 10)) return null;
      return {
        type: 'transferChecked',
        info: {
          source: a[0],
          mint: a[1],
          destination: a[2],
          ...signers(a, 3, 'authority', 'multisigAuthority'),
          tokenAmount: tokenAmount(u64(d, 1), d[9]),
        },
      };
    case 14: // MintToChecked
      if (!need(3, 10)) return null;
      return {
        type: 'mintToChecked',
        info: { mint: a[0], account: a[1], mintAuthority: a[2], tokenAmount: tokenAmount(u64(d, 1), d[9]) },
      };
    case 21: {
      // GetAccountDataSize: u16 LE extension types follow (the ATA program asks for [ImmutableOwner]); the node
      // names them in camelCase and lists them only when there are some.
      if (!need(1, 1) || (d.length - 1) % 2 !== 0) return null;
      const extensionTypes: string[] = [];
      for (let o = 1; o < d.length; o += 2) {
        const name = EXTENSION_TYPES[d[o] | (d[o + 1] << 8)];
        if (name === undefined) return null;
        extensionTypes.push(name);
      }
      return { type: 'getAccountDataSize', info: { mint: a[0], ...(extensionTypes.length ? { extensionTypes } : {}) } };
    }
    case 22: // InitializeImmutableOwner
      if (!need(1, 1)) return null;
      return { type: 'initializeImmutableOwner', info: { account: a[0] } };
    case 26: // TransferFeeExtension; sub-instruction 1 = TransferCheckedWithFee
      if (d.length < 19 || d[1] !== 1 || a.length < 4) return null;
      return {
        type: 'transferCheckedWithFee',
        info: {
          source: a[0],
          mint: a[1],
          destination: a[2],
          ...signers(a, 3, 'authority', 'multisigAuthority'),
          tokenAmount: tokenAmount(u64(d, 2), d[10]),
          feeAmount: tokenAmount(u64(d, 11), d[10]),
        },
      };
    default:
      return null;
  }
}

/**
 * The real RPC's rule (solana-transaction-status `parse_signers`): accounts beyond the authority slot are multisig
 * signers, shown as `multisigAuthority` + `signers`; otherwise the single `authority`.
 */
function signers(a: string[], at: number, single: string, multi: string): Record<string, unknown> {
  if (a.length > at + 1) return { [multi]: a[at], signers: a.slice(at + 1) };
  return { [single]: a[at] };
}

function parseAta(a: string[], d: Uint8Array): { type: string; info: Record<string, unknown> } | null {
  if (a.length < 6) return null;
  const type = d.length === 0 || d[0] === 0 ? 'create' : d[0] === 1 ? 'createIdempotent' : null;
  if (!type) return null;
  return {
    type,
    info: { source: a[0], account: a[1], wallet: a[2], mint: a[3], systemProgram: a[4], tokenProgram: a[5] },
  };
}

/** One instruction in the jsonParsed shape; `accounts` are already resolved to addresses. */
export function parseInstruction(
  programId: string,
  accounts: string[],
  data: Uint8Array,
  stackHeight: number | null,
): ParsedIx | PartialIx {
  let program: string | null = null;
  let parsed: { type: string; info: Record<string, unknown> } | null = null;
  if (programId === SYSTEM_PROGRAM_ID) {
    program = 'system';
    parsed = parseSystem(accounts, data);
  } else if (programId === TOKEN_PROGRAM_ID || programId === TOKEN_2022_PROGRAM_ID) {
    program = programId === TOKEN_PROGRAM_ID ? 'spl-token' : 'spl-token-2022';
    parsed = parseToken(accounts, data);
  } else if (programId === ATA_PROGRAM_ID) {
    program = 'spl-associated-token-account';
    parsed = parseAta(accounts, data);
  }
  if (program && parsed) return { program, programId, parsed, stackHeight };
  return { programId, accounts, data: bs58.encode(data), stackHeight };
}
