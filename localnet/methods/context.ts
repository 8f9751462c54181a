// Shared parameter parsing and the `{context, value}` envelope, as Agave's RPC does them.
import type { Chain } from '../chain';
import { invalidParams } from '../rpc-error';
import type { Commitment } from '../types';

/** The Agave version whose RPC this one answers as (context.apiVersion, getVersion). */
export const API_VERSION = '3.1.4';

export interface MethodContext {
  chain: Chain;
  /** Answer as a node without the transaction history (the `forget` fault): the status cache alone. */
  historyless?: boolean;
  /** Answer as a node behind the cluster (`forget` with `unseen`): no transaction status at all. */
  unseen?: boolean;
}

export type Handler = (ctx: MethodContext, params: unknown[]) => unknown;

export function config(params: unknown[], i: number): Record<string, unknown> {
  const c = params[i];
  if (c === undefined || c === null) return {};
  if (typeof c !== 'object' || Array.isArray(c))
    throw invalidParams(`Invalid params: invalid type: expected a config map at position ${i}`);
  return c as Record<string, unknown>;
}

/** The commitment asked for; a node's default is finalized. Legacy names map as Agave maps them. */
export function commitmentOf(c: Record<string, unknown>): Commitment {
  const v = c.commitment;
  if (v === undefined || v === null) return 'finalized';
  switch (v) {
    case 'processed':
    case 'recent':
      return 'processed';
    case 'confirmed':
    case 'single':
    case 'singleGossip':
      return 'confirmed';
    case 'finalized':
    case 'root':
    case 'max':
      return 'finalized';
    default:
      throw invalidParams(
        `Invalid params: unknown variant \`${String(v)}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\``,
      );
  }
}

/** Methods reading blocks and transactions only serve confirmed or finalized data. */
export function atLeastConfirmed(c: Record<string, unknown>): Commitment {
  const cm = commitmentOf(c);
  if (cm === 'processed') throw invalidParams('Method does not support commitment below `confirmed`');
  return cm;
}

export function withContext(ctx: MethodContext, c: Commitment, value: unknown): unknown {
  return { context: { apiVersion: API_VERSION, slot: ctx.chain.slotAt(c) }, value };
}

export function slotParam(params: unknown[], i: number): number {
  const v = params[i];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw invalidParams(`Invalid params: invalid type: expected u64 at position ${i}`);
  return v;
}

export function stringParam(params: unknown[], i: number, what: string): string {
  const v = params[i];
  if (typeof v !== 'string')
    throw invalidParams(`Invalid params: invalid type: expected a ${what} string at position ${i}`);
  return v;
}

export function pubkeyParam(params: unknown[], i: number): string {
  const v = stringParam(params, i, 'base-58 encoded public key');
  if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(v)) throw invalidParams('Invalid param: Invalid');
  return v;
}
