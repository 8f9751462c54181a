// The secrets the fault and crash suites configure, recognisable, and every process those suites start: its command
// line (what `ps` shows) and everything it printed. A suite's last case checks that no process of it showed one of
// the secrets anywhere (expectNoSecretShown) — the RPC URL carries an API key in its query, the database URL its
// password, the webhook and outbox secrets are real ones, each passed the way an operator should (environment or
// file), never on the command line.
import { expect } from 'chai';

/** An RPC provider's API key, as Helius puts it in the URL's query. */
export const RPC_API_KEY = 'oncepay-canary-apikey-7f3a9c2e1b4d';

/** The RPC URL a process is given (in ONCEPAY_RPC_URL): `url` with the canary API key in its query. */
export function withApiKey(url: string): string {
  const u = new URL(url);
  u.searchParams.set('api-key', RPC_API_KEY);
  return u.toString();
}

/** The password of a postgres:// URL, if it has one. */
export function passwordOf(databaseUrl: string): string | undefined {
  const p = new URL(databaseUrl).password;
  return p ? decodeURIComponent(p) : undefined;
}

/** The spec file being run (from the call stack): what a process is recorded under, for its secrets check. */
export function currentSuite(): string {
  const stack = (new Error().stack ?? '').split('\n').slice(2).join('\n');
  return /([A-Za-z0-9_./-]+\.test\.ts)/.exec(stack)?.[1]?.replace(/^.*\/tests\//, 'tests/') ?? 'unknown';
}

interface Started {
  suite: string;
  argv: string[];
  output: () => string;
}
const started: Started[] = [];

/** Record a process a suite started (its argv as `ps` shows it, and its output as it grows). */
export function recordProcess(suite: string, argv: string[], output: () => string): void {
  started.push({ suite, argv, output });
}

/** The suite's processes that showed one of `secrets`: in their command line, or in anything they printed. */
export function secretsShown(suite: string, secrets: ReadonlyArray<string | undefined>): string[] {
  const wanted = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 8);
  const out: string[] = [];
  for (const p of started.filter((x) => x.suite === suite)) {
    const name = p.argv.slice(1, 4).join(' ');
    for (const s of wanted) {
      if (p.argv.some((a) => a.includes(s))) out.push(`${name}: on its command line (ps)`);
      if (p.output().includes(s)) out.push(`${name}: in its output`);
    }
  }
  return out;
}

/** The suite's closing case: its processes ran, and none showed a secret it was configured with. */
export function expectNoSecretShown(suite: string, secrets: ReadonlyArray<string | undefined>): void {
  const ran = started.filter((x) => x.suite === suite);
  expect(ran.length, `processes recorded for ${suite}`).to.be.greaterThan(0);
  expect(
    ran.some((p) => p.output().length > 0),
    'they printed something',
  ).to.equal(true);
  expect(secretsShown(suite, secrets)).to.deep.equal([]);
}
