// common/redact: every URL shown — in a log field, an error message or stack, a log message, a CLI error line — has
// its credentials replaced (userinfo, query values, a fragment, a token-like path segment), and a secret typed on the
// command line is warned about without being printed. The logger is checked in a real process (pino writes to fd 2).
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { redactUrl, redactUrlsIn, urlCarriesSecret } from '../../common/redact';
import { redactFields } from '../../common/log';
import { cliErrorLine, warnSecretsOnCommandLine } from '../../cli/main';
import { buildCli } from '../../cli/main';
import { Command } from 'commander';

const ROOT = path.resolve(__dirname, '..', '..');
const KEY = 'canary-api-key-7f3a9c2e';

describe('common/redact: URLs without their credentials', () => {
  it('redactUrl hides userinfo, query values, fragments and token-like path segments; keeps host, port, path words, keys', () => {
    const cases: Array<[string, string]> = [
      [`https://mainnet.helius-rpc.com/?api-key=${KEY}`, 'https://mainnet.helius-rpc.com/?api-key=***'],
      [
        `postgres://oncepay:${KEY}@db.internal:5432/pay?sslmode=require`,
        'postgres://***:***@db.internal:5432/pay?sslmode=***',
      ],
      ['wss://x.quiknode.pro/0a1b2c3d4e5f60718293a4b5c6d7e8f9/', 'wss://x.quiknode.pro/***/'],
      [
        'https://solana-mainnet.g.alchemy.com/v2/Zx9LkQ2mN8vB3cD4eF5gH6iJ7kL8',
        'https://solana-mainnet.g.alchemy.com/v2/***',
      ],
      [`https://grpc.example:10000/#${KEY}`, 'https://grpc.example:10000/#***'],
      [`https://a.example/rpc?x=1&x=2&token=${KEY}`, 'https://a.example/rpc?x=***&token=***'],
    ];
    for (const [url, shown] of cases) {
      expect(redactUrl(url), url).to.equal(shown);
      expect(urlCarriesSecret(url), url).to.equal(true);
    }
    // Nothing to hide: shown exactly as given.
    for (const url of [
      'http://127.0.0.1:8899',
      'https://api.mainnet-beta.solana.com/',
      'grpc://geyser.example:10000/v1/subscribe',
    ])
      expect([redactUrl(url), urlCarriesSecret(url)], url).to.deep.equal([url, false]);
    expect(redactUrl('not a url at all')).to.equal('***');
  });

  it('redactUrlsIn redacts every URL inside a text, and leaves the sentence around it', () => {
    const text = `getSlot: fetch https://h.example/?api-key=${KEY}. Then postgres://u:${KEY}@db/x, (see http://ok.example/).`;
    expect(redactUrlsIn(text)).to.equal(
      'getSlot: fetch https://h.example/?api-key=***. Then postgres://***:***@db/x, (see http://ok.example/).',
    );
    expect(redactUrlsIn('no url here')).to.equal('no url here');
  });

  it("a log line's fields (nested, errors' messages and stacks) and its message are redacted", () => {
    const out = redactFields({
      rpc: `https://h/?api-key=${KEY}`,
      nested: { deeper: { url: `wss://u:${KEY}@h` } },
      list: [`https://h/?k=${KEY}`],
      err: new Error(`connect to postgres://u:${KEY}@h/d failed`),
      n: 5,
    });
    expect(JSON.stringify(out)).to.not.contain(KEY);
    expect(out).to.deep.include({ n: 5, rpc: 'https://h/?api-key=***' });
    // The real logger, in a process of its own: fields and message.
    const r = spawnSync(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        '-e',
        `const { logger } = require('./common/log');
         const log = logger('t');
         log.warn({ rpc: 'https://h/?api-key=${KEY}', err: new Error('x https://u:${KEY}@h/') }, 'calling https://h/?api-key=${KEY}');
         log.error('plain postgres://u:${KEY}@db/x');`,
      ],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ONCEPAY_LOG_LEVEL: 'info', ONCEPAY_LOG_DIR: '' } },
    );
    expect(r.status, r.stderr).to.equal(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).to.have.length(2);
    expect(r.stderr).to.not.contain(KEY);
    expect(JSON.parse(lines[0])).to.include({ rpc: 'https://h/?api-key=***', msg: 'calling https://h/?api-key=***' });
  });

  it("the CLI's error line never repeats a URL's credential; a secret typed on the command line is warned about, not printed", () => {
    const line = JSON.parse(
      cliErrorLine(
        `error: option '--rpc <url>' argument 'ftp://h/?api-key=${KEY}' is invalid. ONCEPAY__SOURCE__INVALID_OPTION: --rpc must be a http: or https: URL`,
      ),
    );
    expect(line).to.include({ code: 'ONCEPAY__SOURCE__INVALID_OPTION', flag: '--rpc' });
    expect(JSON.stringify(line)).to.not.contain(KEY);

    const warnings: Array<{ o: object; msg: string }> = [];
    const root = buildCli();
    const run = root.commands.find((c) => c.name() === 'indexer')!.commands.find((c) => c.name() === 'run')!;
    run.action(function (this: Command) {
      warnSecretsOnCommandLine(this, 'indexer run', (o, msg) => warnings.push({ o, msg }));
    });
    return root
      .exitOverride()
      .parseAsync(['node', 'oncepay', 'indexer', 'run', '--rpc', `https://h.example/?api-key=${KEY}`])
      .then(() => {
        expect(warnings).to.have.length(1);
        expect(warnings[0].o).to.deep.equal({ flag: '--rpc' });
        expect(warnings[0].msg).to.contain('ONCEPAY_RPC_URL');
        expect(JSON.stringify(warnings)).to.not.contain(KEY);
      });
  });
});
