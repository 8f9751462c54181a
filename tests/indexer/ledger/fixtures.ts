// Deterministic test data: base58 addresses and signatures from labels, receipts, and getTransaction results in
// the RPC's jsonParsed wire format (what `oncepay decode|ingest` reads); and the error a statement is refused with.
import * as crypto from 'crypto';
import bs58 from 'bs58';
import type { BaseUnits } from '../../../common/amount';
import type { Receipt } from '../../../indexer/decode/receipt';
import type { InvoiceState } from '../../../indexer/match/types';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

export function addr(label: string): string {
  return bs58.encode(crypto.createHash('sha256').update(`addr:${label}`).digest());
}

export function sig(label: string): string {
  return bs58.encode(crypto.createHash('sha512').update(`sig:${label}`).digest());
}

/**
 * The error a promise rejects with (fails the test if it resolves); by default typed as a statement's: pg's code,
 * constraint, detail.
 */
export async function rejection<E = { code?: string; constraint?: string; detail?: string }>(
  p: Promise<unknown>,
): Promise<E> {
  try {
    await p;
  } catch (e) {
    return e as E;
  }
  throw new Error('expected the statement to fail');
}

/** How a promise settled, as a value (a test inspects a rejection without a try). */
export async function settled<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}

export function receipt(
  p: Omit<Partial<Receipt>, 'amount'> & { signature: string; destination: string; amount: bigint },
): Receipt {
  return {
    slot: 100n,
    blockTime: null,
    ixIndex: 0,
    innerIndex: -1,
    program: 'spl-token',
    kind: 'transferChecked',
    mint: addr('mint-usdc'),
    source: addr('payer-ata'),
    destinationOwner: null,
    ...p,
    amount: p.amount as BaseUnits,
  };
}

/** An invoice as the matcher sees it: open, 100 base units of MINT, nothing credited; `p` overrides. */
export function invoiceState(p: Partial<InvoiceState> & { id: string }): InvoiceState {
  return {
    merchant: 'm',
    mint: 'MINT',
    expectedAmount: 100n,
    creditedAmount: 0n,
    depositAddress: null,
    referenceKey: null,
    status: 'open',
    createdSeq: 0,
    ...p,
  };
}

export interface FixtureTransfer {
  destination: string;
  owner?: string;
  /** Decimal string as the RPC sends it (may be out of range on purpose). */
  amount: string;
  /** null: a plain `transfer` with no token balance naming its mint. */
  mint?: string | null;
}

/** One getTransaction result (jsonParsed, v0) holding the given token transfers as top-level instructions. */
export function parsedTransaction(label: string, slot: number, transfers: FixtureTransfer[]): Record<string, unknown> {
  const payer = addr(`payer:${label}`);
  const source = addr(`payer-ata:${label}`);
  const keys: string[] = [payer, source];
  const indexOf = (k: string) => {
    let i = keys.indexOf(k);
    if (i < 0) i = keys.push(k) - 1;
    return i;
  };
  const instructions = transfers.map((t) => {
    indexOf(t.destination);
    if (t.mint === null) {
      return {
        program: 'spl-token',
        programId: TOKEN_PROGRAM,
        stackHeight: null,
        parsed: { type: 'transfer', info: { source, destination: t.destination, authority: payer, amount: t.amount } },
      };
    }
    const mint = t.mint ?? addr('mint-usdc');
    indexOf(mint);
    return {
      program: 'spl-token',
      programId: TOKEN_PROGRAM,
      stackHeight: null,
      parsed: {
        type: 'transferChecked',
        info: {
          source,
          mint,
          destination: t.destination,
          authority: payer,
          tokenAmount: { amount: t.amount, decimals: 6, uiAmount: null, uiAmountString: t.amount },
        },
      },
    };
  });
  indexOf(TOKEN_PROGRAM);
  // Token balances that agree with the transfers (the decoder cross-checks them): the payer's account held what it
  // sent and ends empty, each destination starts empty and ends with what it received. A transfer with mint null
  // has none (a transaction no balance backs). Out-of-range amounts are refused before balances matter.
  const withMint = transfers.filter((t) => t.mint !== null);
  const units = (a: string) => (/^[0-9]{1,20}$/.test(a) ? BigInt(a) : 0n);
  const balance = (account: string, mint: string, owner: string, amount: bigint) => ({
    accountIndex: keys.indexOf(account),
    mint,
    owner,
    programId: TOKEN_PROGRAM,
    uiTokenAmount: { amount: amount.toString(), decimals: 6, uiAmount: null, uiAmountString: amount.toString() },
  });
  const mintOf = (t: FixtureTransfer) => t.mint ?? addr('mint-usdc');
  const received = new Map<string, FixtureTransfer & { total: bigint }>();
  for (const t of withMint)
    received.set(t.destination, { ...t, total: (received.get(t.destination)?.total ?? 0n) + units(t.amount) });
  const sent = withMint.reduce((a, t) => a + units(t.amount), 0n);
  const preTokenBalances = withMint.length === 0 ? [] : [balance(source, mintOf(withMint[0]), payer, sent)];
  const postTokenBalances = [
    ...(withMint.length === 0 ? [] : [balance(source, mintOf(withMint[0]), payer, 0n)]),
    ...[...received.values()].map((t) =>
      balance(t.destination, mintOf(t), t.owner ?? addr(`owner-of:${t.destination}`), t.total),
    ),
  ];
  return {
    slot,
    blockTime: 1_790_000_000 + slot,
    version: 0,
    transaction: {
      signatures: [sig(label)],
      message: {
        accountKeys: keys.map((k, i) => ({
          pubkey: k,
          signer: i === 0,
          writable: i < keys.length - 1,
          source: 'transaction',
        })),
        recentBlockhash: addr(`blockhash:${label}`),
        instructions,
        addressTableLookups: [],
      },
    },
    meta: {
      err: null,
      status: { Ok: null },
      fee: 5000,
      preBalances: keys.map(() => 0),
      postBalances: keys.map(() => 0),
      innerInstructions: [],
      preTokenBalances,
      postTokenBalances,
      logMessages: [],
      loadedAddresses: { writable: [], readonly: [] },
    },
  };
}

/** JSON lines, one transaction per line, as `oncepay ingest` reads them. */
export function jsonLines(txs: unknown[]): string {
  return txs.map((t) => JSON.stringify(t)).join('\n') + '\n';
}
