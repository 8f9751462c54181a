// The checkout page's public token: 192 random bits (24 bytes, base64url), never derived from the merchant's ids,
// so knowing one invoice's link says nothing about another's. Random is right here: it is a capability, not a key
// of an operation (the invoice's identity is the merchant's invoice id; this token is stored once with it).
import { randomBytes } from 'crypto';

const CHECKOUT_ID = /^[A-Za-z0-9_-]{32}$/;

export function newCheckoutId(): string {
  return randomBytes(24).toString('base64url');
}

/** The shape of a checkout id (a request for anything else is a 404 before any database read). */
export function isCheckoutId(x: unknown): x is string {
  return typeof x === 'string' && CHECKOUT_ID.test(x);
}

/** The page's path for a checkout id. */
export function checkoutPath(checkoutId: string): string {
  return `/pay/${checkoutId}`;
}
