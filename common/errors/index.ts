// The one error class every part throws. `code` is one of the table in ./codes.ts (ONCEPAY__<AREA>__<WHAT>,
// stable: never reused or renamed), so a misspelt code does not compile; ./messages.ts says what each one means
// and is the message when none more precise is given.
import type { OncepayErrorCode } from './codes';
import { ONCEPAY_ERROR_MESSAGES } from './messages';

export * from './codes';
export { ONCEPAY_ERROR_MESSAGES } from './messages';

export class OncepayError extends Error {
  readonly code: OncepayErrorCode;
  readonly context: Record<string, unknown>;
  constructor(
    code: OncepayErrorCode,
    message: string = ONCEPAY_ERROR_MESSAGES[code],
    context: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(`${code}: ${message}`, options);
    this.name = 'OncepayError';
    this.code = code;
    this.context = context;
  }
}

export function isOncepayError(e: unknown, code?: OncepayErrorCode): e is OncepayError {
  return e instanceof OncepayError && (code === undefined || e.code === code);
}
