// A JSON reader that never rounds an integer: JSON.parse turns 18446744073709551615 into 18446744073709552000,
// and the RPC's jsonParsed encoding writes System `lamports` (and balances) as bare JSON numbers. Integers outside
// ±(2^53 − 1) come back as bigint; everything else is what JSON.parse would give. Syntax errors carry line/column.
import { OncepayError } from '../../common/errors';
import { DECODE_CODES } from './codes';

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
 * Parse one JSON text. Fast path: JSON.parse when no digit run could exceed 2^53. Slow path (or on a syntax error,
 * to find where): the exact reader below. `lineOffset` shifts reported lines (for JSON lines).
 */
export function parseJsonExact(text: string, lineOffset = 0): unknown {
  if (!LONG_DIGITS.test(text) || !LONG_NUMBER.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // fall through: the exact reader reports the position
    }
  }
  return new Reader(text, lineOffset).document();
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
// eslint-disable-next-line no-control-regex
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
