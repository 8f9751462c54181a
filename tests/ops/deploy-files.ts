// The operator files under deploy/ as data: alert rules, their promtool tests, the Grafana dashboard.
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';

export const ROOT = path.resolve(__dirname, '..', '..');
export const RULES_FILE = path.join(ROOT, 'deploy', 'prometheus', 'oncepay.rules.yml');
export const RULE_TESTS_DIR = path.join(ROOT, 'deploy', 'prometheus', 'tests');
export const DASHBOARD_FILE = path.join(ROOT, 'deploy', 'grafana', 'oncepay.json');

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function alertRules(): AlertRule[] {
  const doc = parse(fs.readFileSync(RULES_FILE, 'utf8')) as {
    groups: Array<{ rules: Array<AlertRule & { record?: string }> }>;
  };
  return doc.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
}

export function ruleTestFiles(): string[] {
  return fs
    .readdirSync(RULE_TESTS_DIR)
    .filter((f) => f.endsWith('.yml'))
    .sort()
    .map((f) => path.join(RULE_TESTS_DIR, f));
}

export interface AlertExpectation {
  file: string;
  alertname: string;
  evalTime: string;
  firing: number;
}

export function alertExpectations(): AlertExpectation[] {
  return ruleTestFiles().flatMap((file) => {
    const doc = parse(fs.readFileSync(file, 'utf8')) as {
      tests: Array<{ alert_rule_test?: Array<{ alertname: string; eval_time: string; exp_alerts?: unknown[] }> }>;
    };
    return doc.tests
      .flatMap((t) => t.alert_rule_test ?? [])
      .map((a) => ({
        file: path.basename(file),
        alertname: a.alertname,
        evalTime: a.eval_time,
        firing: (a.exp_alerts ?? []).length,
      }));
  });
}

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Array<{ expr: string; refId: string; datasource?: { type: string; uid: string } }>;
  panels?: DashboardPanel[];
}

export interface Dashboard {
  uid: string;
  title: string;
  panels: DashboardPanel[];
  templating: { list: Array<{ name: string; type: string; query?: string | { query: string }; definition?: string }> };
}

export function dashboard(): Dashboard {
  return JSON.parse(fs.readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** Every panel, rows' nested panels included. */
export function allPanels(d: Dashboard): DashboardPanel[] {
  return d.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}
