/**
 * oncepay — payment effects on Solana, exactly once.
 *
 * The one public entry of the package:
 *
 * ```ts
 * import { OncePay, readKeypairFile } from 'oncepay';
 * const oncepay = OncePay.connect({ databaseUrl, rpcUrl });
 * ```
 *
 * Everything else in the package is internal and may change in any release.
 * @packageDocumentation
 */
export { OncePay } from './oncepay';
export * from './types';
/** Read a Solana CLI keypair file (JSON array of 64 bytes); refused when the file is open to group or others. */
export { readKeypairFile } from '../app/payout/keypair';
/** Derive a payout's op id and op account (PDA ["op", merchant, opId]) from (program, merchant, payoutId). */
export { deriveOperation, deriveOpId } from '../app/op-id';
/** The id a refund payout gets from its exception's receipt: `refund:<cluster>:<signature>:<ix>:<inner>`. */
export { refundPayoutId } from '../app/exception/refund-id';
export { FINDINGS } from '../app/vault/findings';
export { ONCEPAY_PROGRAM_ID } from '../app/program/idl';
/** Every error the SDK throws is an OncepayError with a stable `code` (ONCEPAY__<AREA>__<WHAT>). */
export { OncepayError, isOncepayError } from '../common/errors';
/** Every `OncepayError.code` (the one table in common/errors/codes.ts): `isOncepayError(e, code)` takes one. */
export type { OncepayErrorCode } from '../common/errors';
