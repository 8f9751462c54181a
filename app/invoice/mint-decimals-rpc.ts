// A mint's decimals from the chain (SPL Token or Token-2022 mint account: byte 44 is `decimals`, byte 45
// `is_initialized`). Read once per mint: store.ts keeps the answer.
import { Connection, PublicKey } from '@solana/web3.js';
import type { ReadMintDecimals } from './store';

const TOKEN_PROGRAMS = new Set([
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
]);
const MINT_SIZE = 82;

export function mintDecimalsFromChain(connection: Connection): ReadMintDecimals {
  return async (mint) => {
    const info = await connection.getAccountInfo(new PublicKey(mint), 'finalized');
    if (!info || !TOKEN_PROGRAMS.has(info.owner.toBase58()) || info.data.length < MINT_SIZE) return null;
    if (info.data[45] !== 1) return null;
    return info.data[44];
  };
}
