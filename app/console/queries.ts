// Every SQL statement of the console's own tables (operators, operator_sessions: migration 0310), as Queries that
// db/sql runs (app/console/store.ts).
import type { Query } from '../../db/sql';

export function insertOperator(name: string, passwordHash: string): Query {
  return {
    text: `INSERT INTO operators (name, password_hash) VALUES ($1, $2)
           ON CONFLICT (name) DO NOTHING RETURNING id, name`,
    values: [name, passwordHash],
  };
}

export function setOperatorPassword(name: string, passwordHash: string): Query {
  return {
    text: `UPDATE operators SET password_hash = $2, failed_logins = 0, locked_until = NULL WHERE name = $1
           RETURNING id, name`,
    values: [name, passwordHash],
  };
}

export function getOperatorByName(name: string): Query {
  return {
    text: `SELECT id, name, password_hash, failed_logins, locked_until, now() AS now FROM operators WHERE name = $1`,
    values: [name],
  };
}

/** A wrong password: one more failure, and the lock it earns (computed by login-throttle.ts, given in ms). */
export function noteFailedLogin(id: string, lockMs: number): Query {
  return {
    text: `UPDATE operators SET failed_logins = failed_logins + 1,
                  locked_until = CASE WHEN $2::int > 0 THEN now() + $2::int * interval '1 millisecond' ELSE locked_until END
            WHERE id = $1 RETURNING failed_logins`,
    values: [id, lockMs],
  };
}

export function noteGoodLogin(id: string): Query {
  return { text: `UPDATE operators SET failed_logins = 0, locked_until = NULL WHERE id = $1`, values: [id] };
}

export function insertSession(idHash: Buffer, operatorId: string, csrf: string, absoluteMs: number): Query {
  return {
    text: `INSERT INTO operator_sessions (id_hash, operator_id, csrf_token, expires_at)
           VALUES ($1, $2, $3, now() + $4::bigint * interval '1 millisecond')`,
    values: [idHash, operatorId, csrf, absoluteMs],
  };
}

/** A session with its operator's name and the database's clock (the one clock expiry is judged by). */
export function getSession(idHash: Buffer): Query {
  return {
    text: `SELECT s.operator_id, o.name AS operator, s.csrf_token, s.created_at, s.last_seen_at, s.expires_at, now() AS now
             FROM operator_sessions s JOIN operators o ON o.id = s.operator_id
            WHERE s.id_hash = $1`,
    values: [idHash],
  };
}

export function touchSession(idHash: Buffer): Query {
  return { text: `UPDATE operator_sessions SET last_seen_at = now() WHERE id_hash = $1`, values: [idHash] };
}

export function deleteSession(idHash: Buffer): Query {
  return { text: `DELETE FROM operator_sessions WHERE id_hash = $1`, values: [idHash] };
}

/** Sessions past their absolute or idle limit (run at each login: the table holds only live sessions). */
export function deleteEndedSessions(idleMs: number): Query {
  return {
    text: `DELETE FROM operator_sessions
            WHERE expires_at <= now() OR last_seen_at <= now() - $1::bigint * interval '1 millisecond'`,
    values: [idleMs],
  };
}
