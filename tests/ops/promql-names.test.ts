// The PromQL metric-name reader used by metric-names.test.ts, on the shapes the rules and the dashboard use.
import { expect } from 'chai';
import { isExported, metricNames, PromqlNameError, templatingMetricNames } from './promql-names';

describe('promql-names: metric names of an expression', function () {
  it('reads selectors and skips functions, aggregations, label lists, matchers and ranges', function () {
    expect(
      metricNames('sum by (cluster, source) (rate(oncepay_receipt_duplicates_total{source="scanner"}[1h]))'),
    ).to.deep.equal(['oncepay_receipt_duplicates_total']);
    expect(metricNames('max without (instance) (a_total) / on(job) group_left(cluster) b_info')).to.deep.equal([
      'a_total',
      'b_info',
    ]);
    expect(
      metricNames('sum(increase(x_total{result="dead"}[15m] offset 1h)) > 0 and y unless z or bool w'),
    ).to.deep.equal(['x_total', 'y', 'z', 'w']);
  });

  it('reads both sides of binary operators and every argument of a function', function () {
    expect(metricNames('histogram_quantile(0.99, sum by (le) (rate(req_seconds_bucket[5m])))')).to.deep.equal([
      'req_seconds_bucket',
    ]);
    expect(
      metricNames('label_replace(up_total, "dst", "$1", "src", "(.*)") * on() group_left scalar(k)'),
    ).to.deep.equal(['up_total', 'k']);
    expect(metricNames('topk(5, a) + count_values("v", b) - 1e3 * 0.5 + 0x1f')).to.deep.equal(['a', 'b']);
    expect(metricNames('rate(a[5m:1m]) > 3 * rate(a[1d])')).to.deep.equal(['a']);
  });

  it('reads a metric named by __name__, and refuses one matched by pattern', function () {
    expect(metricNames('{__name__="oncepay_outbox_depth", job="x"}')).to.deep.equal(['oncepay_outbox_depth']);
    expect(() => metricNames('{__name__=~"oncepay_.*"}')).to.throw(PromqlNameError, /by pattern/);
  });

  it('ignores strings, comments and Grafana variables', function () {
    expect(
      metricNames('rate(a{cluster=~"$cluster", s="not_a_metric"}[$__rate_interval]) # b_total in a comment'),
    ).to.deep.equal(['a']);
    expect(metricNames('sum(rate(a[${__interval}]))')).to.deep.equal(['a']);
    expect(() => metricNames('rate(a{x="unterminated}[5m])')).to.throw(PromqlNameError);
  });

  it('reads Grafana templating queries', function () {
    expect(templatingMetricNames('label_values(oncepay_receipts_total, cluster)')).to.deep.equal([
      'oncepay_receipts_total',
    ]);
    expect(templatingMetricNames('label_values(oncepay_receipts_total{source="scanner"}, cluster)')).to.deep.equal([
      'oncepay_receipts_total',
    ]);
    expect(templatingMetricNames('label_values(cluster)')).to.deep.equal([]);
    expect(() => templatingMetricNames('metrics(oncepay_.*)')).to.throw(PromqlNameError);
  });

  it('accepts histogram and summary series only for metrics of that type', function () {
    const exported = new Map([
      ['h_seconds', 'histogram'],
      ['s_seconds', 'summary'],
      ['c_total', 'counter'],
    ]);
    expect(
      ['h_seconds_bucket', 'h_seconds_sum', 'h_seconds_count', 's_seconds_sum', 'c_total'].every((n) =>
        isExported(n, exported),
      ),
    ).to.equal(true);
    expect(isExported('s_seconds_bucket', exported)).to.equal(false);
    expect(isExported('c_total_count', exported)).to.equal(false);
    expect(isExported('missing_total', exported)).to.equal(false);
  });
});
