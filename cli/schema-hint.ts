// A ledger command's action with a missing schema (PostgreSQL's undefined_table, 42P01) turned into
// LEDGER_CODES.SCHEMA_MISSING with what to run.
import { OncepayError } from '../common/errors';
import { LEDGER_CODES } from '../indexer/ledger';

export function withSchemaHint<A extends unknown[]>(
  action: (...args: A) => Promise<void>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (e) {
      if ((e as { code?: string }).code === '42P01') {
        const schema = process.env.ONCEPAY_DB_SCHEMA;
        throw new OncepayError(
          LEDGER_CODES.SCHEMA_MISSING,
          `${(e as Error).message}: run \`oncepay migrate${schema ? ` --schema ${schema}` : ''}\` first`,
        );
      }
      throw e;
    }
  };
}
