// Transfers from the RPC's jsonParsed form: {"program","programId","parsed":{"type","info"}}. Field names follow
// the RPC's parsers: token `transfer` {source, destination, amount, authority | multisigAuthority + signers},
// `transferChecked` / `transferCheckedWithFee` {source, mint, destination, tokenAmount{amount,decimals},
// feeAmount{amount}, authority | multisigAuthority + signers}, system `transfer` {source, destination, lamports},
// `transferWithSeed` {source, sourceBase, destination, lamports, …}.
// The RPC lists every account past the fixed ones as a multisig `signers` entry (it cannot tell them from Solana Pay
// references either); System transfers' extra accounts are not shown at all, so their `extras` is null.
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from '../../common/errors/codes';
import { isRecord } from './json-shape';
import { parseAmountField } from './amount-field';
import { NATIVE_MINT_LABEL, SYSTEM_PROGRAM, TOKEN_2022_PROGRAM, receiptProgramOf } from './programs';
import type { InstructionTransfer } from './transfer';

function str(info: Record<string, unknown>, field: string, type: string): string {
  const v = info[field];
  if (typeof v !== 'string' || v === '') {
    throw new OncepayError(DECODE_CODES.MALFORMED_INSTRUCTION, `parsed ${type} lacks info.${field}`, { field });
  }
  return v;
}

function authorityAndExtras(info: Record<string, unknown>, type: string): { authority: string; extras: string[] } {
  if (typeof info.authority === 'string') return { authority: info.authority, extras: [] };
  const authority = str(info, 'multisigAuthority', type);
  const signers = info.signers ?? [];
  if (!Array.isArray(signers) || !signers.every((s) => typeof s === 'string')) {
    throw new OncepayError(DECODE_CODES.MALFORMED_INSTRUCTION, `parsed ${type} has malformed info.signers`);
  }
  return { authority, extras: signers as string[] };
}

function tokenAmount(
  info: Record<string, unknown>,
  field: string,
  type: string,
): { amount: bigint; decimals: number | null } {
  const ta = info[field];
  if (!isRecord(ta)) throw new OncepayError(DECODE_CODES.MALFORMED_INSTRUCTION, `parsed ${type} lacks info.${field}`);
  const decimals = typeof ta.decimals === 'number' && Number.isInteger(ta.decimals) ? ta.decimals : null;
  return { amount: parseAmountField(ta.amount, `info.${field}.amount`), decimals };
}

/** null when the parsed instruction is not a transfer we record. */
export function decodeParsedTransfer(programId: string, parsed: unknown): InstructionTransfer | null {
  const program = receiptProgramOf(programId);
  if (program === null || !isRecord(parsed)) return null;
  const type = parsed.type;
  const info = parsed.info;
  if (typeof type !== 'string') return null;
  if (!isRecord(info)) {
    if (['transfer', 'transferChecked', 'transferCheckedWithFee', 'transferWithSeed'].includes(type)) {
      throw new OncepayError(DECODE_CODES.MALFORMED_INSTRUCTION, `parsed ${type} has no info object`);
    }
    return null;
  }
  if (programId === SYSTEM_PROGRAM) {
    if (type !== 'transfer' && type !== 'transferWithSeed') return null;
    const source = str(info, 'source', type);
    return {
      program,
      kind: 'systemTransfer',
      source,
      destination: str(info, 'destination', type),
      mint: NATIVE_MINT_LABEL,
      authority: type === 'transfer' ? source : str(info, 'sourceBase', type),
      amount: parseAmountField(info.lamports, 'info.lamports'),
      fee: null,
      decimals: 9,
      extras: null,
    };
  }
  if (type === 'transfer') {
    const { authority, extras } = authorityAndExtras(info, type);
    return {
      program,
      kind: 'transfer',
      source: str(info, 'source', type),
      destination: str(info, 'destination', type),
      mint: null,
      authority,
      amount: parseAmountField(info.amount, 'info.amount'),
      fee: null,
      decimals: null,
      extras,
    };
  }
  if (type === 'transferChecked' || (type === 'transferCheckedWithFee' && programId === TOKEN_2022_PROGRAM)) {
    const { authority, extras } = authorityAndExtras(info, type);
    const { amount, decimals } = tokenAmount(info, 'tokenAmount', type);
    const fee = type === 'transferCheckedWithFee' ? tokenAmount(info, 'feeAmount', type).amount : null;
    return {
      program,
      kind: type,
      source: str(info, 'source', type),
      destination: str(info, 'destination', type),
      mint: str(info, 'mint', type),
      authority,
      amount,
      fee,
      decimals,
      extras,
    };
  }
  return null;
}
