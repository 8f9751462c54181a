// Pure: SPL Token / Token-2022 account and mint layouts, read the way the RPC reports them.
import bs58 from 'bs58';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './program-ids';

export interface TokenAccountState {
  mint: string;
  owner: string;
  amount: bigint;
  delegate: string | null;
  state: 'uninitialized' | 'initialized' | 'frozen';
  isNative: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: string | null;
}

export interface MintState {
  mintAuthority: string | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: string | null;
}

const ACCOUNT_LEN = 165;
const MINT_LEN = 82;
// Token-2022 extended accounts carry an AccountType byte right after the base account length.
const ACCOUNT_TYPE_OFFSET = 165;

export function isTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM_ID || owner === TOKEN_2022_PROGRAM_ID;
}

const buf = (d: Uint8Array): Buffer => Buffer.from(d.buffer, d.byteOffset, d.byteLength);
const optKey = (d: Uint8Array, o: number): string | null =>
  buf(d).readUInt32LE(o) === 1 ? bs58.encode(d.subarray(o + 4, o + 36)) : null;

export function decodeTokenAccount(owner: string, data: Uint8Array): TokenAccountState | null {
  if (!isTokenProgram(owner)) return null;
  const ok =
    data.length === ACCOUNT_LEN ||
    (owner === TOKEN_2022_PROGRAM_ID && data.length > ACCOUNT_LEN && data[ACCOUNT_TYPE_OFFSET] === 2);
  if (!ok || data[108] === 0) return null;
  const b = buf(data);
  return {
    mint: bs58.encode(data.subarray(0, 32)),
    owner: bs58.encode(data.subarray(32, 64)),
    amount: b.readBigUInt64LE(64),
    delegate: optKey(data, 72),
    state: data[108] === 2 ? 'frozen' : 'initialized',
    isNative: b.readUInt32LE(109) === 1 ? b.readBigUInt64LE(113) : null,
    delegatedAmount: b.readBigUInt64LE(121),
    closeAuthority: optKey(data, 129),
  };
}

export function decodeMint(owner: string, data: Uint8Array): MintState | null {
  if (!isTokenProgram(owner)) return null;
  const ok =
    data.length === MINT_LEN ||
    (owner === TOKEN_2022_PROGRAM_ID && data.length > ACCOUNT_LEN && data[ACCOUNT_TYPE_OFFSET] === 1);
  if (!ok || data[45] === 0) return null;
  return {
    mintAuthority: optKey(data, 0),
    supply: buf(data).readBigUInt64LE(36),
    decimals: data[44],
    isInitialized: data[45] === 1,
    freezeAuthority: optKey(data, 46),
  };
}

/** "1500000" with 6 decimals → "1.5"; trailing zeros trimmed like the RPC's uiAmountString. */
export function formatUiAmount(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const s = amount.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

/** The RPC's UiTokenAmount; the float `uiAmount` is display only (the exact value is `amount`). */
export function uiTokenAmount(
  amount: bigint,
  decimals: number,
): { amount: string; decimals: number; uiAmount: number; uiAmountString: string } {
  const uiAmountString = formatUiAmount(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}
