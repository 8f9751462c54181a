// The one error class every part throws. `code` is stable (ONCEPAY__<AREA>__<WHAT>): never reuse or rename one;
// each part lists its own codes in its `codes.ts`.
export class OncepayError extends Error {
  readonly code: string;
  readonly context: Record<string, unknown>;
  constructor(code: string, message: string, context: Record<string, unknown> = {}) {
    super(`${code}: ${message}`);
    this.name = 'OncepayError';
    this.code = code;
    this.context = context;
  }
}

export function isOncepayError(e: unknown, code?: string): e is OncepayError {
  return e instanceof OncepayError && (code === undefined || e.code === code);
}
