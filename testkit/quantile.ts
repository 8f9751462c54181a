// The nearest-rank quantile the benchmarks print (p50, p99): one rule, so their figures mean the same thing.

/** The q-quantile (0 < q ≤ 1) of `xs`, sorted ascending and not empty, by nearest rank. */
export function quantile(xs: readonly number[], q: number): number {
  return xs[Math.min(xs.length - 1, Math.max(0, Math.ceil(q * xs.length) - 1))];
}
