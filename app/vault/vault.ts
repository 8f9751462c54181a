// Vaults on the chain: the merchant PDA's associated token account for a mint (SPL Token or Token-2022), created
// idempotently, and `check`: the vault's and mint's state read back and assessed (assess.ts).
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import {
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
  unpackAccount,
  unpackMint,
} from '@solana/spl-token';
import { OncepayError } from '../../common/errors';
import { SendOptions, sendAndConfirm } from '../merchant/send';
import { Address, address } from '../types';
import { assessVault } from './assess';
import { VaultFinding } from './findings';
import { VAULT_CODES } from '../../common/errors/codes';

export interface VaultChain {
  connection: Connection;
  send?: SendOptions;
}

/** The token program that owns `mint` (SPL Token or Token-2022). */
export async function mintTokenProgram(c: VaultChain, mint: PublicKey): Promise<PublicKey> {
  const info = await c.connection.getAccountInfo(mint, 'confirmed');
  if (!info)
    throw new OncepayError(VAULT_CODES.MINT_INVALID, `no account at mint ${mint.toBase58()}`, {
      mint: mint.toBase58(),
    });
  if (!info.owner.equals(TOKEN_PROGRAM_ID) && !info.owner.equals(TOKEN_2022_PROGRAM_ID)) {
    throw new OncepayError(
      VAULT_CODES.MINT_INVALID,
      `${mint.toBase58()} is owned by ${info.owner.toBase58()}, not a token program`,
      { mint: mint.toBase58() },
    );
  }
  unpackMint(mint, info, info.owner); // throws if it is not a mint
  return info.owner;
}

/** The vault address of a merchant for a mint: the merchant PDA's associated token account. */
export function vaultAddress(merchant: PublicKey, mint: PublicKey, tokenProgram: PublicKey): PublicKey {
  return getAssociatedTokenAddressSync(mint, merchant, true, tokenProgram);
}

export interface VaultCreated {
  vault: Address;
  tokenProgram: Address;
  created: boolean;
  signature: string | null;
}

export async function createVault(
  c: VaultChain,
  o: { payer: Keypair; merchant: PublicKey; mint: PublicKey },
): Promise<VaultCreated> {
  const tokenProgram = await mintTokenProgram(c, o.mint);
  const vault = vaultAddress(o.merchant, o.mint, tokenProgram);
  const result = (created: boolean, signature: string | null): VaultCreated => ({
    vault: address(vault),
    tokenProgram: address(tokenProgram),
    created,
    signature,
  });
  if (await c.connection.getAccountInfo(vault, 'confirmed')) return result(false, null);
  const ix = createAssociatedTokenAccountIdempotentInstruction(
    o.payer.publicKey,
    vault,
    o.merchant,
    o.mint,
    tokenProgram,
  );
  const landed = await sendAndConfirm(c.connection, [ix], [o.payer], c.send);
  return result(true, landed.signature);
}

export interface VaultCheck {
  vault: Address;
  mint: Address;
  merchant: Address;
  tokenProgram: Address;
  balance: bigint;
  findings: VaultFinding[];
  /** True when no finding is a danger. */
  ok: boolean;
}

/** Read the vault (given, or the merchant's ATA for `mint`) and its mint, and assess them. */
export async function checkVault(
  c: VaultChain,
  o: { merchant: PublicKey; vault?: PublicKey; mint?: PublicKey },
): Promise<VaultCheck> {
  let vaultKey = o.vault;
  if (!vaultKey) {
    if (!o.mint)
      throw new OncepayError(VAULT_CODES.NOT_FOUND, "give the vault, or the mint to check the merchant's vault for it");
    vaultKey = vaultAddress(o.merchant, o.mint, await mintTokenProgram(c, o.mint));
  }
  const info = await c.connection.getAccountInfo(vaultKey, 'confirmed');
  if (!info)
    throw new OncepayError(
      VAULT_CODES.NOT_FOUND,
      `no account at vault ${vaultKey.toBase58()}: create it with \`oncepay vault create\``,
      { vault: vaultKey.toBase58() },
    );
  let account;
  try {
    account = unpackAccount(vaultKey, info, info.owner);
  } catch (e) {
    throw new OncepayError(
      VAULT_CODES.NOT_TOKEN_ACCOUNT,
      `${vaultKey.toBase58()} is not a token account: ${(e as Error).message}`,
      { vault: vaultKey.toBase58() },
    );
  }
  const mintKey = o.mint ?? account.mint;
  const mintInfo = await c.connection.getAccountInfo(mintKey, 'confirmed');
  if (!mintInfo)
    throw new OncepayError(VAULT_CODES.MINT_INVALID, `no account at mint ${mintKey.toBase58()}`, {
      mint: mintKey.toBase58(),
    });
  const mint = unpackMint(mintKey, mintInfo, mintInfo.owner);
  const findings = assessVault(account, mint, o.merchant);
  return {
    vault: address(vaultKey),
    mint: address(mintKey),
    merchant: address(o.merchant),
    tokenProgram: address(info.owner),
    balance: account.amount,
    findings,
    ok: !findings.some((f) => f.severity === 'danger'),
  };
}
