// The loops' "wait out the database" step (indexer/database-retry.ts), with injected failures: no real outage
// here (tests/faults/ restarts a real server).
import { expect } from 'chai';
import { retryWhileDatabaseUnavailable } from '../../indexer/database-retry';

const down = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const fast = { baseMs: 1, capMs: 2 };

describe('indexer/database-retry', () => {
  it('repeats a step while the database is away, then returns its result', async () => {
    let calls = 0;
    const r = await retryWhileDatabaseUnavailable(
      async () => {
        calls++;
        if (calls < 4) throw down();
        return 'applied';
      },
      { what: 'test', backoff: fast },
    );
    expect(r).to.equal('applied');
    expect(calls).to.equal(4);
  });

  it('does not repeat an error that is not an outage', async () => {
    let calls = 0;
    const unique = Object.assign(new Error('duplicate key'), { code: '23505' });
    const e = await retryWhileDatabaseUnavailable(
      async () => {
        calls++;
        throw unique;
      },
      { what: 'test', backoff: fast },
    ).catch((x) => x);
    expect(e).to.equal(unique);
    expect(calls).to.equal(1);
  });

  it('gives up with the outage error once stopped', async () => {
    const ac = new AbortController();
    let calls = 0;
    const e = await retryWhileDatabaseUnavailable(
      async () => {
        calls++;
        if (calls === 2) ac.abort();
        throw down();
      },
      { what: 'test', backoff: fast, signal: ac.signal },
    ).catch((x) => x);
    expect((e as { code: string }).code).to.equal('ECONNREFUSED');
    expect(calls).to.equal(2);
  });
});
