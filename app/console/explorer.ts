// Where a signature or an account is shown on an explorer, for the configured cluster (pure). Solana Explorer's
// `?cluster=` names devnet and testnet; mainnet-beta needs none; any other cluster (localnet, a private one) is
// `custom` with its RPC URL, or an explorer URL template the operator gives (`{kind}` tx|address, `{id}`).

export interface ExplorerConfig {
  /** The cluster name the ledger records (receipts.cluster): mainnet-beta, devnet, testnet, localnet, … */
  cluster: string;
  /** For a custom cluster: its RPC URL, passed to Solana Explorer as customUrl. */
  rpcUrl?: string;
  /** A template instead of Solana Explorer, e.g. `http://127.0.0.1:3000/{kind}/{id}`. */
  template?: string;
}

export function explorerUrl(kind: 'tx' | 'address', id: string, c: ExplorerConfig): string {
  const safeId = encodeURIComponent(id);
  if (c.template) return c.template.replace('{kind}', kind).replace('{id}', safeId);
  const base = `https://explorer.solana.com/${kind}/${safeId}`;
  if (c.cluster === 'mainnet-beta' || c.cluster === 'mainnet') return base;
  if (c.cluster === 'devnet' || c.cluster === 'testnet') return `${base}?cluster=${c.cluster}`;
  const custom = c.rpcUrl ?? 'http://127.0.0.1:8899';
  return `${base}?cluster=custom&customUrl=${encodeURIComponent(custom)}`;
}
