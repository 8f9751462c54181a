// The pages a person can open while the demo runs (and after it, with --keep): the payer's checkout page of an
// invoice the demo creates through the merchant API (POST /v1/invoices, the merchant's receiving wallet, the story's
// mint), and the operator console served beside the API.
import { OncepayError } from '../common/errors';
import { DEMO_CODES } from '../common/errors/codes';
import type { World } from './act1-merchant-and-payments';
import type { Narrator } from './narrator';

export interface DemoPages {
  /** The invoice's checkout page: absolute, on the demo's API. */
  checkoutUrl: string;
  consoleUrl: string;
}

export const CHECKOUT_INVOICE_ID = 'INV-3001';

export async function createDemoPages(deps: {
  apiUrl: string;
  apiKey: string;
  world: World;
  say: Narrator;
}): Promise<DemoPages> {
  const { apiUrl, apiKey, world, say } = deps;
  const res = await fetch(`${apiUrl}/v1/invoices`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'idempotency-key': `demo-key-invoice-${CHECKOUT_INVOICE_ID}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      invoiceId: CHECKOUT_INVOICE_ID,
      amount: '15000000',
      mint: world.mint.toBase58(),
      label: 'oncepay demo shop',
      message: `Invoice ${CHECKOUT_INVOICE_ID}`,
    }),
  });
  const body = (await res.json()) as { checkoutUrl?: string; code?: string };
  if (res.status !== 201 || typeof body.checkoutUrl !== 'string')
    throw new OncepayError(
      DEMO_CODES.UNEXPECTED_ANSWER,
      `POST /v1/invoices answered ${res.status} ${body.code ?? ''}: no checkout link`,
    );
  // The API answers a path when it is not told its public URL: the demo's API is on loopback.
  const checkoutUrl = new URL(body.checkoutUrl, apiUrl).toString();
  const consoleUrl = new URL('/console/', apiUrl).toString();
  say.step(`checkout page of ${CHECKOUT_INVOICE_ID} (created by POST /v1/invoices): ${checkoutUrl}`);
  say.step(`operator console: ${consoleUrl}`);
  return { checkoutUrl, consoleUrl };
}
