// A JSON reader that never rounds an integer: JSON.parse turns 18446744073709551615 into 18446744073709552000,
// and the RPC's jsonParsed encoding writes System `lamports` (and balances) as bare JSON numbers. Integers outside
// ±(2^53 − 1) come back as bigint; everything else is what JSON.parse would give. Syntax errors carry line/column.
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from '../../common/errors/codes';

/** A position inside the text, 1-based line and column (in UTF-16 units), 0-based offset. */
export interface TextPosition {
  line: number;
  column: number;
  position: number;
}

export function positionOf(text: string, offset: number): TextPosition {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1, position: offset };
}

// A bare number of 16+ digits (after ':', '[' or ',') may be an integer beyond 2^53; only then is the slow, exact
// reader needed. Long digit runs inside strings (token amounts are strings) mostly do not match; when one does, the
// cost is speed, never correctness.
const LONG_NUMBER = /(^|[:[,])\s*-?[0-9]{16,}/;
const LONG_DIGITS = /[0-9]{16}/; // cheap first test: most documents have no 16-digit run at all

/**
 * Parse one JSON text.
 * 1. No bare number of 16+ digits: JSON.parse as is.
 * 2. Some: each bare integer of 16+ digits outside strings is rewritten as a marked string ("\u0000" + digits),
 *    JSON.parse reads the result, and a walk turns marked strings back into numbers (if safe) or bigints. Only when
 *    the text holds no "\u0000" of its own, so a mark cannot be forged.
 * 3. Otherwise, and for syntax errors (to say where): the character-level reader below.
 * `lineOffset` shifts reported lines (for JSON lines).
 */
export function parseJsonExact(text: string, lineOffset = 0): unknown {
  if (!LONG_DIGITS.test(text) || !LONG_NUMBER.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return new Reader(text, lineOffset).document(); // reports the position
    }
  }
  if (!text.includes('\\u0000')) {
    const marked = markLongIntegers(text);
    if (marked !== null) {
      try {
        return unmark(JSON.parse(marked));
      } catch {
        // fall through: the character reader reports the position
      }
    }
  }
  return new Reader(text, lineOffset).document();
}

// A bare integer of 16+ digits not followed by a fraction or exponent (candidates; strings are skipped below).
const CANDIDATE = /-?[1-9][0-9]{15,}(?![0-9.eE])/g;

/**
 * The text with every candidate outside a string wrapped as "\u0000<digits>". Strings are stepped over with
 * indexOf (a quote preceded by an odd number of backslashes is escaped). null if a string is unterminated.
 */
export function markLongIntegers(text: string): string | null {
  let out = '';
  let copied = 0; // text[0, copied) is in `out`
  let outside = 0; // text[outside] is known not to be inside a string
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(text); m !== null; m = CANDIDATE.exec(text)) {
    const at = m.index;
    let inString = false;
    for (let q = text.indexOf('"', outside); q !== -1 && q < at; q = text.indexOf('"', outside)) {
      const close = closingQuote(text, q);
      if (close === -1) return null;
      outside = close + 1;
      if (close > at) {
        inString = true;
        break;
      }
    }
    if (inString) {
      CANDIDATE.lastIndex = outside;
      continue;
    }
    const before = text.charCodeAt(at - 1);
    if (before >= 0x30 && before <= 0x39) continue; // the tail of a longer (invalid) number: JSON.parse will say
    out += `${text.slice(copied, at)}"\\u0000${m[0]}"`;
    copied = at + m[0].length;
    outside = copied;
  }
  return out + text.slice(copied);
}

/** Index of the quote closing the string opened at `open`, or -1. */
function closingQuote(text: string, open: number): number {
  for (let c = text.indexOf('"', open + 1); c !== -1; c = text.indexOf('"', c + 1)) {
    let b = c - 1;
    while (text.charCodeAt(b) === 0x5c) b--;
    if ((c - 1 - b) % 2 === 0) return c;
  }
  return -1;
}

/** Marked strings back to numbers (safe integers) or bigints, in place. */
function unmark(v: unknown): unknown {
  if (typeof v === 'string') {
    if (v.charCodeAt(0) !== 0) return v;
    const digits = v.slice(1);
    const n = Number(digits);
    return Number.isSafeInteger(n) ? n : BigInt(digits);
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const u = unmark(v[i]);
      if (u !== v[i]) v[i] = u;
    }
    return v;
  }
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const u = unmark(o[k]);
      // only marked strings change; defineProperty keeps a "__proto__" key a plain data property
      if (u !== o[k]) Object.defineProperty(o, k, { value: u, writable: true, enumerable: true, configurable: true });
    }
  }
  return v;
}

/** The character-level reader alone (exported for differential tests against parseJsonExact). */
export function parseJsonByCharacter(text: string, lineOffset = 0): unknown {
  return new Reader(text, lineOffset).document();
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
// eslint-disable-next-line no-control-regex -- JSON forbids raw control characters in strings: this finds them
const CONTROL = /[\u0000-\u001f]/;
// sticky: matches exactly at lastIndex, no slicing
const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

// A stateful cursor over the text; a class because it is a loop over shared state.
class Reader {
  private i = 0;
  constructor(
    private readonly text: string,
    private readonly lineOffset: number,
  ) {}

  document(): unknown {
    this.ws();
    const v = this.value(0);
    this.ws();
    if (this.i !== this.text.length) this.fail('unexpected data after the JSON value');
    return v;
  }

  private fail(what: string): never {
    const at = positionOf(this.text, this.i);
    const line = at.line + this.lineOffset;
    throw new OncepayError(DECODE_CODES.MALFORMED_JSON, `${what} at line ${line} column ${at.column}`, {
      line,
      column: at.column,
      position: at.position,
    });
  }

  private ws(): void {
    while (this.i < this.text.length && WS.has(this.text.charCodeAt(this.i))) this.i++;
  }

  private value(depth: number): unknown {
    if (depth > 512) this.fail('JSON nested too deeply');
    const c = this.text[this.i];
    switch (c) {
      case '{':
        return this.object(depth);
      case '[':
        return this.array(depth);
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      case undefined:
        return this.fail('unexpected end of input');
      default:
        if (c === '-' || (c >= '0' && c <= '9')) return this.number();
        return this.fail(`unexpected character ${JSON.stringify(c)}`);
    }
  }

  private literal(word: string, v: unknown): unknown {
    if (this.text.startsWith(word, this.i)) {
      this.i += word.length;
      return v;
    }
    return this.fail('invalid literal');
  }

  private object(depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.i++; // {
    this.ws();
    if (this.text[this.i] === '}') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.text[this.i] !== '"') this.fail('expected a string key');
      const key = this.string();
      this.ws();
      if (this.text[this.i] !== ':') this.fail("expected ':'");
      this.i++;
      this.ws();
      const v = this.value(depth + 1);
      // defineProperty: a "__proto__" key must stay data, as with JSON.parse
      Object.defineProperty(out, key, { value: v, writable: true, enumerable: true, configurable: true });
      this.ws();
      const c = this.text[this.i];
      if (c === ',') {
        this.i++;
        continue;
      }
      if (c === '}') {
        this.i++;
        return out;
      }
      this.fail("expected ',' or '}'");
    }
  }

  private array(depth: number): unknown[] {
    const out: unknown[] = [];
    this.i++; // [
    this.ws();
    if (this.text[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value(depth + 1));
      this.ws();
      const c = this.text[this.i];
      if (c === ',') {
        this.i++;
        continue;
      }
      if (c === ']') {
        this.i++;
        return out;
      }
      this.fail("expected ',' or ']'");
    }
  }

  private string(): string {
    // fast path: no escape and no control character before the next quote
    const close = this.text.indexOf('"', this.i + 1);
    if (close > 0) {
      const body = this.text.slice(this.i + 1, close);
      if (!body.includes('\\') && !CONTROL.test(body)) {
        this.i = close + 1;
        return body;
      }
    }
    const start = this.i;
    this.i++; // opening quote
    let simple = true;
    for (;;) {
      const code = this.text.charCodeAt(this.i);
      if (Number.isNaN(code)) this.fail('unterminated string');
      if (code === 0x22) break;
      if (code < 0x20) this.fail('control character in string');
      if (code === 0x5c) {
        simple = false;
        const e = this.text[this.i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i + 2, this.i + 6))) this.fail('invalid \\u escape');
          this.i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) this.fail('invalid escape');
        this.i += 2;
        continue;
      }
      this.i++;
    }
    this.i++; // closing quote
    const raw = this.text.slice(start, this.i);
    return simple ? raw.slice(1, -1) : (JSON.parse(raw) as string);
  }

  private number(): number | bigint {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.text);
    if (!m) return this.fail('invalid number');
    this.i += m[0].length;
    if (m[2] === undefined && m[3] === undefined) {
      const n = Number(m[0]);
      if (!Number.isSafeInteger(n)) return BigInt(m[0]);
      return n;
    }
    return Number(m[0]);
  }
}
