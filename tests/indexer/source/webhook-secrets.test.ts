// indexer/source/webhook-secrets: where the webhook receiver's shared secrets come from, first match wins.
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { webhookSecrets } from '../../../indexer/source/webhook-secrets';

describe('indexer/source/webhook-secrets', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-webhook-secrets-'));
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text, { mode: 0o600 });
    return p;
  };
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a file: one secret per line (several while rotating), CRLF and blank lines and edges trimmed', () => {
    const f = file('rotating', 'new-secret\r\n\n  old-secret  \n\n');
    expect(webhookSecrets({ secretFile: f, secret: 'flag' }, 'env')).to.deep.equal(['new-secret', 'old-secret']);
  });

  it('else the environment, else the flag', () => {
    expect(webhookSecrets({ secret: 'flag' }, 'env')).to.deep.equal(['env']);
    expect(webhookSecrets({ secret: 'flag' }, undefined)).to.deep.equal(['flag']);
    expect(webhookSecrets({ secret: 'flag' }, '')).to.deep.equal(['flag']);
  });

  it('none at all, or a file with only blank lines, is refused with its code', () => {
    for (const o of [{}, { secretFile: file('blank', '\n \n') }]) {
      const e = (() => {
        try {
          webhookSecrets(o, undefined);
        } catch (x) {
          return x as { code: string };
        }
      })();
      expect(e?.code, JSON.stringify(o)).to.equal('ONCEPAY__SOURCE__INVALID_OPTION');
    }
  });
});
