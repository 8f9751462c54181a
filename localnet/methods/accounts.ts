// Account methods, answered at the asked commitment (processed = latest executed state).
import { PublicKey } from '@solana/web3.js';
import { AccountEncoding, AccountSnapshot, encodeAccount } from '../encode';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '../program-ids';
import { invalidParams } from '../rpc-error';
import { decodeMint, decodeTokenAccount, uiTokenAmount } from '../token-state';
import bs58 from 'bs58';
import { Handler, MethodContext, commitmentOf, config, pubkeyParam, withContext } from './context';

const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_BASE58_BYTES = 128;

function accountEncoding(c: Record<string, unknown>): AccountEncoding {
  const e = c.encoding ?? 'base58';
  if (e === 'binary') return 'base58';
  if (e === 'base58' || e === 'base64' || e === 'jsonParsed' || e === 'base64+zstd') return e;
  throw invalidParams(`Invalid params: unknown variant \`${String(e)}\``);
}

function dataSliceOf(c: Record<string, unknown>): { offset: number; length: number } | undefined {
  const d = c.dataSlice as { offset?: unknown; length?: unknown } | undefined;
  if (!d) return undefined;
  if (typeof d.offset !== 'number' || typeof d.length !== 'number')
    throw invalidParams('Invalid params: dataSlice needs offset and length');
  return { offset: d.offset, length: d.length };
}

function accountValue(ctx: MethodContext, address: string, c: Record<string, unknown>): unknown {
  return encodedAccount(ctx, ctx.chain.accountAt(address, commitmentOf(c)), c);
}

/** An account already read at the asked commitment, in the asked encoding. */
function encodedAccount(ctx: MethodContext, s: AccountSnapshot | null, c: Record<string, unknown>): unknown {
  if (!s) return null;
  const enc = accountEncoding(c);
  if (enc === 'base58' && s.data.length > MAX_BASE58_BYTES && !c.dataSlice) {
    throw invalidParams('Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.');
  }
  return encodeAccount(s, enc, ctx.chain.decimalsOf, dataSliceOf(c));
}

type Filter = { dataSize?: unknown; memcmp?: { offset?: unknown; bytes?: unknown; encoding?: unknown } };

/** getProgramAccounts filters: `dataSize` and `memcmp` (base58 by default, or base64). */
function matches(data: Uint8Array, filters: Filter[]): boolean {
  for (const f of filters) {
    if (f.dataSize !== undefined) {
      if (data.length !== f.dataSize) return false;
    } else if (f.memcmp) {
      const { offset, bytes, encoding } = f.memcmp;
      if (typeof offset !== 'number' || typeof bytes !== 'string')
        throw invalidParams('Invalid params: memcmp needs offset and bytes');
      const want = encoding === 'base64' ? Buffer.from(bytes, 'base64') : Buffer.from(bs58.decode(bytes));
      if (offset + want.length > data.length || !Buffer.from(data.subarray(offset, offset + want.length)).equals(want))
        return false;
    } else {
      throw invalidParams('Invalid params: unsupported filter');
    }
  }
  return true;
}

export const accountMethods: Record<string, Handler> = {
  getProgramAccounts: (ctx, p) => {
    const program = pubkeyParam(p, 0);
    const c = config(p, 1);
    const cm = commitmentOf(c);
    const filters = Array.isArray(c.filters) ? (c.filters as Filter[]) : [];
    const out: unknown[] = [];
    for (const a of ctx.chain.svm.getProgramAccounts(program as never)) {
      const at = ctx.chain.accountAt(a.address, cm);
      if (!at || at.owner !== program || !matches(at.data, filters)) continue;
      out.push({ pubkey: a.address, account: encodedAccount(ctx, at, c) });
    }
    return c.withContext === true ? withContext(ctx, cm, out) : out;
  },
  getTokenSupply: (ctx, p) => {
    const address = pubkeyParam(p, 0);
    const cm = commitmentOf(config(p, 1));
    const s = ctx.chain.accountAt(address, cm);
    const m = s ? decodeMint(s.owner, s.data) : null;
    if (!m) throw invalidParams('Invalid param: not a Token mint');
    return withContext(ctx, cm, uiTokenAmount(m.supply, m.decimals));
  },
  getAccountInfo: (ctx, p) => {
    const address = pubkeyParam(p, 0);
    const c = config(p, 1);
    return withContext(ctx, commitmentOf(c), accountValue(ctx, address, c));
  },
  getMultipleAccounts: (ctx, p) => {
    const keys = p[0];
    if (!Array.isArray(keys)) throw invalidParams('Invalid params: expected an array of public keys');
    if (keys.length > MAX_MULTIPLE_ACCOUNTS)
      throw invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
    const c = config(p, 1);
    return withContext(
      ctx,
      commitmentOf(c),
      keys.map((_k, i) => accountValue(ctx, pubkeyParam(keys, i), c)),
    );
  },
  getBalance: (ctx, p) => {
    const address = pubkeyParam(p, 0);
    const cm = commitmentOf(config(p, 1));
    return withContext(ctx, cm, ctx.chain.accountAt(address, cm)?.lamports ?? 0n);
  },
  getTokenAccountBalance: (ctx, p) => {
    const address = pubkeyParam(p, 0);
    const cm = commitmentOf(config(p, 1));
    const s = ctx.chain.accountAt(address, cm);
    const t = s ? decodeTokenAccount(s.owner, s.data) : null;
    if (!t) throw invalidParams('Invalid param: not a Token account');
    const decimals = ctx.chain.decimalsOf(t.mint);
    if (decimals === null) throw invalidParams('Invalid param: could not find mint');
    return withContext(ctx, cm, uiTokenAmount(t.amount, decimals));
  },
  getTokenAccountsByOwner: (ctx, p) => {
    const owner = pubkeyParam(p, 0);
    const filter = config(p, 1);
    const c = config(p, 2);
    let programs: string[];
    let mint: string | undefined;
    if (typeof filter.mint === 'string') {
      mint = filter.mint;
      const m = ctx.chain.getAccount(mint);
      if (!m) throw invalidParams('Invalid param: could not find mint');
      programs = [m.owner];
    } else if (typeof filter.programId === 'string') {
      if (filter.programId !== TOKEN_PROGRAM_ID && filter.programId !== TOKEN_2022_PROGRAM_ID)
        throw invalidParams('Invalid param: unrecognized Token program id');
      programs = [filter.programId];
    } else {
      throw invalidParams('Invalid params: expected {"mint": …} or {"programId": …}');
    }
    const ownerKey = new PublicKey(owner).toBase58();
    const cm = commitmentOf(c);
    const out: unknown[] = [];
    for (const program of programs) {
      for (const a of ctx.chain.svm.getProgramAccounts(program as never)) {
        // Filter on the account as of the commitment (one created after it is absent there).
        const at = ctx.chain.accountAt(a.address, cm);
        const t = at ? decodeTokenAccount(at.owner, at.data) : null;
        if (!t || t.owner !== ownerKey || (mint && t.mint !== mint)) continue;
        out.push({ pubkey: a.address, account: encodedAccount(ctx, at, c) });
      }
    }
    return withContext(ctx, cm, out);
  },
};
