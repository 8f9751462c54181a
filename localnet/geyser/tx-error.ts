// The RPC's JSON transaction error → the bincode bytes a Geyser `TransactionError.err` carries (what Agave's
// plugin interface hands Yellowstone). Variant order is the enum order of Agave's TransactionError and
// InstructionError; a test decodes every entry with the Yellowstone client's own decoder.
import { IX_ERR_NAMES, TX_ERR_NAMES, type RpcTxError } from '../encode';
import { OncepayError, LOCALNET_CODES } from '../../common/errors';

/**
 * Agave's order from LiteSVM's lists of field-less variants (localnet/encode.ts), with the variants that carry data
 * put back in their places, and the two LiteSVM lists in another order moved. tests/localnet/geyser.test.ts decodes
 * every entry with the client's decoder.
 */
function agaveOrder(names: readonly string[], moves: Array<[string, string | null]>): string[] {
  const out = [...names];
  for (const [name, after] of moves) {
    const at = out.indexOf(name);
    if (at >= 0) out.splice(at, 1);
    out.splice(after === null ? 0 : out.indexOf(after) + 1, 0, name);
  }
  return out;
}

/** TransactionError variants in declaration order (bincode writes the index as a u32 LE). */
export const TX_ERROR_VARIANTS = agaveOrder(TX_ERR_NAMES, [
  ['InstructionError', 'BlockhashNotFound'],
  ['DuplicateInstruction', 'WouldExceedAccountDataTotalLimit'],
  ['InsufficientFundsForRent', 'DuplicateInstruction'],
  ['InvalidLoadedAccountsDataSizeLimit', 'MaxLoadedAccountsDataSizeExceeded'],
  ['ProgramExecutionTemporarilyRestricted', 'ResanitizationNeeded'],
]);

/** InstructionError variants in declaration order. */
export const INSTRUCTION_ERROR_VARIANTS = agaveOrder(IX_ERR_NAMES, [
  ['Custom', 'DuplicateAccountOutOfSync'],
  ['BorshIoError', 'IncorrectAuthority'],
]);

const u32 = (n: number): number[] => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];

function variant(list: readonly string[], name: string): number {
  const i = list.indexOf(name);
  if (i < 0) throw new OncepayError(LOCALNET_CODES.GEYSER_UNSUPPORTED, `unknown error variant ${name}`);
  return i;
}

function instructionError(e: unknown): number[] {
  if (typeof e === 'string') return u32(variant(INSTRUCTION_ERROR_VARIANTS, e));
  const custom = (e as { Custom?: unknown } | null)?.Custom;
  if (typeof custom === 'number') return [...u32(variant(INSTRUCTION_ERROR_VARIANTS, 'Custom')), ...u32(custom)];
  throw new OncepayError(LOCALNET_CODES.GEYSER_UNSUPPORTED, `unsupported instruction error ${JSON.stringify(e)}`);
}

/** Bincode of one transaction error in the RPC's JSON shape. */
export function encodeTxError(err: RpcTxError): Uint8Array {
  if (typeof err === 'string') return Uint8Array.from(u32(variant(TX_ERROR_VARIANTS, err)));
  const [name, value] = Object.entries(err)[0] ?? [];
  if (name === 'InstructionError' && Array.isArray(value)) {
    return Uint8Array.from([
      ...u32(variant(TX_ERROR_VARIANTS, name)),
      Number(value[0]) & 0xff,
      ...instructionError(value[1]),
    ]);
  }
  if (name === 'DuplicateInstruction')
    return Uint8Array.from([...u32(variant(TX_ERROR_VARIANTS, name)), Number(value) & 0xff]);
  if (name === 'InsufficientFundsForRent' || name === 'ProgramExecutionTemporarilyRestricted') {
    const index = Number((value as { account_index?: unknown }).account_index);
    return Uint8Array.from([...u32(variant(TX_ERROR_VARIANTS, name)), index & 0xff]);
  }
  throw new OncepayError(LOCALNET_CODES.GEYSER_UNSUPPORTED, `unsupported transaction error ${JSON.stringify(err)}`);
}
