// A session's lifetime (indexer/source/session-scope.ts), without I/O: it ends on the caller's stop or on its first
// failure, and every await guarded by it ends with it.
import { expect } from 'chai';
import { createSessionScope } from '../../../indexer/source/session-scope';
import { rejection } from '../ledger/fixtures';

describe('indexer/source session scope (pure)', () => {
  it('ends on its first failure: the others are ignored, every guarded await rejects with the first', async () => {
    const scope = createSessionScope(new AbortController().signal);
    const pending = scope.guard(new Promise(() => undefined));
    const first = new Error('socket closed');
    scope.fail(first);
    scope.fail(new Error('later'));
    expect(scope.signal.aborted).to.equal(true);
    expect(scope.failure()).to.equal(first);
    expect(await rejection<Error>(pending)).to.equal(first);
    expect(await rejection<Error>(scope.ended)).to.equal(first);
    expect(await rejection<Error>(scope.guard(new Promise(() => undefined)))).to.equal(first); // ended already: at once
  });

  it("ends on the caller's stop, with no failure; a failure after that is ignored", async () => {
    const stop = new AbortController();
    const scope = createSessionScope(stop.signal);
    expect(await scope.guard(Promise.resolve('answer'))).to.equal('answer');
    stop.abort();
    expect(scope.signal.aborted).to.equal(true);
    expect((await rejection<Error>(scope.ended)).message).to.equal('ONCEPAY__SOURCE__STOPPED: stopped');
    scope.fail(new Error('too late'));
    expect(scope.failure()).to.equal(null);
  });

  it('a stop given before the session began ends it at once; end() stops listening to the caller', async () => {
    const stopped = new AbortController();
    stopped.abort();
    expect(createSessionScope(stopped.signal).signal.aborted).to.equal(true);
    const stop = new AbortController();
    const scope = createSessionScope(stop.signal);
    scope.end();
    expect(scope.signal.aborted).to.equal(true);
    expect(scope.failure()).to.equal(null);
  });
});
