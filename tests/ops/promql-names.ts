// The metric names a PromQL expression reads, found by tokenizing it (strings, label matchers, ranges, durations,
// functions, aggregations, keywords and label lists are told apart from selectors). Pure; used by the check that
// the alert rules and the Grafana dashboard name only metrics the code exports.

const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);
/** Keywords followed by a parenthesised list of label names. */
const LABEL_LIST_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const OTHER_KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'inf', 'nan']);
const DURATION = /^\d+(?:ms|[smhdwy])(?:\d+(?:ms|[smhdwy]))*/;
const NUMBER = /^(?:0x[0-9a-f]+|\d*\.?\d+(?:e[+-]?\d+)?)/i;
const IDENT = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

export class PromqlNameError extends Error {}

/** Index just past the string literal that starts at `i` (", ' or `; backslash escapes in the first two). */
function skipString(s: string, i: number): number {
  const quote = s[i];
  for (let j = i + 1; j < s.length; j++) {
    if (quote !== '`' && s[j] === '\\') j++;
    else if (s[j] === quote) return j + 1;
  }
  throw new PromqlNameError(`unterminated string at ${i} in: ${s}`);
}

/** Index just past the bracket group that opens at `i` ({…}, […] or (…)), strings inside skipped. */
function skipGroup(s: string, i: number): number {
  const open = s[i];
  const close = open === '{' ? '}' : open === '[' ? ']' : ')';
  for (let j = i + 1; j < s.length;) {
    if (s[j] === '"' || s[j] === "'" || s[j] === '`') j = skipString(s, j);
    else if (s[j] === close) return j + 1;
    else j++;
  }
  throw new PromqlNameError(`unclosed ${open} at ${i} in: ${s}`);
}

/** A metric named inside a label matcher set: {__name__="x"}. A regex on __name__ cannot be checked. */
function nameMatchers(matchers: string): string[] {
  const out: string[] = [];
  for (const m of matchers.matchAll(/__name__\s*(=~|!~|!=|=)\s*"([^"]*)"/g)) {
    if (m[1] !== '=')
      throw new PromqlNameError(`__name__${m[1]}"${m[2]}" selects metrics by pattern: name them instead`);
    out.push(m[2]);
  }
  return out;
}

function nextNonSpace(s: string, i: number): number {
  while (i < s.length && /\s/.test(s[i])) i++;
  return i;
}

/** The distinct metric names the expression selects, in order of appearance. */
export function metricNames(expr: string): string[] {
  const s = expr.replace(/#[^\n]*/g, (c) => ' '.repeat(c.length));
  const names: string[] = [];
  const add = (n: string) => {
    if (!names.includes(n)) names.push(n);
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    const rest = s.slice(i);
    if (/\s/.test(c)) i++;
    else if (c === '"' || c === "'" || c === '`') i = skipString(s, i);
    else if (c === '{') {
      const end = skipGroup(s, i);
      nameMatchers(s.slice(i, end)).forEach(add);
      i = end;
    } else if (c === '[') i = skipGroup(s, i);
    else if (c === '$') {
      // A Grafana variable ($cluster, ${cluster}, $__rate_interval) standing for a value, never a metric.
      const m = /^\$(?:\{[^}]*\}|\w+)/.exec(rest);
      i += m ? m[0].length : 1;
    } else if (DURATION.test(rest) && !IDENT.test(rest)) i += DURATION.exec(rest)![0].length;
    else if (/[0-9.]/.test(c)) i += NUMBER.exec(rest)?.[0].length || 1;
    else if (IDENT.test(rest)) {
      const word = IDENT.exec(rest)![0];
      i += word.length;
      const lower = word.toLowerCase();
      const after = nextNonSpace(s, i);
      if (LABEL_LIST_KEYWORDS.has(lower)) {
        if (s[after] === '(') i = skipGroup(s, after);
      } else if (AGGREGATIONS.has(lower) || OTHER_KEYWORDS.has(lower)) {
        // operator or keyword
      } else if (s[after] === '(') {
        // a function call: its arguments are read by the loop
      } else add(word);
    } else i++;
  }
  return names;
}

/** A Grafana templating query: `label_values(<expr>, label)` or `query_result(<expr>)` read <expr>; `label_values(label)` none. */
export function templatingMetricNames(query: string): string[] {
  const q = query.trim();
  let m = /^label_values\(\s*(.*)\s*,\s*[a-zA-Z_]\w*\s*\)$/s.exec(q);
  if (m) return metricNames(m[1]);
  if (/^label_values\(\s*[a-zA-Z_]\w*\s*\)$/.test(q)) return [];
  m = /^query_result\((.*)\)$/s.exec(q);
  if (m) return metricNames(m[1]);
  throw new PromqlNameError(`unsupported Grafana templating query: ${q}`);
}

/** Is `name` one of `exported`, directly or as a histogram's/summary's _bucket/_sum/_count series? */
export function isExported(name: string, exported: ReadonlyMap<string, string>): boolean {
  if (exported.has(name)) return true;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  if (!m) return false;
  const type = exported.get(m[1]);
  return type === 'histogram' || (type === 'summary' && m[2] !== 'bucket');
}
