// JSON with exact u64s. The RPC wire format carries lamports and slots as JSON numbers, which a JS number cannot
// hold beyond 2^53: inside we keep bigint and write the digits verbatim.
const MARK = '\u0001big:';

export function stringifyRpc(value: unknown): string {
  const text = JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${MARK}${v.toString()}` : v));
  // JSON.stringify escapes U+0001 as the six characters \u0001.
  return text.replace(/"\\u0001big:(-?[0-9]+)"/g, '$1');
}

/** For the ledger files: bigints survive a round trip as {"$big":"…"}. */
export function stringifyLedger(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? { $big: v.toString() } : v));
}

export function parseLedger<T>(text: string): T {
  return JSON.parse(text, (_k, v) =>
    v !== null &&
    typeof v === 'object' &&
    !Array.isArray(v) &&
    typeof v.$big === 'string' &&
    Object.keys(v).length === 1
      ? BigInt(v.$big)
      : v,
  ) as T;
}
