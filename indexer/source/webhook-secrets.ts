// The webhook receiver's shared secrets, from the first of: a file (one per line, several while rotating), the
// environment (ONCEPAY_WEBHOOK_SECRET), the command line. None at all is refused.
import * as fs from 'fs';
import { OncepayError } from '../../common/errors';
import { SOURCE_CODES } from '../../common/errors/codes';

export function webhookSecrets(
  o: { secretFile?: string; secret?: string },
  env: string | undefined = process.env.ONCEPAY_WEBHOOK_SECRET,
): string[] {
  let secrets: string[] = [];
  if (o.secretFile !== undefined) {
    secrets = fs
      .readFileSync(o.secretFile, 'utf8')
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '');
  } else if (env) {
    secrets = [env];
  } else if (o.secret !== undefined) {
    secrets = [o.secret];
  }
  if (secrets.length === 0)
    throw new OncepayError(
      SOURCE_CODES.INVALID_OPTION,
      'a webhook secret is required: --secret-file, ONCEPAY_WEBHOOK_SECRET or --secret',
    );
  return secrets;
}
