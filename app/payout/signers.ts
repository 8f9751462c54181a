// Which merchants a set of payout-authority keys may sign for: the merchants registered in api_merchants whose
// on-chain config (the PDA ["merchant", merchant_authority]) names one of the keys as its payout authority. A
// worker claims only those merchants' payouts, and `payout execute` / `payout resume` / an exception refund run only
// those: one merchant's key never signs another merchant's payouts (the program would refuse them as Unauthorized,
// 6001, and the fee would be paid for nothing). The chain is the truth: the registry does not store the payout
// authority, which the merchant can rotate at any time (set_payout_authority).
import { Keypair } from '@solana/web3.js';
import { OncepayError } from '../../common/errors';
import { PAYOUT_CODES } from '../../common/errors/codes';
import { Db } from '../../db/sql';
import { decodeMerchantAccount, MerchantAccount } from '../merchant/account';
import { MAX_ACCOUNTS_PER_CALL, PayoutChain } from './chain';
import { listMerchants, MerchantRow } from '../merchant/store';

/** One registered merchant as the keys see it. */
export interface MerchantSigning {
  id: string;
  name: string;
  merchant: string;
  /** The payout authority its on-chain config names (null: no config on chain, or not readable as one). */
  payoutAuthority: string | null;
  /** True when that payout authority is one of the keys. */
  signable: boolean;
}

export interface Signers {
  /** api_merchants id → the key that signs its payouts. */
  byMerchant: ReadonlyMap<string, Keypair>;
  /** Every registered merchant, signable or not (for the start-up log and `--help`'s promise). */
  merchants: MerchantSigning[];
}

export const NO_SIGNERS: Signers = { byMerchant: new Map(), merchants: [] };

/** Pure: match each merchant's on-chain config (null when absent or malformed) against the keys. */
export function matchSigners(
  merchants: readonly MerchantRow[],
  configs: ReadonlyArray<MerchantAccount | null>,
  keys: readonly Keypair[],
): Signers {
  const byKey = new Map(keys.map((k) => [k.publicKey.toBase58(), k]));
  const byMerchant = new Map<string, Keypair>();
  const out: MerchantSigning[] = merchants.map((m, i) => {
    const payoutAuthority = configs[i]?.payoutAuthority ?? null;
    const key = payoutAuthority === null ? undefined : byKey.get(payoutAuthority);
    if (key) byMerchant.set(m.id, key);
    return { id: m.id, name: m.name, merchant: m.merchantAddress, payoutAuthority, signable: key !== undefined };
  });
  return { byMerchant, merchants: out };
}

type ConfigReader = Pick<PayoutChain, 'opAccountsData'>;

/** Every registered merchant matched against `keys` (readSignersOf). */
export async function readSigners(db: Db, chain: ConfigReader, keys: readonly Keypair[]): Promise<Signers> {
  return readSignersOf(chain, keys, await listMerchants(db));
}

/**
 * Read these merchants' on-chain configs (getMultipleAccounts, at most MAX_ACCOUNTS_PER_CALL a call, at
 * `confirmed`) and match them against `keys`. A config that is absent or malformed makes its merchant unsignable
 * (never an error: one broken registration must not stop the others' payouts).
 */
export async function readSignersOf(
  chain: ConfigReader,
  keys: readonly Keypair[],
  merchants: readonly MerchantRow[],
): Promise<Signers> {
  const configs: Array<MerchantAccount | null> = new Array(merchants.length).fill(null);
  // Grouped by program (a registry may hold merchants of several program deployments).
  const byProgram = new Map<string, number[]>();
  merchants.forEach((m, i) => byProgram.set(m.programId, [...(byProgram.get(m.programId) ?? []), i]));
  for (const indexes of byProgram.values()) {
    for (let at = 0; at < indexes.length; at += MAX_ACCOUNTS_PER_CALL) {
      const chunk = indexes.slice(at, at + MAX_ACCOUNTS_PER_CALL);
      const data = await chain.opAccountsData(
        chunk.map((i) => merchants[i].merchantAddress),
        merchants[chunk[0]].programId,
        'confirmed',
      );
      chunk.forEach((i, k) => {
        const d = data[k];
        if (d === null) return;
        try {
          configs[i] = decodeMerchantAccount(merchants[i].merchantAddress, d);
        } catch {
          configs[i] = null; // not a merchant config: unsignable
        }
      });
    }
  }
  return matchSigners(merchants, configs, keys);
}

/** The key among `keys` that signs `merchant`'s payouts (read from the chain now), or SIGNER_UNAUTHORIZED. */
export async function signerOfMerchant(
  chain: ConfigReader,
  keys: readonly Keypair[],
  merchant: MerchantRow,
  what: string,
): Promise<Keypair> {
  return signerFor(await readSignersOf(chain, keys, [merchant]), merchant.id, what);
}

/** The key that signs merchant `merchantId`'s payouts, or SIGNER_UNAUTHORIZED naming who does. */
export function signerFor(s: Signers, merchantId: string, what: string): Keypair {
  const key = s.byMerchant.get(merchantId);
  if (key) return key;
  const m = s.merchants.find((x) => x.id === merchantId);
  throw new OncepayError(
    PAYOUT_CODES.SIGNER_UNAUTHORIZED,
    m?.payoutAuthority
      ? `${what}: merchant ${m.merchant} is paid out by ${m.payoutAuthority}, and no key given is that payout authority; nothing was signed`
      : `${what}: merchant ${m?.merchant ?? merchantId} has no readable merchant config on chain; nothing was signed`,
    { merchant: m?.merchant ?? merchantId, payoutAuthority: m?.payoutAuthority ?? null },
  );
}
