// Amounts as the jsonParsed encoding writes them: token amounts as decimal strings (exact), System `lamports` as a
// bare JSON number. Rule for numbers: a safe integer is exact; a bigint (from our exact JSON reader) is exact; any
// other integer-valued number has already been through JSON.parse and may have been rounded, so it is rejected with
// ONCEPAY__DECODE__AMOUNT_IMPRECISE rather than guessed at.
import { isBaseUnits } from '../../common/amount';
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from '../../common/errors/codes';
import { show } from './json-shape';

export function parseAmountField(v: unknown, field: string): bigint {
  let x: bigint;
  if (typeof v === 'bigint') {
    x = v;
  } else if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) {
      x = BigInt(v);
    } else if (Number.isInteger(v) && v > 0) {
      throw new OncepayError(
        DECODE_CODES.AMOUNT_IMPRECISE,
        `${field} ${v} is above 2^53 and was rounded by a JSON parser; read the input with readTransactionsInput`,
        { field },
      );
    } else {
      throw outOfRange(field, String(v));
    }
  } else if (typeof v === 'string' && /^[0-9]{1,30}$/.test(v)) {
    x = BigInt(v);
  } else {
    throw outOfRange(field, show(v));
  }
  if (!isBaseUnits(x)) throw outOfRange(field, x.toString());
  return x;
}

export function outOfRange(field: string, shown: string): OncepayError {
  return new OncepayError(DECODE_CODES.AMOUNT_OUT_OF_RANGE, `${field} ${shown} is not a u64`, { field, amount: shown });
}
