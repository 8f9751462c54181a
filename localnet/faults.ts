import { OncepayError, LOCALNET_CODES } from '../common/errors';
// Fault injection for the HTTP layer: answers that never come (after executing: `drop`; before: `timeout`),
// rate limiting (429), server errors (500), and answers from a node without the transaction history (`forget`:
// getSignatureStatuses answers from the status cache alone, whatever searchTransactionHistory asks). Rules are
// consumed in order, one HTTP request each.
export type FailKind = '429' | 'timeout' | '500';

export interface DropRule {
  /** Only requests calling this method (any call of a batch); all methods if absent. */
  method?: string;
  count?: number;
  /** `drop` destroys the socket after executing; `delay` answers after `delayMs`. */
  mode?: 'drop' | 'delay';
  delayMs?: number;
}

export interface FailRule {
  kind: FailKind;
  method?: string;
  count?: number;
  /** For `timeout`: how long the request hangs before the socket is destroyed (default 2000 ms). */
  delayMs?: number;
}

/** The next `count` requests calling `method` (default getSignatureStatuses) are answered without the history. */
export interface ForgetRule {
  method?: string;
  count?: number;
  /**
   * Answered by a node behind the cluster, that has not seen the transactions at all: no status, not even from the
   * status cache (the last 300 slots). Default: the cache is kept, only older history is missing.
   */
  unseen?: boolean;
}

export interface ResponseFaults {
  dropNextResponses(rule: DropRule): void;
  failNext(rule: FailRule): void;
  forgetHistory(rule: ForgetRule): void;
  clear(): void;
  /** Server side: the failure to apply to a request calling `methods`, if one is armed (consumes it). */
  takeFailure(methods: string[]): { kind: FailKind; delayMs: number } | null;
  /** Server side: the drop to apply to the response, if one is armed (consumes it). */
  takeDrop(methods: string[]): { mode: 'drop' | 'delay'; delayMs: number } | null;
  /** Server side: how this request is answered without the history, if a rule is armed (consumes it). */
  takeForget(methods: string[]): { unseen: boolean } | null;
}

interface Armed<T> {
  rule: T;
  left: number;
}

function take<T extends { method?: string }>(list: Array<Armed<T>>, methods: string[]): T | null {
  const i = list.findIndex((a) => a.left > 0 && (a.rule.method === undefined || methods.includes(a.rule.method)));
  if (i < 0) return null;
  const a = list[i];
  a.left -= 1;
  if (a.left <= 0) list.splice(i, 1);
  return a.rule;
}

export function createResponseFaults(): ResponseFaults {
  const drops: Array<Armed<DropRule>> = [];
  const fails: Array<Armed<FailRule>> = [];
  const forgets: Array<Armed<ForgetRule>> = [];
  return {
    dropNextResponses(rule) {
      drops.push({ rule, left: rule.count ?? 1 });
    },
    failNext(rule) {
      if (!['429', 'timeout', '500'].includes(rule.kind))
        throw new OncepayError(LOCALNET_CODES.INVALID_OPTION, `unknown fault kind ${String(rule.kind)}`);
      fails.push({ rule, left: rule.count ?? 1 });
    },
    forgetHistory(rule) {
      forgets.push({
        rule: { method: rule.method ?? 'getSignatureStatuses', unseen: rule.unseen === true },
        left: rule.count ?? 1,
      });
    },
    clear() {
      drops.length = 0;
      fails.length = 0;
      forgets.length = 0;
    },
    takeFailure(methods) {
      const r = take(fails, methods);
      return r ? { kind: r.kind, delayMs: r.delayMs ?? 2000 } : null;
    },
    takeDrop(methods) {
      const r = take(drops, methods);
      return r ? { mode: r.mode ?? 'drop', delayMs: r.delayMs ?? 1000 } : null;
    },
    takeForget(methods) {
      const r = take(forgets, methods);
      return r ? { unseen: r.unseen === true } : null;
    },
  };
}
