// Operators and their sessions (app/console/queries.ts run through db/sql). A session id exists only in the
// operator's cookie; the table keeps sha256(id).
import { createHash, randomBytes } from 'node:crypto';
import { Db, exec, one } from '../../db/sql';
import * as q from './queries';
import { newCsrfToken } from './csrf';

export interface OperatorRow {
  id: string;
  name: string;
  passwordHash: string;
  failedLogins: number;
  lockedUntil: Date | null;
  now: Date;
}

export interface SessionRow {
  operatorId: string;
  operator: string;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  now: Date;
}

export function sessionIdHash(id: string): Buffer {
  return createHash('sha256').update(id, 'utf8').digest();
}

export async function addOperator(db: Db, name: string, passwordHash: string): Promise<boolean> {
  return (await one(db, q.insertOperator(name, passwordHash))) !== null;
}

export async function setOperatorPassword(db: Db, name: string, passwordHash: string): Promise<boolean> {
  return (await one(db, q.setOperatorPassword(name, passwordHash))) !== null;
}

export async function getOperatorByName(db: Db, name: string): Promise<OperatorRow | null> {
  const r = await one<{
    id: string;
    name: string;
    password_hash: string;
    failed_logins: number;
    locked_until: Date | null;
    now: Date;
  }>(db, q.getOperatorByName(name));
  return r
    ? {
        id: String(r.id),
        name: r.name,
        passwordHash: r.password_hash,
        failedLogins: r.failed_logins,
        lockedUntil: r.locked_until,
        now: r.now,
      }
    : null;
}

export async function noteFailedLogin(db: Db, id: string, lockMs: number): Promise<void> {
  await exec(db, q.noteFailedLogin(id, lockMs));
}

export async function noteGoodLogin(db: Db, id: string): Promise<void> {
  await exec(db, q.noteGoodLogin(id));
}

/** A new session for the operator: returns the id for the cookie (32 random bytes, base64url). */
export async function createSession(
  db: Db,
  operatorId: string,
  limits: { absoluteMs: number; idleMs: number },
): Promise<string> {
  await exec(db, q.deleteEndedSessions(limits.idleMs));
  const id = randomBytes(32).toString('base64url');
  await exec(db, q.insertSession(sessionIdHash(id), operatorId, newCsrfToken(), limits.absoluteMs));
  return id;
}

export async function getSession(db: Db, id: string): Promise<SessionRow | null> {
  const r = await one<{
    operator_id: string;
    operator: string;
    csrf_token: string;
    created_at: Date;
    last_seen_at: Date;
    expires_at: Date;
    now: Date;
  }>(db, q.getSession(sessionIdHash(id)));
  return r
    ? {
        operatorId: String(r.operator_id),
        operator: r.operator,
        csrfToken: r.csrf_token,
        createdAt: r.created_at,
        lastSeenAt: r.last_seen_at,
        expiresAt: r.expires_at,
        now: r.now,
      }
    : null;
}

export async function touchSession(db: Db, id: string): Promise<void> {
  await exec(db, q.touchSession(sessionIdHash(id)));
}

export async function deleteSession(db: Db, id: string): Promise<void> {
  await exec(db, q.deleteSession(sessionIdHash(id)));
}
