// Every metric the alert rules and the Grafana dashboard read is one the code exports: the names are taken out
// of each PromQL expression (promql-names.ts) and looked up among the metrics the real registries hold
// (exported-metrics.ts). A rule on a metric nobody exports never fires: this is the test that says so.
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { stringify } from 'yaml';
import { OUTBOX_DELIVERY_RESULTS } from '../../indexer/metrics';
import { VERIFICATION_FAILURE_REASONS } from '../../indexer/source/webhook-metrics';
import { allPanels, alertRules, dashboard } from './deploy-files';
import { exportedMetrics } from './exported-metrics';
import { isExported, metricNames, templatingMetricNames } from './promql-names';

interface Use {
  where: string;
  expr: string;
  names: string[];
}

function dashboardUses(): Use[] {
  const d = dashboard();
  const panels = allPanels(d).flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      where: `panel "${p.title}" ${t.refId}`,
      expr: t.expr,
      names: metricNames(t.expr),
    })),
  );
  const variables = d.templating.list
    .filter((v) => v.type === 'query')
    .map((v) => {
      const q = typeof v.query === 'string' ? v.query : (v.query?.query ?? '');
      return { where: `variable $${v.name}`, expr: q, names: templatingMetricNames(q) };
    });
  return [...panels, ...variables];
}

function ruleUses(): Use[] {
  return alertRules().map((r) => ({ where: `alert ${r.alert}`, expr: r.expr, names: metricNames(r.expr) }));
}

/** "<metric> (read by …)" for each metric no registry exports. */
function notExported(uses: Use[], exported: ReadonlyMap<string, string>): string[] {
  const missing = new Map<string, string[]>();
  for (const u of uses)
    for (const n of u.names) if (!isExported(n, exported)) missing.set(n, [...(missing.get(n) ?? []), u.where]);
  return [...missing].map(([n, where]) => `${n} (read by ${where.join(', ')})`);
}

describe('deploy: the rules and the dashboard read only metrics the code exports', function () {
  let exported: Map<string, string>;
  before(async function () {
    exported = await exportedMetrics();
  });

  it('the registries export the metrics of every part (sanity of the collection itself)', function () {
    for (const n of [
      'oncepay_receipts_total',
      'oncepay_checkpoint_lag_slots',
      'oncepay_outbox_deliveries_total',
      'oncepay_scanner_slots_total',
      'oncepay_payout_attempts_total',
    ]) {
      expect(exported.has(n), n).to.equal(true);
    }
  });

  it('every alert rule reads at least one metric, and each is exported', function () {
    const uses = ruleUses();
    for (const u of uses) expect(u.names, u.where).to.have.length.above(0);
    const missing = notExported(uses, exported);
    expect(
      missing,
      `metrics the alert rules read that no registry of the code exports:\n  ${missing.join('\n  ')}`,
    ).to.deep.equal([]);
  });

  it('every dashboard query and variable reads at least one metric, and each is exported', function () {
    const uses = dashboardUses();
    expect(uses.length).to.be.greaterThan(10);
    for (const u of uses) expect(u.names, u.where).to.have.length.above(0);
    const missing = notExported(uses, exported);
    expect(
      missing,
      `metrics the dashboard reads that no registry of the code exports:\n  ${missing.join('\n  ')}`,
    ).to.deep.equal([]);
  });

  it('the label values the rules select on are values the code counts (outbox results, webhook failure reasons)', function () {
    const known: Record<string, readonly string[]> = {
      'oncepay_outbox_deliveries_total/result': OUTBOX_DELIVERY_RESULTS,
      'oncepay_webhook_verification_failures_total/reason': VERIFICATION_FAILURE_REASONS,
    };
    const unknown: string[] = [];
    let checked = 0;
    for (const r of alertRules()) {
      for (const sel of r.expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g)) {
        for (const m of sel[2].matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)) {
          const values = known[`${sel[1]}/${m[1]}`];
          if (!values) continue;
          for (const v of m[3].split('|')) {
            checked++;
            if (!values.includes(v))
              unknown.push(`${r.alert}: ${sel[1]}{${m[1]}} has no value "${v}" (the code counts ${values.join(', ')})`);
          }
        }
      }
    }
    expect(checked, 'label values checked').to.be.greaterThan(2);
    expect(unknown, unknown.join('\n')).to.deep.equal([]);
  });

  it('every dashboard query is valid PromQL (promtool check rules, Grafana variables filled in)', function () {
    const exprs = dashboardUses()
      .filter((u) => !u.where.startsWith('variable'))
      .map((u) => u.expr);
    const filled = exprs.map((e) => e.replace(/\$__\w+|\$\{__\w+\}/g, '5m').replace(/\$\{?(\w+)\}?/g, 'any'));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oncepay-dashboard-'));
    try {
      const file = path.join(dir, 'dashboard-queries.yml');
      fs.writeFileSync(
        file,
        stringify({
          groups: [{ name: 'dashboard', rules: filled.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }],
        }),
      );
      const r = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      expect(r.error, 'promtool missing: `make setup` installs it').to.equal(undefined);
      expect(r.status, `${r.stdout}${r.stderr}`).to.equal(0);
      expect(r.stdout).to.include(`SUCCESS: ${filled.length} rules found`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the dashboard is well formed: unique ids, panels within 24 columns without overlap, queries on the $datasource variable', function () {
    const d = dashboard();
    expect(d.uid).to.equal('oncepay');
    const panels = allPanels(d);
    expect(new Set(panels.map((p) => p.id)).size).to.equal(panels.length);
    for (const p of panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).to.be.at.most(24);
      for (const q of panels) {
        if (q === p) continue;
        const apart =
          p.gridPos.x + p.gridPos.w <= q.gridPos.x ||
          q.gridPos.x + q.gridPos.w <= p.gridPos.x ||
          p.gridPos.y + p.gridPos.h <= q.gridPos.y ||
          q.gridPos.y + q.gridPos.h <= p.gridPos.y;
        expect(apart, `"${p.title}" overlaps "${q.title}"`).to.equal(true);
      }
      for (const t of p.targets ?? [])
        expect(t.datasource?.uid ?? p.datasource?.uid, `${p.title} ${t.refId}`).to.equal('${datasource}');
    }
    expect(d.templating.list.find((v) => v.name === 'datasource')?.type).to.equal('datasource');
  });
});
