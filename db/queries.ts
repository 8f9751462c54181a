// The statements db/readiness and db/listen run (db/migrate keeps its own: they run before any table of ours exists).
import type { Query } from './sql';

/** The versions recorded by `oncepay migrate`; fails with 42P01 when the table does not exist yet. */
export function appliedMigrationVersions(): Query {
  return { text: 'SELECT version FROM schema_migrations', values: [] };
}

/** The schema a session works in (db/listen hears only the notifications of its own schema). */
export function currentSchema(): Query {
  return { text: 'SELECT current_schema() AS schema', values: [] };
}
