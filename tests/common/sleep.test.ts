// common/sleep.ts: the one pause and its one abort rule (an abort rejects, with the caller's abort error or
// ONCEPAY__COMMON__ABORTED; it never resolves early). No assertion on time: only on what the pause settles to.
import { expect } from 'chai';
import { isOncepayError, OncepayError, PAYOUT_CODES } from '../../common/errors';
import { COMMON_CODES } from '../../common/errors/codes';
import { ignoreAbort, sleep } from '../../common/sleep';

async function settled(p: Promise<unknown>): Promise<{ ok: true } | { ok: false; error: unknown }> {
  try {
    await p;
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}

describe('common/sleep: one abortable pause, one abort rule', () => {
  it('resolves when its time has passed, with or without a signal', async () => {
    expect(await settled(sleep(1))).to.deep.equal({ ok: true });
    expect(await settled(sleep(1, new AbortController().signal))).to.deep.equal({ ok: true });
  });

  it('an abort during the pause rejects with ONCEPAY__COMMON__ABORTED, carrying the reason', async () => {
    const ac = new AbortController();
    const p = settled(sleep(60_000, ac.signal));
    ac.abort('drain');
    const r = await p;
    expect(r.ok).to.equal(false);
    const e = (r as { error: unknown }).error;
    expect(isOncepayError(e, COMMON_CODES.ABORTED)).to.equal(true);
    expect((e as OncepayError).context).to.deep.equal({ reason: 'drain' });
  });

  it('an already aborted signal rejects at once, before any timer', async () => {
    const ac = new AbortController();
    ac.abort();
    const r = await settled(sleep(60_000, ac.signal));
    expect(r.ok).to.equal(false);
    expect(isOncepayError((r as { error: unknown }).error, COMMON_CODES.ABORTED)).to.equal(true);
  });

  it("rejects with the caller's own abort error when it names one", async () => {
    const ac = new AbortController();
    const p = settled(sleep(60_000, ac.signal, () => new OncepayError(PAYOUT_CODES.ABORTED)));
    ac.abort();
    const r = await p;
    expect(isOncepayError((r as { error: unknown }).error, PAYOUT_CODES.ABORTED)).to.equal(true);
  });

  it('leaves no listener on the signal once it has settled either way', async () => {
    const ac = new AbortController();
    const live = new Set<unknown>();
    const add = ac.signal.addEventListener.bind(ac.signal);
    const remove = ac.signal.removeEventListener.bind(ac.signal);
    ac.signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
      live.add(args[1]);
      add(...args);
    };
    ac.signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => {
      live.delete(args[1]);
      remove(...args);
    };
    await sleep(1, ac.signal);
    expect(live.size, 'a finished pause keeps no listener').to.equal(0);
  });

  it('ignoreAbort swallows an aborted pause and rethrows anything else', async () => {
    const ac = new AbortController();
    ac.abort();
    expect(await settled(sleep(60_000, ac.signal).catch(ignoreAbort))).to.deep.equal({ ok: true });
    const other = new Error('database away');
    expect(() => ignoreAbort(other)).to.throw('database away');
    expect(() => ignoreAbort(new OncepayError(PAYOUT_CODES.NOT_FOUND))).to.throw(/NOT_FOUND/);
  });
});
