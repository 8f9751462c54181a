// Reading what `oncepay decode` / `ingest` are given: one getTransaction result, an RPC envelope around one, a
// JSON array of either (an RPC batch reply is such an array), or JSON lines. A getBlock result is expanded into
// its transactions. Integers beyond 2^53 stay exact (see json-reader.ts).
import { OncepayError, isOncepayError } from '../../common/errors';
import { DECODE_CODES } from '../../common/errors/codes';
import { isRecord, show } from './json-shape';
import { parseJsonExact } from './json-reader';

export interface InputError {
  /** 1-based line of the input where the bad item starts (1 for a single JSON document). */
  line: number;
  /** Position of the item inside a JSON array, when the document is an array. */
  index?: number;
  code: string;
  message: string;
}

export interface LenientInput {
  items: unknown[];
  errors: InputError[];
}

function isBlock(v: Record<string, unknown>): boolean {
  return Array.isArray(v.transactions) && typeof v.blockhash === 'string';
}

/** One parsed JSON value → the transaction objects it stands for. Throws OncepayError for an RPC error / null. */
function unwrap(v: unknown): unknown[] {
  if (Array.isArray(v)) return v.flatMap((x) => unwrapOne(x));
  return unwrapOne(v);
}

function unwrapOne(v: unknown): unknown[] {
  if (!isRecord(v)) return [v]; // decodeTransaction names what is wrong with it
  let body: unknown = v;
  if ('jsonrpc' in v || (('result' in v || 'error' in v) && !('transaction' in v))) {
    if (v.error !== undefined && v.error !== null) {
      const err = isRecord(v.error) ? v.error : {};
      throw new OncepayError(DECODE_CODES.RPC_ERROR, `RPC error ${show(err.code)}: ${show(err.message)}`, {
        rpcCode: err.code,
      });
    }
    if (v.result === null || v.result === undefined) {
      throw new OncepayError(DECODE_CODES.TRANSACTION_NOT_FOUND, 'RPC result is null (transaction not found)');
    }
    body = v.result;
  }
  if (isRecord(body) && isBlock(body)) return expandBlock(body);
  return [body];
}

/** A getBlock result's transactions lack slot/blockTime: carry the block's over (slot only if the block has one). */
export function expandBlock(block: Record<string, unknown>, slot?: unknown): unknown[] {
  const txs = block.transactions as unknown[];
  const blockSlot = slot ?? block.slot ?? null;
  return txs.map((tx) => (isRecord(tx) ? { slot: blockSlot, blockTime: block.blockTime ?? null, ...tx } : tx));
}

/** A leading UTF-8 byte-order mark (files saved by some editors) is not JSON; drop it. */
function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

interface Line {
  line: number;
  text: string;
}

function nonEmptyLines(text: string): Line[] {
  const out: Line[] = [];
  text.split('\n').forEach((raw, i) => {
    const t = raw.trim();
    if (t !== '') out.push({ line: i + 1, text: raw });
  });
  return out;
}

/**
 * Is this JSON lines? Only if the whole text is not one JSON value, it has 2+ non-empty lines, and the first of
 * them is a complete JSON value by itself (a pretty-printed document with a typo is not).
 */
function looksLikeJsonLines(lines: Line[]): boolean {
  if (lines.length < 2) return false;
  try {
    parseJsonExact(lines[0].text);
    return true;
  } catch {
    return false;
  }
}

/** Strict: every item or nothing. Throws ONCEPAY__DECODE__MALFORMED_JSON (with line/column), RPC_ERROR, … */
export function readTransactionsInput(input: string): unknown[] {
  const text = withoutBom(input);
  if (text.trim() === '') return [];
  let whole: unknown;
  try {
    whole = parseJsonExact(text);
  } catch (e) {
    const lines = nonEmptyLines(text);
    if (!looksLikeJsonLines(lines)) throw e;
    return lines.flatMap((l) => withLine(l.line, () => unwrap(parseJsonExact(l.text, l.line - 1))));
  }
  return unwrap(whole);
}

function withLine<T>(line: number, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (isOncepayError(e) && e.context.line === undefined) {
      throw new OncepayError(e.code, `line ${line}: ${e.message.replace(`${e.code}: `, '')}`, { ...e.context, line });
    }
    throw e;
  }
}

/** Lenient: a bad line (or a bad element of an array) is reported, the good ones are kept. */
export function readTransactionsInputLenient(input: string): LenientInput {
  const text = withoutBom(input);
  const items: unknown[] = [];
  const errors: InputError[] = [];
  if (text.trim() === '') return { items, errors };
  const record = (line: number, e: unknown, index?: number): void => {
    if (!isOncepayError(e)) throw e;
    errors.push({ line, ...(index === undefined ? {} : { index }), code: e.code, message: e.message });
  };
  let whole: unknown;
  try {
    whole = parseJsonExact(text);
  } catch (e) {
    const lines = nonEmptyLines(text);
    if (!looksLikeJsonLines(lines)) {
      record(isOncepayError(e) && typeof e.context.line === 'number' ? e.context.line : 1, e);
      return { items, errors };
    }
    for (const l of lines) {
      try {
        items.push(...unwrap(parseJsonExact(l.text, l.line - 1)));
      } catch (err) {
        record(l.line, err);
      }
    }
    return { items, errors };
  }
  const values = Array.isArray(whole) ? whole : [whole];
  values.forEach((v, i) => {
    try {
      items.push(...unwrapOne(v));
    } catch (err) {
      record(1, err, Array.isArray(whole) ? i : undefined);
    }
  });
  return { items, errors };
}
