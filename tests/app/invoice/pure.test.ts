import { expect } from 'chai';
import { OncepayError } from '../../../common/errors';
import { Keypair } from '@solana/web3.js';
import { parseURL, TransferRequestURL } from '@solana/pay';
import { checkoutPath, isCheckoutId, newCheckoutId } from '../../../app/invoice/checkout-id';
import { decodeCursor, encodeCursor } from '../../../app/invoice/list-cursor';
import { paymentUrl } from '../../../app/invoice/payment-url';
import { tokensOf } from '../../../app/invoice/tokens';

describe('app/invoice pure parts: checkout id, tokens, Solana Pay URL, cursor', () => {
  it('draws checkout ids of 192 random bits, never twice', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newCheckoutId()));
    expect(ids.size).to.equal(2000);
    for (const id of ids) {
      expect(isCheckoutId(id)).to.equal(true);
      expect(Buffer.from(id, 'base64url').length).to.equal(24);
    }
    expect(checkoutPath('abc')).to.equal('/pay/abc');
    for (const bad of ['', 'inv-1', 'a'.repeat(31), `${'a'.repeat(31)}/`, `${'a'.repeat(31)}.`, 'a'.repeat(33)])
      expect(isCheckoutId(bad), bad).to.equal(false);
  });

  it('turns exact base units into tokens without a float', () => {
    const cases: Array<[bigint, number, string]> = [
      [1_500_000n, 6, '1.5'],
      [1n, 9, '0.000000001'],
      [0n, 6, '0'],
      [100n, 0, '100'],
      [1_000_000n, 6, '1'],
      [18446744073709551615n, 9, '18446744073.709551615'],
      [18446744073709551615n, 6, '18446744073709.551615'],
      [123n, 20, '0.00000000000000000123'],
    ];
    for (const [amount, decimals, tokens] of cases) expect(tokensOf(amount, decimals), tokens).to.equal(tokens);
    expect(() => tokensOf(-1n, 6)).to.throw(OncepayError, 'ONCEPAY__AMOUNT__OUT_OF_RANGE');
    expect(() => tokensOf(1n, 1.5)).to.throw(OncepayError, 'ONCEPAY__AMOUNT__OUT_OF_RANGE');
  });

  it('builds the Solana Pay URL with @solana/pay, exact at u64::MAX, and parses back', () => {
    const recipient = Keypair.generate().publicKey.toBase58();
    const mint = Keypair.generate().publicKey.toBase58();
    const reference = Keypair.generate().publicKey.toBase58();
    const req = {
      recipient,
      mint,
      amount: 18446744073709551615n,
      decimals: 6,
      reference,
      label: 'Café & <Co>',
      message: 'Order #42 ?x=1',
      memo: 'm',
    };
    const url = paymentUrl(req);
    expect(url.startsWith(`solana:${recipient}?`)).to.equal(true);
    const p = parseURL(url) as TransferRequestURL;
    expect(p.amount!.toFixed()).to.equal('18446744073709.551615');
    expect(p.splToken!.toBase58()).to.equal(mint);
    expect(p.reference!.map((k) => k.toBase58())).to.deep.equal([reference]);
    expect(p).to.include({ label: 'Café & <Co>', message: 'Order #42 ?x=1', memo: 'm' });
    expect(paymentUrl(req)).to.equal(url); // a function of the stored fields
    const sol = parseURL(
      paymentUrl({ ...req, mint: 'SOL', amount: 1n, decimals: 9, label: null, message: null, memo: null }),
    ) as TransferRequestURL;
    expect(sol.splToken).to.equal(undefined);
    expect(sol.amount!.toFixed()).to.equal('0.000000001');
    expect(sol.label).to.equal(undefined);
  });

  it('round-trips list cursors and refuses anything else', () => {
    expect(decodeCursor(encodeCursor('42'))).to.equal('42');
    for (const bad of [
      '',
      'nope',
      Buffer.from('i:0').toString('base64url'),
      Buffer.from('i:-1').toString('base64url'),
      'a/b',
    ])
      expect(decodeCursor(bad), bad).to.equal(null);
  });
});
