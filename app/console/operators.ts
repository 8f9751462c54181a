// Adding an operator of the console (what `oncepay operator add` runs): a checked name, a password of at least 12
// characters (or a generated one, shown once by the caller), stored as a scrypt hash only.
import type { Pool } from 'pg';
import { OncepayError } from '../../common/errors';
import { CONSOLE_CODES } from '../../common/errors/codes';
import { generatePassword, hashPassword } from './password';
import { addOperator, setOperatorPassword } from './store';

export const MIN_PASSWORD_LENGTH = 12;

export function operatorName(name: string): string {
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(name))
    throw new OncepayError(CONSOLE_CODES.OPERATOR_NAME_INVALID, undefined, { field: 'name' });
  return name;
}

/**
 * Store operator `name` with `password`, or a generated one (returned so the caller can show it once). `reset`
 * sets a new password of an existing operator (and lifts its lock); without it an existing name is refused.
 */
export async function addConsoleOperator(
  db: Pool,
  name: string,
  o: { password?: string; reset?: boolean } = {},
): Promise<{ name: string; generatedPassword: string | null }> {
  operatorName(name);
  const password = o.password ?? generatePassword();
  if ([...password].length < MIN_PASSWORD_LENGTH)
    throw new OncepayError(CONSOLE_CODES.PASSWORD_TOO_SHORT, undefined, { field: 'password' });
  const hash = await hashPassword(password);
  if (o.reset) {
    if (!(await setOperatorPassword(db, name, hash)))
      throw new OncepayError(CONSOLE_CODES.OPERATOR_NOT_FOUND, `no operator ${name}`, { field: 'name' });
  } else if (!(await addOperator(db, name, hash))) {
    throw new OncepayError(CONSOLE_CODES.OPERATOR_EXISTS, `operator ${name} exists (--reset sets a new password)`, {
      field: 'name',
    });
  }
  return { name, generatedPassword: o.password === undefined ? password : null };
}
