// The programs whose instructions can be receipts, by address.
import type { ReceiptProgram } from './receipt';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const SYSTEM_PROGRAM = '11111111111111111111111111111111';

/** Mint name used for native SOL receipts. */
export const NATIVE_MINT_LABEL = 'SOL';

export function receiptProgramOf(programId: string): ReceiptProgram | null {
  switch (programId) {
    case TOKEN_PROGRAM:
      return 'spl-token';
    case TOKEN_2022_PROGRAM:
      return 'spl-token-2022';
    case SYSTEM_PROGRAM:
      return 'system';
    default:
      return null;
  }
}
