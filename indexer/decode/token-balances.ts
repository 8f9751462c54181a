// meta.pre/postTokenBalances: the mint and owner of token accounts by account index (a plain `transfer` names no
// mint), and the balance change used to find a Token-2022 fee the instruction did not state.
import type { BaseUnits } from '../../common/amount';
import { isAddress, isIndex, isRecord, malformed, optionalArray, type Json } from './json-shape';
import type { Receipt } from './receipt';

export interface TokenBalance {
  mint: string;
  owner: string | null;
  /** Base units, null if the RPC gave none we can read exactly. */
  amount: bigint | null;
}

function balanceAmount(b: Json): bigint | null {
  const ui = b.uiTokenAmount;
  if (!isRecord(ui) || typeof ui.amount !== 'string' || !/^[0-9]{1,20}$/.test(ui.amount)) return null;
  return BigInt(ui.amount);
}

export function tokenBalances(meta: Json, field: string, keyCount: number): Map<number, TokenBalance> {
  const out = new Map<number, TokenBalance>();
  optionalArray(meta, field, 'meta').forEach((b, i) => {
    if (!isRecord(b) || !isIndex(b.accountIndex, keyCount) || !isAddress(b.mint)) {
      throw malformed(`meta.${field}[${i}] is malformed`);
    }
    out.set(b.accountIndex, { mint: b.mint, owner: isAddress(b.owner) ? b.owner : null, amount: balanceAmount(b) });
  });
  return out;
}

/**
 * A Token-2022 mint with a transfer fee withholds it on a plain transferChecked too, without stating it in the
 * instruction. When the destination's balance change is attributable to this one receipt alone (no other receipt
 * in the transaction touches that account), and it is below the amount sent, what arrived is that change.
 * Non-transfer instructions on the same account in the same transaction (burn, close) would blur this; documented.
 */
export function netOfUnstatedFees(receipts: Receipt[], delta: (address: string) => bigint | null): void {
  const touches = new Map<string, number>();
  for (const r of receipts) {
    touches.set(r.source, (touches.get(r.source) ?? 0) + 1);
    touches.set(r.destination, (touches.get(r.destination) ?? 0) + 1);
  }
  for (const r of receipts) {
    if (r.program !== 'spl-token-2022' || r.kind !== 'transferChecked' || touches.get(r.destination) !== 1) continue;
    const d = delta(r.destination);
    if (d === null || d < 0n || d >= r.amount) continue;
    r.fee = (r.amount - d) as BaseUnits;
    r.amount = d as BaseUnits;
  }
}
