// The statements db/readiness runs (db/migrate keeps its own: they run before any table of ours exists).
import type { Query } from './sql';

/** The versions recorded by `oncepay migrate`; fails with 42P01 when the table does not exist yet. */
export function appliedMigrationVersions(): Query {
  return { text: 'SELECT version FROM schema_migrations', values: [] };
}
