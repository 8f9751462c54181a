// The embedded server's authentication pieces (db/local-auth.ts), without I/O.
import { expect } from 'chai';
import * as crypto from 'crypto';
import {
  generatePassword,
  hbaContent,
  parsePgpass,
  passwordlessHbaLines,
  pgpassContent,
  redactUrl,
  scramVerifier,
  shellUrl,
} from '../../db/local-auth';

describe('local-auth: SCRAM-SHA-256 verifier', function () {
  // RFC 7677 section 3: user "user", password "pencil". Our verifier must let the RFC's client proof in and
  // produce the RFC's server signature: the exchange a server holding it would run.
  const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
  const authMessage = [
    'n=user,r=rOprNGfwEbeRWgbNEkqO',
    'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
    'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
  ].join(',');
  const hmac = (key: Buffer, text: string) => crypto.createHmac('sha256', key).update(text).digest();

  function parts(v: string) {
    const m = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(v);
    expect(m, v).to.not.equal(null);
    return {
      iterations: Number(m![1]),
      salt: Buffer.from(m![2], 'base64'),
      storedKey: Buffer.from(m![3], 'base64'),
      serverKey: Buffer.from(m![4], 'base64'),
    };
  }

  it('matches RFC 7677: the server signature and the client proof of "pencil"', function () {
    const v = parts(scramVerifier('pencil', salt, 4096));
    expect(v.iterations).to.equal(4096);
    expect(v.salt.equals(salt)).to.equal(true);
    expect(hmac(v.serverKey, authMessage).toString('base64')).to.equal('6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
    const proof = Buffer.from('dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=', 'base64');
    const clientSignature = hmac(v.storedKey, authMessage);
    const clientKey = Buffer.from(proof.map((b, i) => b ^ clientSignature[i]));
    expect(crypto.createHash('sha256').update(clientKey).digest().equals(v.storedKey)).to.equal(true);
  });

  it('does not verify another password, and salts each verifier afresh', function () {
    const v = parts(scramVerifier('pencils', salt, 4096));
    expect(hmac(v.serverKey, authMessage).toString('base64')).to.not.equal(
      '6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
    );
    expect(scramVerifier('pencil')).to.not.equal(scramVerifier('pencil'));
  });
});

describe('local-auth: password file, pg_hba.conf, URLs', function () {
  it('generates long URL-safe passwords, different each time', function () {
    const a = generatePassword();
    expect(a).to.match(/^[A-Za-z0-9_-]{32}$/);
    expect(generatePassword()).to.not.equal(a);
  });

  it('writes and reads the pgpass line of the superuser', function () {
    expect(pgpassContent('s3cret')).to.equal('*:*:*:postgres:s3cret\n');
    expect(parsePgpass(pgpassContent('s3cret'))).to.equal('s3cret');
    expect(parsePgpass('# comment\nlocalhost:5432:*:alice:x\n')).to.equal(null);
    expect(parsePgpass('')).to.equal(null);
  });

  it('finds the lines that admit connections without a password, ignoring comments', function () {
    const before =
      '# "trust" in a comment\nlocal all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 md5\nlocal all all peer\n';
    expect(passwordlessHbaLines(before)).to.deep.equal([
      'local all all trust',
      'host all all 127.0.0.1/32 trust',
      'local all all peer',
    ]);
    expect(passwordlessHbaLines(hbaContent())).to.deep.equal([]);
    expect(hbaContent()).to.match(/^local\s+all\s+all\s+scram-sha-256$/m);
    expect(hbaContent()).to.match(/^host\s+all\s+all\s+127\.0\.0\.1\/32\s+scram-sha-256$/m);
  });

  it('redacts the password of a URL and leaves URLs without one alone', function () {
    expect(redactUrl('postgres://postgres:abc_-XYZ@127.0.0.1:54329/postgres')).to.equal(
      'postgres://postgres:***@127.0.0.1:54329/postgres',
    );
    expect(redactUrl('postgres://u%40x:p%2Fq@db.example:5432/app?sslmode=require')).to.equal(
      'postgres://u%40x:***@db.example:5432/app?sslmode=require',
    );
    expect(redactUrl('postgres://postgres@127.0.0.1:5/postgres')).to.equal('postgres://postgres@127.0.0.1:5/postgres');
    expect(redactUrl('not a url:secret@host')).to.equal('not a url:secret@host');
  });

  it('gives people a shell word that reads the password from its file instead of printing it', function () {
    const word = shellUrl('postgres://postgres:s3cretpw@127.0.0.1:5/postgres', '/d/oncepay.pgpass');
    expect(word).to.equal(`"postgres://postgres:$(cut -d: -f5 '/d/oncepay.pgpass')@127.0.0.1:5/postgres"`);
    expect(word).to.not.include('s3cretpw');
    expect(shellUrl('postgres://u:p@h/d', null)).to.equal('"$DATABASE_URL"');
  });
});
