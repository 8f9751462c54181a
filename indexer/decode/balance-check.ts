// Every decoded token transfer is cross-checked against the transaction's own meta.pre/postTokenBalances: for each
// token account a transfer touches, what the decoded transfers say moved (credits net of a stated or found fee,
// minus debits gross of it) must equal post − pre, and the balance's mint must be the transfer's mint. Several
// transfers to one account sum up; `transferCheckedWithFee` credits amount − fee. A disagreement means the
// instructions claim a movement the token program did not make (a forged or corrupted body, or a transaction we
// do not understand): it is refused (ONCEPAY__DECODE__BALANCE_MISMATCH), never credited at the instruction's word.
//
// Accounts that another token-program instruction of the same transaction also names (mintTo, burn, closeAccount,
// syncNative, a batch, …) change by amounts no transfer states; those are "blurred" and not checked (a known
// limit, documented in README.md). SOL transfers are not checked: lamport balances also move by fees and rent.
// Pure: no I/O.
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from '../../common/errors/codes';
import type { Receipt } from './receipt';
import type { TokenBalance } from './token-balances';

export interface BalanceView {
  /** Position of an address in the transaction's account keys. */
  indexOf: ReadonlyMap<string, number>;
  pre: ReadonlyMap<number, TokenBalance>;
  post: ReadonlyMap<number, TokenBalance>;
  /** Token accounts named by token-program instructions that are not transfers. */
  blurred: ReadonlySet<string>;
}

export interface AccountMovement {
  account: string;
  mint: string | null;
  /** What the decoded transfers say: credits (net) − debits (gross). */
  decoded: bigint;
}

/** Net movement per token account according to the decoded transfers. */
export function decodedMovements(receipts: readonly Receipt[]): AccountMovement[] {
  const byAccount = new Map<string, AccountMovement>();
  const touch = (account: string, mint: string | null, by: bigint) => {
    const m = byAccount.get(account) ?? { account, mint, decoded: 0n };
    m.decoded += by;
    byAccount.set(account, m);
  };
  for (const r of receipts) {
    if (r.program === 'system') continue;
    const gross = r.amount + (r.fee ?? 0n);
    touch(r.source, r.mint, -gross);
    touch(r.destination, r.mint, r.amount);
  }
  return [...byAccount.values()];
}

function mismatch(signature: string, what: string, context: Record<string, unknown>): OncepayError {
  return new OncepayError(DECODE_CODES.BALANCE_MISMATCH, `transaction ${signature}: ${what}`, {
    signature,
    ...context,
  });
}

/** Throws ONCEPAY__DECODE__BALANCE_MISMATCH when a decoded transfer disagrees with the token balances. */
export function assertTransfersMatchBalances(signature: string, receipts: readonly Receipt[], view: BalanceView): void {
  for (const m of decodedMovements(receipts)) {
    if (view.blurred.has(m.account)) continue;
    const i = view.indexOf.get(m.account);
    if (i === undefined)
      throw mismatch(signature, `token account ${m.account} is not among the transaction's accounts`, {
        account: m.account,
      });
    const pre = view.pre.get(i);
    const post = view.post.get(i);
    for (const b of [pre, post]) {
      if (b !== undefined && m.mint !== null && b.mint !== m.mint) {
        throw mismatch(signature, `token account ${m.account} holds mint ${b.mint}, the transfer names ${m.mint}`, {
          account: m.account,
          mint: m.mint,
          balanceMint: b.mint,
        });
      }
      if (b !== undefined && b.amount === null)
        throw mismatch(signature, `token balance of ${m.account} is unreadable`, { account: m.account });
    }
    // No pre entry: the account was created in this transaction. No post entry: it holds nothing afterwards
    // (a close would have blurred it, so here it simply was never a token account the runtime reported).
    const actual = (post?.amount ?? 0n) - (pre?.amount ?? 0n);
    if (actual !== m.decoded) {
      throw mismatch(signature, `token account ${m.account} changed by ${actual} but its transfers say ${m.decoded}`, {
        account: m.account,
        decoded: m.decoded.toString(),
        actual: actual.toString(),
      });
    }
  }
}
