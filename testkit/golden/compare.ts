// Comparing two recordings of the golden scenario (scenario.ts) field by field. Values that must differ between
// nodes are replaced by what they are before comparing: strings the recording names in `volatile` (signatures,
// blockhashes) by that name, numbers under slot/time/height keys by their type, and any other blockhash or
// field by its kind. Everything else is compared exactly. Nothing is dropped silently: what `normalize` leaves out
// (each exchange's request, which is the scenario's own; getBlock's transactions other than the scenario's, i.e. a
// validator's vote transactions) it says where it does.
import type { Recording } from './scenario';

/** Keys whose numbers are a node's clock or chain position, never equal across nodes: compared as "a number". */
const VOLATILE_NUMBER_KEYS = new Set([
  'slot',
  'blockTime',
  'blockHeight',
  'lastValidBlockHeight',
  'parentSlot',
  'absoluteSlot',
  'subscription',
  'root',
  'parent',
  'id',
]);
/**
 * Keys whose strings depend on timing: whether a status read happens before or after its block is finalized
 * (~13 s on a validator) is not the node's answer to compare; its type is.
 */
const TIMING_STRING_KEYS = new Set(['confirmationStatus']);
/** Keys whose strings are blockhashes. */
const BLOCKHASH_KEYS = new Set(['blockhash', 'previousBlockhash', 'recentBlockhash']);

export interface Difference {
  /** Where, e.g. `exchanges.getTransaction:payout:json.response.result.meta.costUnits`. */
  path: string;
  golden: unknown;
  actual: unknown;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** A recording with its node-specific values replaced by what they are. */
export function normalize(rec: Recording): unknown {
  const named = (s: string): string => rec.volatile[s] ?? s;
  const walk = (v: unknown, key: string, path: string): unknown => {
    // A status's confirmations are a count until its block is finalized, then null: timing, like its
    // confirmationStatus (on localnet at load, 32 slots can pass within the scenario).
    if (key === 'confirmations' && (typeof v === 'number' || v === null)) return '<count or null>';
    if (typeof v === 'number' && VOLATILE_NUMBER_KEYS.has(key)) return '<number>';
    if (typeof v === 'number' && key === 'result' && /^\.exchanges\.(getSlot|getBlockHeight)[:.]/.test(path))
      return '<number>';
    if (typeof v === 'string') {
      // A blockhash field first: on localnet block 0's blockhash is the genesis hash, named so in `volatile`.
      if (BLOCKHASH_KEYS.has(key)) return '<blockhash>';
      if (rec.volatile[v]) return named(v);
      if (TIMING_STRING_KEYS.has(key)) return '<commitment>';
      return v;
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, key, `${path}[${i}]`));
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      // getBlock: a validator's block also carries its vote transactions; keep only the scenario's own (named).
      if (path.startsWith('.exchanges.getBlock:') && key === 'result' && Array.isArray(o.transactions)) {
        const ours = (o.transactions as Array<{ transaction: { signatures: string[] } }>).filter(
          (t) => rec.volatile[t.transaction.signatures[0]] !== undefined,
        );
        return walk({ ...o, transactions: ours }, '', path);
      }
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(o).sort()) {
        // An exchange's request is the scenario's own (the same on every node but for volatile values): the
        // comparison is of the node's answers.
        if (k === 'request' && path.startsWith('.exchanges.')) continue;
        out[k] = walk(o[k], k, `${path}.${k}`);
      }
      return out;
    }
    return v;
  };
  return walk({ node: rec.node, exchanges: rec.exchanges, notifications: rec.notifications }, '', '');
}

/** Every field where `actual` differs from `golden`, after normalising both. */
export function compareRecordings(golden: Recording, actual: Recording): Difference[] {
  const out: Difference[] = [];
  const diff = (g: unknown, a: unknown, path: string): void => {
    if (typeName(g) !== typeName(a)) {
      out.push({ path, golden: g, actual: a });
      return;
    }
    if (Array.isArray(g)) {
      const b = a as unknown[];
      if (g.length !== b.length) out.push({ path: `${path}.length`, golden: g.length, actual: b.length });
      for (let i = 0; i < Math.min(g.length, b.length); i++) diff(g[i], b[i], `${path}[${i}]`);
      return;
    }
    if (g && typeof g === 'object') {
      const go = g as Record<string, unknown>;
      const ao = a as Record<string, unknown>;
      for (const k of new Set([...Object.keys(go), ...Object.keys(ao)])) {
        const p = path ? `${path}.${k}` : k;
        if (!(k in ao)) out.push({ path: p, golden: go[k], actual: '<absent>' });
        else if (!(k in go)) out.push({ path: p, golden: '<absent>', actual: ao[k] });
        else diff(go[k], ao[k], p);
      }
      return;
    }
    if (g !== a) out.push({ path, golden: g, actual: a });
  };
  diff(normalize(golden), normalize(actual), '');
  return out;
}

/** A difference the project accepts, and why (localnet/README.md "Known differences" says the same). */
export interface KnownDifference {
  path: RegExp;
  reason: string;
  /** When given, only a difference at `path` that this accepts is known (e.g. a count off by exactly so much). */
  accepts?: (d: Difference) => boolean;
}

/** The differences not explained by `known`. */
export function unexplained(diffs: Difference[], known: KnownDifference[]): Difference[] {
  return diffs.filter((d) => !known.some((k) => k.path.test(d.path) && (k.accepts?.(d) ?? true)));
}

/**
 * True when `golden` and `actual` (numbers, or strings such as log lines) are the same but for numbers that differ
 * by exactly `by` either way (units spent, or the budget left), at least one of them.
 */
export function differsOnlyBy(d: Difference, by: number): boolean {
  const numbers = (v: unknown): number[] | null =>
    typeof v === 'number' ? [v] : typeof v === 'string' ? (v.match(/\d+/g) ?? []).map(Number) : null;
  const g = numbers(d.golden);
  const a = numbers(d.actual);
  if (!g || !a || g.length !== a.length) return false;
  if (typeof d.golden === 'string' && d.golden.replace(/\d+/g, '#') !== String(d.actual).replace(/\d+/g, '#'))
    return false;
  const deltas = g.map((x, i) => Math.abs(x - a[i]));
  return deltas.every((x) => x === 0 || x === by) && deltas.some((x) => x === by);
}
