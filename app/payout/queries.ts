// Every SQL statement of the payout journal, as named functions. Values go in as $n; amounts cross as decimal
// strings (NUMERIC(20,0) ↔ bigint), never as JS numbers.
import { Pool, PoolClient } from 'pg';
import { OpId } from '../op-id';
import { Address, PayoutId, Signature } from '../types';
import { AttemptStatus } from './decide';

export type Db = Pool | PoolClient;

export type PayoutState = 'pending' | 'executing' | 'succeeded' | 'conflict' | 'failed';
export const FINAL_STATES: readonly PayoutState[] = ['succeeded', 'conflict', 'failed'];

export interface MerchantRow {
  id: string;
  name: string;
  programId: Address;
  merchantAddress: Address;
  vault: Address;
  tokenProgram: Address;
  createdAt: Date;
}

/** A stored payout: the terms it was created with (NewPayout) and where its execution stands. */
export interface PayoutRow extends NewPayout {
  id: string;
  state: PayoutState;
  resultSignature: Signature | null;
  resultSlot: bigint | null;
  conflict: unknown;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export interface AttemptRow {
  id: string;
  payoutId: string;
  attemptNo: number;
  signature: Signature;
  blockhash: string;
  lastValidBlockHeight: bigint;
  txBytes: Buffer;
  status: AttemptStatus;
  slot: bigint | null;
  error: string | null;
  sendCount: number;
  createdAt: Date;
  updatedAt: Date;
}

type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const big = (x: unknown): bigint | null => (x === null || x === undefined ? null : BigInt(x as string));

function toMerchant(r: Raw): MerchantRow {
  return {
    id: String(r.id),
    name: r.name,
    programId: r.program_id,
    merchantAddress: r.merchant_address,
    vault: r.vault,
    tokenProgram: r.token_program,
    createdAt: r.created_at,
  };
}

export function toPayout(r: Raw): PayoutRow {
  return {
    id: String(r.id),
    merchantId: String(r.merchant_id),
    payoutId: r.payout_id,
    programId: r.program_id,
    merchantAddress: r.merchant_address,
    vault: r.vault,
    tokenProgram: r.token_program,
    recipient: r.recipient,
    mint: r.mint,
    amount: BigInt(r.amount),
    opId: r.op_id,
    opPda: r.op_pda,
    opBump: Number(r.op_bump),
    state: r.state,
    resultSignature: r.result_signature,
    resultSlot: big(r.result_slot),
    conflict: r.conflict,
    lastError: r.last_error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    finishedAt: r.finished_at,
  };
}

function toAttempt(r: Raw): AttemptRow {
  return {
    id: String(r.id),
    payoutId: String(r.payout_id),
    attemptNo: Number(r.attempt_no),
    signature: r.signature,
    blockhash: r.blockhash,
    lastValidBlockHeight: BigInt(r.last_valid_block_height),
    txBytes: r.tx_bytes,
    status: r.status,
    slot: big(r.slot),
    error: r.error,
    sendCount: Number(r.send_count),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

// ---- merchants ----

export async function insertMerchant(
  db: Db,
  m: { name: string; apiKeyHash: string; programId: Address; merchantAddress: Address; vault: Address; tokenProgram?: Address },
): Promise<MerchantRow> {
  const { rows } = await db.query(
    `INSERT INTO api_merchants (name, api_key_hash, program_id, merchant_address, vault, token_program)
     VALUES ($1, $2, $3, $4, $5, COALESCE($6, 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA')) RETURNING *`,
    [m.name, m.apiKeyHash, m.programId, m.merchantAddress, m.vault, m.tokenProgram ?? null],
  );
  return toMerchant(rows[0]);
}

export async function getMerchantByApiKeyHash(db: Db, hash: string): Promise<MerchantRow | null> {
  const { rows } = await db.query('SELECT * FROM api_merchants WHERE api_key_hash = $1', [hash]);
  return rows[0] ? toMerchant(rows[0]) : null;
}

export async function getMerchant(db: Db, id: string): Promise<MerchantRow | null> {
  const { rows } = await db.query('SELECT * FROM api_merchants WHERE id = $1', [id]);
  return rows[0] ? toMerchant(rows[0]) : null;
}

export async function getMerchantByAddress(db: Db, merchantAddress: string): Promise<MerchantRow | null> {
  const { rows } = await db.query('SELECT * FROM api_merchants WHERE merchant_address = $1 ORDER BY id LIMIT 1', [merchantAddress]);
  return rows[0] ? toMerchant(rows[0]) : null;
}

// ---- payouts ----

export interface NewPayout {
  merchantId: string;
  payoutId: PayoutId;
  programId: Address;
  merchantAddress: Address;
  vault: Address;
  tokenProgram: Address;
  recipient: Address;
  mint: Address;
  amount: bigint;
  opId: OpId;
  opPda: Address;
  opBump: number;
}

/**
 * Insert unless (merchant, payout_id) exists. `created` tells which: the existing row is returned as is (its
 * terms may differ from the input — the caller decides whether that is a replay or a conflict).
 */
export async function insertPayout(db: Db, p: NewPayout): Promise<{ row: PayoutRow; created: boolean }> {
  const ins = await db.query(
    `INSERT INTO payouts (merchant_id, payout_id, program_id, merchant_address, vault, token_program, recipient, mint,
                          amount, op_id, op_pda, op_bump)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::numeric, $10, $11, $12)
     ON CONFLICT (merchant_id, payout_id) DO NOTHING RETURNING *`,
    [p.merchantId, p.payoutId, p.programId, p.merchantAddress, p.vault, p.tokenProgram, p.recipient, p.mint,
      p.amount.toString(), p.opId, p.opPda, p.opBump],
  );
  if (ins.rows[0]) return { row: toPayout(ins.rows[0]), created: true };
  const { rows } = await db.query('SELECT * FROM payouts WHERE merchant_id = $1 AND payout_id = $2', [p.merchantId, p.payoutId]);
  return { row: toPayout(rows[0]), created: false };
}

export async function getPayout(db: Db, id: string): Promise<PayoutRow | null> {
  if (!/^[0-9]{1,18}$/.test(id)) return null;
  const { rows } = await db.query('SELECT * FROM payouts WHERE id = $1', [id]);
  return rows[0] ? toPayout(rows[0]) : null;
}

export async function getPayoutByMerchantPayoutId(db: Db, merchantId: string, payoutId: string): Promise<PayoutRow | null> {
  const { rows } = await db.query('SELECT * FROM payouts WHERE merchant_id = $1 AND payout_id = $2', [merchantId, payoutId]);
  return rows[0] ? toPayout(rows[0]) : null;
}

export async function listUnfinishedPayouts(db: Db, opts: { includePending: boolean }): Promise<PayoutRow[]> {
  const states = opts.includePending ? ['pending', 'executing'] : ['executing'];
  const { rows } = await db.query('SELECT * FROM payouts WHERE state = ANY($1::payout_state[]) ORDER BY id', [states]);
  return rows.map(toPayout);
}

/** Final states are final: the guard makes a late writer a no-op instead of an overwrite. */
export async function finishPayout(
  db: Db,
  id: string,
  r: { state: 'succeeded' | 'conflict' | 'failed'; signature?: string | null; slot?: bigint | null; conflict?: unknown; error?: string | null },
): Promise<boolean> {
  const res = await db.query(
    `UPDATE payouts SET state = $2, result_signature = $3, result_slot = $4, conflict = $5, last_error = $6,
            updated_at = now(), finished_at = now()
      WHERE id = $1 AND state IN ('pending', 'executing')`,
    [id, r.state, r.signature ?? null, r.slot === undefined || r.slot === null ? null : r.slot.toString(),
      r.conflict === undefined ? null : JSON.stringify(r.conflict), r.error ?? null],
  );
  return res.rowCount === 1;
}

/** An operator's explicit retry of a failed payout (e.g. after topping up the vault). */
export async function reopenFailedPayout(db: Db, id: string): Promise<boolean> {
  const res = await db.query(
    `UPDATE payouts SET state = 'executing', last_error = NULL, finished_at = NULL, updated_at = now()
      WHERE id = $1 AND state = 'failed'`,
    [id],
  );
  return res.rowCount === 1;
}

// ---- attempts ----

export async function listAttempts(db: Db, payoutId: string): Promise<AttemptRow[]> {
  const { rows } = await db.query('SELECT * FROM payout_attempts WHERE payout_id = $1 ORDER BY attempt_no', [payoutId]);
  return rows.map(toAttempt);
}

/**
 * Persist a signed attempt before it is ever sent, and move the payout to `executing`, in one transaction.
 * attempt_no is next in sequence; UNIQUE (payout_id, attempt_no) makes a concurrent second writer fail loudly.
 */
export async function insertAttempt(
  pool: Pool,
  a: { payoutId: string; signature: Signature; blockhash: string; lastValidBlockHeight: bigint; txBytes: Uint8Array },
): Promise<AttemptRow> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const { rows } = await c.query(
      `INSERT INTO payout_attempts (payout_id, attempt_no, signature, blockhash, last_valid_block_height, tx_bytes)
       VALUES ($1, (SELECT COALESCE(max(attempt_no), 0) + 1 FROM payout_attempts WHERE payout_id = $1), $2, $3, $4, $5)
       RETURNING *`,
      [a.payoutId, a.signature, a.blockhash, a.lastValidBlockHeight.toString(), Buffer.from(a.txBytes)],
    );
    await c.query(`UPDATE payouts SET state = 'executing', updated_at = now() WHERE id = $1 AND state = 'pending'`, [a.payoutId]);
    await c.query('COMMIT');
    return toAttempt(rows[0]);
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}

export async function markAttemptSent(db: Db, id: string): Promise<void> {
  await db.query(
    `UPDATE payout_attempts SET status = 'sent', send_count = send_count + 1, updated_at = now()
      WHERE id = $1 AND status IN ('built', 'sent')`,
    [id],
  );
}

/** Settle an open attempt; an attempt already settled keeps its first outcome. */
export async function settleAttempt(
  db: Db,
  id: string,
  r: { status: 'landed' | 'failed' | 'expired'; slot?: bigint | null; error?: string | null },
): Promise<void> {
  await db.query(
    `UPDATE payout_attempts SET status = $2, slot = $3, error = $4, updated_at = now()
      WHERE id = $1 AND status IN ('built', 'sent')`,
    [id, r.status, r.slot === undefined || r.slot === null ? null : r.slot.toString(), r.error ?? null],
  );
}
