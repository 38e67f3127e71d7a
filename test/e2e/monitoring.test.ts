// test-lane: parallel
/**
 * deploy/monitoring against the metrics the code serves: every metric name used in the
 * PrometheusRule's alerts and in the Grafana dashboard's queries is served by the operator's or the
 * worker's `/metrics`, scraped from real `drainflow run --operator` / `--worker` processes on the
 * local stack after one small drain (one pod on one node), so counters with labels have samples.
 * `up` is the one name Prometheus makes itself (one per scrape target).
 *
 * The PromQL name extraction is table-tested first, so that a query it cannot read fails the test
 * instead of passing it with no names.
 *
 * Needs KUBECONFIG and TEMPORAL_ADDRESS: `npm run stack -- up && eval "$(npm run --silent stack -- env)"`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { OperatorHarness } from '../helpers/operator-harness.js';
import {
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  uniqueName,
  waitPodsReady,
} from '../helpers/k8s.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const MONITORING = join(repoRoot, 'deploy', 'monitoring');

/** Series Prometheus makes itself rather than scraping them. */
const SYNTHETIC = new Set(['up']);

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression reads: identifiers that are not functions (followed by `(`),
 * keywords, label names (inside `{…}` or a `by (…)` / `on (…)` list), strings or durations.
 */
export function promqlMetricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w.$])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (m[2] || KEYWORDS.has(m[1]!.toLowerCase())) continue;
    names.add(m[1]!);
  }
  return [...names].sort();
}

/** Names served in a Prometheus text exposition: every sample's name, and each declared family with its suffixes. */
function servedNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) {
      const [, name, kind] = type;
      out.add(name!);
      if (kind === 'histogram') for (const s of ['_bucket', '_sum', '_count']) out.add(name! + s);
      if (kind === 'summary') for (const s of ['_sum', '_count']) out.add(name! + s);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (sample) out.add(sample[1]!);
  }
  return out;
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
}

function ruleFile(): { groups: Array<{ name: string; rules: Rule[] }> } {
  const doc = parse(readFileSync(join(MONITORING, 'prometheusrule.yaml'), 'utf8')) as {
    kind: string;
    spec: { groups: Array<{ name: string; rules: Rule[] }> };
  };
  assert.equal(doc.kind, 'PrometheusRule');
  return doc.spec;
}

function dashboardExprs(): Array<[panel: string, expr: string]> {
  const dash = JSON.parse(readFileSync(join(MONITORING, 'grafana-dashboard.json'), 'utf8')) as {
    panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
  };
  return dash.panels.flatMap((p) => (p.targets ?? []).map((t) => [p.title, t.expr] as [string, string]));
}

describe('promqlMetricNames', () => {
  for (const [expr, names] of [
    ['up', ['up']],
    ['max(drainflow_plans{phase="Blocked"}) > 0', ['drainflow_plans']],
    [
      'sum by (cause) (rate(drainflow_eviction_429_total{cause="Throttled"}[5m])) > 0',
      ['drainflow_eviction_429_total'],
    ],
    [
      'histogram_quantile(0.9, sum by (le, phase) (rate(drainflow_drain_duration_seconds_bucket[$__range])))',
      ['drainflow_drain_duration_seconds_bucket'],
    ],
    [
      '(max by (plan) (a_seconds) - time()) < 600\nand\n(max by (plan) (a_seconds) - time()) > 0',
      ['a_seconds'],
    ],
    ['sum(up{job="x"}) == 0 or absent(up{job="x"})', ['up']],
    ['a_sum / on (pod) group_left b_count offset 5m', ['a_sum', 'b_count']],
    ['max(x{a=~"b|c"}) or vector(0)', ['x']],
    ['1e3 * rate(process_cpu_seconds_total[1m])', ['process_cpu_seconds_total']],
  ] as const) {
    it(JSON.stringify(expr), () => assert.deepEqual(promqlMetricNames(expr), [...names]));
  }
});

describe('deploy/monitoring', () => {
  it('the PrometheusRule has the alerts: plan Blocked, deadline soon, 429 rate, worker and operator down', () => {
    const rules = ruleFile().groups.flatMap((g) => g.rules);
    const alerts = new Map(rules.map((r) => [r.alert, r]));
    for (const name of [
      'DrainflowPlanBlocked',
      'DrainflowPlanDeadlineSoon',
      'DrainflowEviction429RateHigh',
      'DrainflowWorkerDown',
      'DrainflowOperatorDown',
    ])
      assert.ok(alerts.has(name), `alert ${name}`);
    assert.equal(alerts.get('DrainflowPlanBlocked')!.for, '30m');
    for (const r of rules)
      assert.ok(promqlMetricNames(r.expr).length > 0, `${r.alert}: names found in ${r.expr}`);
  });

  it('the dashboard has the panels: plans by phase, evictions and 429s per second, drain durations', () => {
    const exprs = dashboardExprs();
    const titles = new Set(exprs.map(([t]) => t));
    for (const t of [
      'Plans by phase',
      'Evictions per second by outcome',
      '429s per second by cause',
      'Drain duration (p50, p90, p99) by final phase',
    ])
      assert.ok(titles.has(t), `panel ${t}`);
    for (const [t, e] of exprs) assert.ok(promqlMetricNames(e).length > 0, `${t}: names found in ${e}`);
  });
});

describe('every metric of the rules and the dashboard is served', () => {
  const h = new OperatorHarness({
    taskQueue: uniqueName('monitoring-e2e'),
    run: uniqueName('mon'),
    lease: { create: 'df-mon-lease' },
  });
  let ns: string | undefined;
  let node: string | undefined;

  before(async () => {
    await h.connect();
    await h.startProcesses();
  });

  after(async () => {
    await h.removePlans(60_000).catch(() => undefined);
    await h.stop();
    if (ns) await deleteNamespace(h.c, ns);
    if (node) await deleteNode(h.c, node);
  });

  it(
    'after one small drain, /metrics of the operator and the worker serve every name used',
    { timeout: 180_000 },
    async () => {
      ns = await createNamespace(h.c, 'df-mon');
      node = await createNode(h.c, 'df-mon-node');
      await h.c.apps.createNamespacedDeployment({
        namespace: ns,
        body: makeDeployment(ns, 'web', 1, { hostname: node }),
      });
      await waitPodsReady(h.c, ns, { app: 'web' }, 1);
      const plan = uniqueName('df-mon');
      h.applyPlan(plan, { nodeNames: [node], drainTimeoutSeconds: 600 });
      const drained = await h.waitPlan(plan, (p) => p.status?.phase === 'Drained', 120_000, 'Drained');
      assert.equal(drained.status?.evictionProgress?.evicted, 1);

      const served = new Set([
        ...servedNames(await h.operator!.metrics()),
        ...servedNames(await h.worker!.metrics()),
      ]);
      const used = new Map<string, string[]>();
      const note = (where: string, expr: string) => {
        for (const n of promqlMetricNames(expr)) used.set(n, [...(used.get(n) ?? []), where]);
      };
      for (const g of ruleFile().groups)
        for (const r of g.rules) note(`alert ${r.alert ?? r.record}`, r.expr);
      for (const [t, e] of dashboardExprs()) note(`panel "${t}"`, e);
      const missing = [...used]
        .filter(([n]) => !served.has(n) && !SYNTHETIC.has(n))
        .map(([n, w]) => `${n} (${w.join(', ')})`);
      assert.deepEqual(missing, [], 'every metric used is served');
      // The drainflow metrics the deploy/monitoring files rely on, with samples after the drain.
      const operatorText = await h.operator!.metrics();
      assert.match(operatorText, /^drainflow_plans\{phase="Drained"\} \d/m);
      assert.match(await h.worker!.metrics(), /^drainflow_evictions_total\{outcome="Evicted"\} 1$/m);
      assert.match(operatorText, /^# TYPE drainflow_plan_deadline_timestamp_seconds gauge$/m);
    },
  );
});
