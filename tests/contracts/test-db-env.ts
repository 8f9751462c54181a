// What the contract tests share around a test schema: the schema as the CLI's environment (DATABASE_URL and
// ONCEPAY_DB_SCHEMA, restored afterwards) and every row of every table, to see that a refusal changed nothing.
import { createTestDb, TestDb } from '../../testkit/test-db';

/** Every table of the schema, every row, as one string: equal before and after means nothing changed. */
export async function schemaSnapshot(db: TestDb): Promise<string> {
  const { rows: tables } = await db.pool.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`,
    [db.schema],
  );
  const out: Record<string, unknown> = {};
  for (const { table_name } of tables)
    out[table_name] = (await db.pool.query(`SELECT * FROM ${db.schema}.${table_name} ORDER BY 1`)).rows;
  return JSON.stringify(out);
}

/** A test schema that in-process commands use (its env set in `before`, restored in `after`): call in a describe. */
export function testDbAsCliEnv(label: string): () => TestDb {
  let db: TestDb;
  const saved = { url: process.env.DATABASE_URL, schema: process.env.ONCEPAY_DB_SCHEMA };
  before(async () => {
    db = await createTestDb(label);
    process.env.DATABASE_URL = db.url;
    process.env.ONCEPAY_DB_SCHEMA = db.schema;
  });
  after(async () => {
    if (saved.url === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved.url;
    if (saved.schema === undefined) delete process.env.ONCEPAY_DB_SCHEMA;
    else process.env.ONCEPAY_DB_SCHEMA = saved.schema;
    await db?.drop();
  });
  return () => db;
}
