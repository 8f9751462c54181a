// Is this process ready to serve: can it reach the database, and is the schema at the migrations this code was
// built with? The decision is pure (unit-tested without a database); checkReadiness does the one query.
import { isDatabaseUnavailable, DATABASE_UNAVAILABLE } from './unavailable';
import { loadMigrations } from './migrate';
import { appliedMigrationVersions } from './queries';
import { Db, rows } from './sql';

export const MIGRATIONS_PENDING = 'MIGRATIONS_PENDING';

export type Readiness =
  | { ready: true }
  | {
      ready: false;
      code: typeof DATABASE_UNAVAILABLE | typeof MIGRATIONS_PENDING;
      message: string;
      pending?: number[];
    };

/** What the probe saw: the applied migration versions, or why they could not be read. */
export type Observation =
  | { kind: 'applied'; versions: number[] }
  /** schema_migrations does not exist: nothing was ever migrated in this schema. */
  | { kind: 'no_migrations_table' }
  | { kind: 'unreachable'; error: string };

/** Ready when the database answered and every migration this code knows is applied (a newer schema is fine). */
export function readinessDecision(seen: Observation, known: readonly number[]): Readiness {
  if (seen.kind === 'unreachable')
    return { ready: false, code: DATABASE_UNAVAILABLE, message: `database unreachable: ${seen.error}` };
  const applied = new Set(seen.kind === 'applied' ? seen.versions : []);
  const pending = known.filter((v) => !applied.has(v));
  if (pending.length === 0) return { ready: true };
  return {
    ready: false,
    code: MIGRATIONS_PENDING,
    message: `${pending.length} migration(s) not applied; run \`oncepay migrate\``,
    pending,
  };
}

let knownVersions: number[] | undefined;

/** Ask the database (through the process's own pool and search_path) and decide. */
export async function checkReadiness(db: Db): Promise<Readiness> {
  knownVersions ??= loadMigrations().map((m) => m.version);
  let seen: Observation;
  try {
    const applied = await rows<{ version: number }>(db, appliedMigrationVersions());
    seen = { kind: 'applied', versions: applied.map((r) => Number(r.version)) };
  } catch (e) {
    if ((e as { code?: string }).code === '42P01') seen = { kind: 'no_migrations_table' };
    else if (isDatabaseUnavailable(e)) seen = { kind: 'unreachable', error: (e as Error).message };
    else throw e;
  }
  return readinessDecision(seen, knownVersions);
}
