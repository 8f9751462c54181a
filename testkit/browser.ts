// A real browser for the page suites: Debian's chromium (installed by `scripts/setup.sh` when ONCEPAY_BROWSER=1)
// driven by puppeteer-core, which downloads no browser. Every page opened here records its console errors and
// failed requests, and `checkAccessibility` runs axe-core inside the page, so a suite can assert that a page has
// neither.

import { readFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/** Where Debian puts chromium; `ONCEPAY_CHROMIUM` names another binary. */
export function chromiumPath(): string {
  const path = process.env.ONCEPAY_CHROMIUM ?? '/usr/bin/chromium';
  if (!existsSync(path)) {
    throw new Error(
      `no chromium at ${path}: run \`ONCEPAY_BROWSER=1 scripts/setup.sh\` (Debian's chromium), or set ONCEPAY_CHROMIUM`,
    );
  }
  return path;
}

/** A headless chromium; `close()` it in `after`. `--no-sandbox` because CI runs as root. */
export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/** A page and what went wrong in it: console errors, uncaught exceptions, requests that failed or answered ≥ 400. */
export interface WatchedPage {
  page: Page;
  /** Every problem seen so far, as text. A suite asserts this is empty after its steps. */
  problems: string[];
}

/** Opens a new page (own incognito context when `isolated`, i.e. another "tab" with its own cookies). */
export async function openPage(browser: Browser, { isolated = false } = {}): Promise<WatchedPage> {
  const page = isolated ? await (await browser.createBrowserContext()).newPage() : await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e instanceof Error ? e.message : String(e)}`));
  page.on('requestfailed', (r) => {
    // A server-sent-events stream cut by navigation or close is not a failure of the page.
    if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return { page, problems };
}

/** An axe-core violation, reduced to what a failing assertion should print. */
export interface AccessibilityViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

const axeSource = (): string => readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core (WCAG 2.x A and AA rules) on the page as it is now and returns the violations (empty: none).
 * The script is injected with `evaluate`, so a page's strict Content-Security-Policy does not have to allow it.
 */
export async function checkAccessibility(page: Page): Promise<AccessibilityViolation[]> {
  await page.evaluate(axeSource());
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (o: unknown) => Promise<unknown> } }).axe;
    return axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
  });
  const violations = (
    result as {
      violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
    }
  ).violations;
  return violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    targets: v.nodes.flatMap((n) => n.target),
  }));
}

/**
 * Where a browser suite writes its screenshot `name`: the README's images (docs/img) only when asked for with
 * ONCEPAY_SCREENSHOT_DIR=docs/img, so a test run leaves the tree clean; otherwise the system's temporary folder, one
 * file per name that each run overwrites (the screenshot is still taken, so a page that cannot render one still fails).
 */
export function screenshotPath(name: string): string {
  const dir = process.env.ONCEPAY_SCREENSHOT_DIR;
  if (dir) return path.resolve(dir, name);
  return path.join(os.tmpdir(), `oncepay-screenshot-${name}`);
}
