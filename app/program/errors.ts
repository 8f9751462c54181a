// The program's numbered errors as the IDL states them (the table anchor-lang writes from the program's
// #[error_code] enum): names for transaction errors, and the numbers the SDK branches on. Never written here by hand.
import { IDL_CODES, OncepayError } from '../../common/errors';
import { ONCEPAY_IDL_ERRORS } from './idl';

/** The program's error table, as the IDL states it: number → name (Anchor offset 6000). */
const PROGRAM_ERROR_NAMES: ReadonlyMap<number, string> = new Map(ONCEPAY_IDL_ERRORS.map((e) => [e.code, e.name]));

/** The number of the program error `name` in the IDL; throws (at load) if the IDL has no such error. */
function programErrorNumber(name: string): number {
  for (const [code, n] of PROGRAM_ERROR_NAMES) if (n === name) return code;
  throw new OncepayError(IDL_CODES.ERROR_UNKNOWN, `idl/oncepay.json names no program error ${name}`);
}

/** The program errors the SDK branches on, numbered as the IDL numbers them. */
export const PROGRAM_ERRORS = {
  /** This op id was paid before: another attempt won (journal rule 2). */
  OperationAlreadyConsumed: programErrorNumber('OperationAlreadyConsumed'),
  /** The signer is not the merchant's payout authority: the payout is not at fault, its signer is. */
  Unauthorized: programErrorNumber('Unauthorized'),
} as const;

/** The oncepay program's error name for a transaction error (e.g. "MerchantPaused"), if it is one of the IDL's. */
export function programErrorName(err: unknown): string | undefined {
  const n = customErrorCode(err);
  return n === undefined ? undefined : PROGRAM_ERROR_NAMES.get(n);
}

/**
 * A transaction error as stored and shown: the program's error name and number (e.g. "MerchantPaused (6002)")
 * when the IDL names it, else the error's JSON (a runtime error such as InsufficientFundsForFee, or a custom
 * number the IDL does not know).
 */
export function describeTransactionError(err: unknown): string {
  const n = customErrorCode(err);
  const name = n === undefined ? undefined : PROGRAM_ERROR_NAMES.get(n);
  return name === undefined ? JSON.stringify(err) : `${name} (${n})`;
}

/** The custom program error number of a transaction error ({ InstructionError: [i, { Custom: n }] }), if any. */
export function customErrorCode(err: unknown): number | undefined {
  if (err && typeof err === 'object' && 'InstructionError' in err) {
    const ie = (err as { InstructionError: unknown }).InstructionError;
    if (Array.isArray(ie) && ie[1] && typeof ie[1] === 'object' && 'Custom' in ie[1]) {
      const n = (ie[1] as { Custom: unknown }).Custom;
      if (typeof n === 'number') return n;
    }
  }
  return undefined;
}
