// deploy/prometheus: the alert rules load (`promtool check rules`) and behave (`promtool test rules` on the
// synthetic series in deploy/prometheus/tests/): each alert fires where it should and stays silent on normal
// series. promtool comes from Debian's `prometheus` package, installed by scripts/setup.sh.
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as path from 'path';
import { alertExpectations, alertRules, ROOT, RULES_FILE, ruleTestFiles } from './deploy-files';

function promtool(args: string[]): { status: number | null; out: string } {
  const r = spawnSync('promtool', args, { cwd: ROOT, encoding: 'utf8' });
  if (r.error)
    throw new Error(
      `promtool could not run (${r.error.message}): \`make setup\` installs it (Debian package prometheus)`,
    );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('deploy/prometheus alert rules', function () {
  it('load: promtool check rules', function () {
    const r = promtool(['check', 'rules', path.relative(ROOT, RULES_FILE)]);
    expect(r.status, r.out).to.equal(0);
    expect(r.out).to.match(new RegExp(`SUCCESS: ${alertRules().length} rules found`));
  });

  for (const file of ruleTestFiles()) {
    it(`behave: promtool test rules ${path.relative(ROOT, file)}`, function () {
      const r = promtool(['test', 'rules', path.relative(ROOT, file)]);
      expect(r.status, r.out).to.equal(0);
      expect(r.out).to.include('SUCCESS');
    });
  }

  it('every alert has a severity (warning or critical), a summary, a description and a runbook line', function () {
    const rules = alertRules();
    expect(rules.length).to.be.greaterThan(0);
    for (const r of rules) {
      expect(r.labels?.severity, r.alert).to.be.oneOf(['warning', 'critical']);
      for (const a of ['summary', 'description', 'runbook'])
        expect(r.annotations?.[a], `${r.alert} ${a}`).to.be.a('string').with.length.above(0);
    }
  });

  it('every alert is tested both firing and silent', function () {
    const tested = alertExpectations();
    const missing = alertRules().flatMap((r) => {
      const cases = tested.filter((t) => t.alertname === r.alert);
      return [
        ...(cases.some((c) => c.firing > 0) ? [] : [`${r.alert}: no case where it fires`]),
        ...(cases.some((c) => c.firing === 0) ? [] : [`${r.alert}: no case where it stays silent`]),
      ];
    });
    expect(missing, missing.join('\n')).to.deep.equal([]);
    const unknown = tested
      .filter((t) => !alertRules().some((r) => r.alert === t.alertname))
      .map((t) => `${t.file}: ${t.alertname}`);
    expect(unknown, 'tests of alerts that do not exist').to.deep.equal([]);
  });
});
