// db/conninfo.ts and db/host-cursor.ts: libpq's connection-string forms and the order hosts are tried in. Pure.
import { expect } from 'chai';
import { DB_CODES, OncepayError } from '../../common/errors';
import { describeHost, isLibpqConnString, needsHostList, parseConnInfo, sslModeForAttempt } from '../../db/conninfo';
import { HostCursor } from '../../db/host-cursor';

function refused(text: string): OncepayError {
  try {
    parseConnInfo(text);
  } catch (e) {
    expect(e).to.be.instanceOf(OncepayError);
    return e as OncepayError;
  }
  throw new Error(`parsed: ${text}`);
}

describe('db/conninfo: libpq connection strings', () => {
  it("pg_auto_failover's URL: two hosts in the authority, read-write, the rest passed on", () => {
    const info = parseConnInfo(
      'postgres://127.0.0.1:6001,127.0.0.1:6002/app?target_session_attrs=read-write&sslmode=prefer',
    );
    expect(info.hosts).to.deep.equal([
      { host: '127.0.0.1', port: 6001 },
      { host: '127.0.0.1', port: 6002 },
    ]);
    expect(info.targetSessionAttrs).to.equal('read-write');
    expect(info.database).to.equal('app');
    expect(info.params).to.deep.equal({ sslmode: 'prefer' });
    expect(needsHostList(info)).to.equal(true);
  });

  it('user, password and database are percent-decoded; a password may hold an unencoded @ and :', () => {
    const info = parseConnInfo('postgresql://us%40er:p%2Fa:s@s@db.example:5433/my%20db');
    expect(info.user).to.equal('us@er');
    expect(info.password).to.equal('p/a:s@s');
    expect(info.hosts).to.deep.equal([{ host: 'db.example', port: 5433 }]);
    expect(info.database).to.equal('my db');
    expect(needsHostList(info)).to.equal(false);
  });

  it('hosts without a port get 5432; IPv6 hosts in brackets; percent-encoded socket folders', () => {
    expect(parseConnInfo('postgres://a,[::1]:7000,b/x').hosts).to.deep.equal([
      { host: 'a', port: 5432 },
      { host: '::1', port: 7000 },
      { host: 'b', port: 5432 },
    ]);
    expect(parseConnInfo('postgres://%2Fvar%2Frun%2Fpostgresql/x').hosts).to.deep.equal([
      { host: '/var/run/postgresql', port: 5432 },
    ]);
  });

  it('host= and port= query lists override the authority; one port applies to every host', () => {
    const info = parseConnInfo('postgres://ignored:1/app?host=h1,h2,h3&port=6000&user=u&password=p%26q');
    expect(info.hosts).to.deep.equal([
      { host: 'h1', port: 6000 },
      { host: 'h2', port: 6000 },
      { host: 'h3', port: 6000 },
    ]);
    expect(info.user).to.equal('u');
    expect(info.password).to.equal('p&q');
    expect(info.params).to.deep.equal({});
  });

  it('the keyword/value form, quoted values with escapes', () => {
    const info = parseConnInfo(
      "host=h1,h2 port=6001,6002 dbname=app user=me password='it\\'s a \\\\ secret' target_session_attrs=primary application_name=x",
    );
    expect(info.hosts).to.deep.equal([
      { host: 'h1', port: 6001 },
      { host: 'h2', port: 6002 },
    ]);
    expect(info.password).to.equal("it's a \\ secret");
    expect(info.targetSessionAttrs).to.equal('primary');
    expect(info.params).to.deep.equal({ application_name: 'x' });
  });

  it('target_session_attrs: any and absent mean any; read-only, standby and prefer-standby are refused by name', () => {
    expect(parseConnInfo('postgres://h/x').targetSessionAttrs).to.equal('any');
    expect(parseConnInfo('postgres://h/x?target_session_attrs=any').targetSessionAttrs).to.equal('any');
    for (const v of ['read-only', 'standby', 'prefer-standby', 'READ-WRITE']) {
      const e = refused(`postgres://h1,h2/x?target_session_attrs=${v}`);
      expect(e.code).to.equal(DB_CODES.CONNINFO_UNSUPPORTED);
      expect(e.message).to.include(`target_session_attrs=${v}`);
    }
  });

  it('what would choose another server and is not implemented is refused, not ignored', () => {
    for (const [url, named] of [
      ['postgres://h/x?hostaddr=10.0.0.1', 'hostaddr'],
      ['postgres://h/x?service=prod', 'service'],
      ['postgres://h1,h2/x?load_balance_hosts=random', 'load_balance_hosts=random'],
      ['postgres://h/x?sslmode=allow', 'sslmode=allow'],
    ]) {
      const e = refused(url);
      expect(e.code, url).to.equal(DB_CODES.CONNINFO_UNSUPPORTED);
      expect(e.message, url).to.include(named);
    }
    expect(parseConnInfo('postgres://h1,h2/x?load_balance_hosts=disable').params).to.deep.equal({});
  });

  it('malformed strings are refused with CONNINFO_MALFORMED, naming the part and never the password', () => {
    for (const [url, says] of [
      ['postgres://a,b,c:1/x?port=1,2', '3 host(s) but 2 ports'],
      ['postgres://h:99999/x', '"99999"'],
      ['postgres://h:12ab/x', '"12ab"'],
      ['postgres://u:sec%zzret@h/x', 'password'],
      ['postgres://[::1/x', 'closing bracket'],
      ['postgres://h/x?sslmode', 'no value'],
      ['host=h port', 'neither'],
    ]) {
      const e = refused(url);
      expect(e.code, url).to.equal(DB_CODES.CONNINFO_MALFORMED);
      expect(e.message, url).to.include(says);
      expect(e.message, url).not.to.include('sec');
    }
  });

  it('which strings are libpq forms; which need the host-list pool', () => {
    expect(isLibpqConnString('postgres://h/x')).to.equal(true);
    expect(isLibpqConnString('POSTGRESQL://h/x')).to.equal(true);
    expect(isLibpqConnString('host=h dbname=x')).to.equal(true);
    expect(isLibpqConnString('socket:/var/run/postgresql?db=x')).to.equal(false);
    expect(isLibpqConnString('/var/run/postgresql x')).to.equal(false);
    expect(needsHostList(parseConnInfo('postgres://h/x?target_session_attrs=read-write'))).to.equal(true);
    expect(needsHostList(parseConnInfo('postgres://h/x?sslmode=prefer'))).to.equal(true);
    expect(needsHostList(parseConnInfo('postgres://h/x?sslmode=require'))).to.equal(false);
  });

  it("sslmode=prefer is libpq's: unverified SSL, then plain text once the host said it has none", () => {
    expect(sslModeForAttempt('prefer', false)).to.equal('no-verify');
    expect(sslModeForAttempt('prefer', true)).to.equal('disable');
    expect(sslModeForAttempt('verify-full', true)).to.equal('verify-full');
    expect(sslModeForAttempt(undefined, false)).to.equal(undefined);
  });

  it('describeHost names the host and port only', () => {
    expect(describeHost({ host: '::1', port: 5 })).to.equal('[::1]:5');
    expect(describeHost({ host: '', port: 5432 })).to.equal('localhost:5432');
    expect(describeHost({ host: '/tmp', port: 6000 })).to.equal('/tmp/.s.PGSQL.6000');
  });
});

describe('db/host-cursor: which host a new connection tries', () => {
  it('starts at the first host, moves on when it fails, wraps around', () => {
    const c = new HostCursor(3);
    expect(c.current()).to.equal(0);
    c.failed(0);
    expect(c.current()).to.equal(1);
    c.failed(1);
    c.failed(2);
    expect(c.current()).to.equal(0);
  });

  it('many failures reported for a host the cursor already left move it once', () => {
    const c = new HostCursor(2);
    c.failed(0);
    c.failed(0);
    c.failed(0);
    expect(c.current()).to.equal(1);
  });

  it('a good connection anchors the cursor: the next connections start at the primary', () => {
    const c = new HostCursor(3);
    expect(c.succeeded(2), 'the first good host is no move').to.equal(false);
    expect(c.current()).to.equal(2);
    expect(c.succeeded(2)).to.equal(false);
    c.failed(2);
    expect(c.current()).to.equal(0);
    expect(c.succeeded(0), 'good connections moved from host 2 to host 0: a failover followed').to.equal(true);
  });

  it('a host that refused SSL under prefer is tried again in plain text, the cursor staying', () => {
    const c = new HostCursor(2);
    expect(c.plainOnly(0)).to.equal(false);
    c.refusedSsl(0);
    expect(c.plainOnly(0)).to.equal(true);
    expect(c.current()).to.equal(0);
  });

  it('refuses an empty host list', () => {
    expect(() => new HostCursor(0))
      .to.throw(OncepayError)
      .with.property('code', DB_CODES.HOSTS_MISSING);
  });
});
