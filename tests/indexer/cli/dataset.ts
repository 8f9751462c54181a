// A small payment story in the RPC's wire format, shared by the CLI suites.
import { addr, parsedTransaction } from '../ledger/fixtures';

export const USDC = addr('mint-usdc');

export interface Dataset {
  invoices: Array<{ id: string; amount: string; depositAddress: string }>;
  /** getTransaction results, in chain order. */
  txs: Array<Record<string, unknown>>;
}

/**
 * n invoices of 1000 paid to their shop wallet in two parts (600 + 400, or 600 + 500 for odd ones: 100 over),
 * one transaction paying two invoices at once, and a late payment to INV-000.
 */
export function paymentDataset(n = 10): Dataset {
  const invoices: Dataset['invoices'] = [];
  const txs: Dataset['txs'] = [];
  for (let i = 0; i < n; i++) {
    const id = `INV-${String(i).padStart(3, '0')}`;
    invoices.push({ id, amount: '1000', depositAddress: addr(`shop-${i}`) });
    txs.push(
      parsedTransaction(`first-${i}`, 1000 + i, [
        { destination: addr(`ata-${i}`), owner: addr(`shop-${i}`), amount: '600' },
      ]),
    );
    txs.push(
      parsedTransaction(`second-${i}`, 2000 + i, [
        { destination: addr(`ata-${i}`), owner: addr(`shop-${i}`), amount: i % 2 ? '500' : '400' },
      ]),
    );
  }
  invoices.push(
    { id: 'TWO-A', amount: '7', depositAddress: addr('two-a') },
    { id: 'TWO-B', amount: '9', depositAddress: addr('two-b') },
  );
  txs.push(
    parsedTransaction('two-at-once', 3000, [
      { destination: addr('two-a'), owner: addr('someone-a'), amount: '7' },
      { destination: addr('ata-two-b'), owner: addr('two-b'), amount: '9' },
    ]),
  );
  txs.push(parsedTransaction('late', 4000, [{ destination: addr('ata-0'), owner: addr('shop-0'), amount: '25' }]));
  return { invoices, txs };
}

/** What a report must say after the dataset was applied (any number of times, in any split). */
export function expectedTotals(n = 10) {
  const odd = Math.floor(n / 2);
  return {
    invoicesPaid: n + 2,
    receipts: 2 * n + 3,
    exceptions: { overpayment: { count: odd, amount: String(100 * odd) }, late_payment: { count: 1, amount: '25' } },
  };
}
