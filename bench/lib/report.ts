/**
 * Medians, ratios, the Markdown report (bench/RESULTS.md) and the chart (bench/results.png: wall time
 * and 429s per scenario, drainflow next to kubectl drain).
 */
import { writeFileSync } from 'node:fs';
import { podsOnTargets, type Scenario } from '../scenarios.js';
import { CATEGORIES } from './audit.js';
import type { RunResult, Tool } from './runs.js';
import { median, round } from './util.js';

/** The figures summarised per tool (median over the successful runs). */
export const FIGURES: {
  key: string;
  label: string;
  get: (r: RunResult) => number | undefined;
  digits: number;
}[] = [
  { key: 'wallSeconds', label: 'wall time, s', get: (r) => r.wallSeconds, digits: 2 },
  { key: 'podsGoneSeconds', label: 'last pod gone, s', get: (r) => r.podsGoneSeconds, digits: 2 },
  { key: 'evictedPods', label: 'pods evicted', get: (r) => r.evictedPods, digits: 0 },
  { key: 'evictions', label: 'eviction calls', get: (r) => r.api?.evictions.total, digits: 0 },
  { key: 'evictions201', label: '… answered 201', get: (r) => r.api?.evictions.c201, digits: 0 },
  { key: 'evictions429', label: '… answered 429', get: (r) => r.api?.evictions.c429, digits: 0 },
  { key: 'evictionsOther', label: '… other answers', get: (r) => r.api?.evictions.other, digits: 0 },
  {
    key: 'toolAttempts',
    label: 'eviction calls the tool reports',
    get: (r) => r.toolCounts?.attempts,
    digits: 0,
  },
  { key: 'tool429', label: '429s the tool reports', get: (r) => r.toolCounts?.tooManyRequests, digits: 0 },
  {
    key: 'evictionLatencyMs',
    label: 'API server time per eviction call, ms (mean)',
    get: (r) => r.api?.evictionLatencyMs,
    digits: 0,
  },
  {
    key: 'evictionsPerPod',
    label: 'eviction calls per evicted pod',
    get: (r) => r.evictionsPerPod,
    digits: 2,
  },
  { key: 'c429PerPod', label: '429s per evicted pod', get: (r) => r.c429PerPod, digits: 3 },
  { key: 'historyEvents', label: 'Temporal history events', get: (r) => r.history?.events, digits: 0 },
  {
    key: 'historyEventsPerPod',
    label: 'history events per evicted pod',
    get: (r) => r.historyEventsPerPod,
    digits: 1,
  },
  { key: 'statusWrites', label: 'status writes per plan', get: (r) => r.statusWrites, digits: 0 },
  {
    key: 'etaErrorPercent',
    label: 'estimate at half-way: |status.estimatedCompletion − end| / time left, %',
    get: (r) => r.eta?.errorPercent,
    digits: 1,
  },
  {
    key: 'historyRuns',
    label: 'workflow runs (continue-as-new chains counted run by run)',
    get: (r) => r.history?.runs,
    digits: 0,
  },
  {
    key: 'requests',
    label: 'Kubernetes requests by the tool (audit log, all verbs)',
    get: (r) => r.requests?.total,
    digits: 0,
  },
  ...CATEGORIES.map((c) => ({
    key: `requests:${c}`,
    label: `… ${c}`,
    get: (r: RunResult) => r.requests?.byCategory[c],
    digits: 0,
  })),
  {
    key: 'requestsPerPod',
    label: 'requests by the tool per evicted pod',
    get: (r) => r.requestsPerPod,
    digits: 2,
  },
  { key: 'minutes', label: 'minutes (start to end)', get: (r) => r.minutes, digits: 2 },
  {
    key: 'requestsPerMinute',
    label: 'requests by the tool per minute',
    get: (r) => r.requestsPerMinute,
    digits: 1,
  },
  {
    key: 'evictionsPerMinute',
    label: 'eviction calls by the tool per minute',
    get: (r) => r.evictionsPerMinute,
    digits: 1,
  },
  {
    key: 'historyEventsPerMinute',
    label: 'history events per minute',
    get: (r) => r.historyEventsPerMinute,
    digits: 1,
  },
  {
    key: 'temporalRequestsPerPod',
    label: 'Temporal server requests per evicted pod (frontend, all operations)',
    get: (r) => r.temporalRequestsPerPod,
    digits: 2,
  },
  {
    key: 'heartbeatsPerPod',
    label: '… activity heartbeats (RecordActivityTaskHeartbeat) per evicted pod',
    get: (r) => r.heartbeatsPerPod,
    digits: 3,
  },
  {
    key: 'temporalCpuSeconds',
    label: 'Temporal dev server CPU, s',
    get: (r) => r.stack?.cpuSeconds.temporal,
    digits: 1,
  },
  {
    key: 'kubernetesCpuSeconds',
    label: 'Kubernetes stack CPU, s (API server, etcd, controller-manager, scheduler, kwok)',
    get: (r) => kubernetesCpu(r),
    digits: 1,
  },
  {
    key: 'coresBusy',
    label: 'cores busy over the run (the tool, Temporal and Kubernetes CPU over the wall time)',
    get: (r) => coresBusy(r),
    digits: 2,
  },
  { key: 'peakRssMb', label: 'peak RSS, MiB', get: (r) => r.process?.peakRssMb, digits: 0 },
  { key: 'cpuSeconds', label: 'CPU, s', get: (r) => r.process?.cpuSeconds, digits: 2 },
];

/** CPU seconds of the Kubernetes side of the stack over a run (every stack process but Temporal). */
function kubernetesCpu(r: RunResult): number | undefined {
  const cpu = r.stack?.cpuSeconds;
  if (!cpu) return undefined;
  const parts = Object.entries(cpu).filter(([name]) => name !== 'temporal');
  return parts.length ? parts.reduce((a, [, s]) => a + s, 0) : undefined;
}

/** CPU seconds of the tool and every stack process (Temporal and Kubernetes) over a run. */
function hostCpu(r: RunResult): number | undefined {
  const stack = r.stack?.cpuSeconds;
  if (!stack || r.process?.cpuSeconds === undefined) return undefined;
  return r.process.cpuSeconds + Object.values(stack).reduce((a, s) => a + s, 0);
}

/**
 * CPU cores the run kept busy: {@link hostCpu} over the wall time. Near the machine's core count
 * the host is saturated, and the wall time is bounded below by that CPU sum over the cores,
 * whatever the tool does.
 */
function coresBusy(r: RunResult): number | undefined {
  const cpu = hostCpu(r);
  return cpu === undefined || !r.wallSeconds ? undefined : cpu / r.wallSeconds;
}

export type Summary = Record<string, { drainflow?: number; kubectl?: number; ratio?: number }>;

/** Medians per tool over the runs that succeeded, and drainflow/kubectl. */
export function summarise(runs: RunResult[]): Summary {
  const out: Summary = {};
  const ok = (t: Tool) => runs.filter((r) => r.tool === t && r.ok);
  for (const f of FIGURES) {
    const df = median(ok('drainflow').map(f.get));
    const kc = median(ok('kubectl').map(f.get));
    const ratio = df !== undefined && kc !== undefined && kc !== 0 ? round(df / kc, 3) : undefined;
    out[f.key] = {
      ...(df !== undefined ? { drainflow: round(df, 3) } : {}),
      ...(kc !== undefined ? { kubectl: round(kc, 3) } : {}),
      ...(ratio !== undefined ? { ratio } : {}),
    };
  }
  return out;
}

export interface ScenarioResults {
  scenario: Scenario;
  date: string;
  repeat: number;
  tools: Tool[];
  runs: RunResult[];
  summary: Summary;
}

export interface SweepResults {
  scenario: string;
  date: string;
  repeat: number;
  values: { maxConcurrentPerNode: number; runs: RunResult[]; summary: Summary }[];
}

export interface ResultsFile {
  generatedAt: string;
  machine: { nproc: number; memoryGiB: number; cpu: string; kernel: string };
  versions: Record<string, string>;
  scenarios: Record<string, ScenarioResults>;
  sweep?: SweepResults;
}

/** Not measured (old runs lack the newer figures), or no value. */
const NA = '—';
const fmt = (x: number | undefined, digits: number) => (x === undefined ? NA : x.toFixed(digits));

/**
 * The targets of issue 11 ("Faster than kubectl drain on large plans"), per scenario: drainflow's
 * wall time as a fraction of kubectl's, 429s and eviction calls per evicted pod, drainflow CPU ms
 * per evicted pod (half of what that issue measured), and the peak RSS of the split processes
 * (250 MB worker, 200 MB operator: 10^6 bytes per MB).
 */
const TARGETS: Record<
  string,
  { ratio?: number; c429PerPod?: number; callsPerPod?: number; cpuMsPerPod?: number }
> = {
  free: { ratio: 0.6 },
  tight: { ratio: 0.7, c429PerPod: 0 },
  fleet: { ratio: 0.8, c429PerPod: 0.02, callsPerPod: 1.03, cpuMsPerPod: 26.5 },
  scale: { ratio: 0.7, callsPerPod: 1.02, cpuMsPerPod: 17 },
};
const RSS_TARGET_MIB = { worker: 250e6 / 2 ** 20, operator: 200e6 / 2 ** 20 };

/** Verdicts against the targets of issue 11 ({@link TARGETS}), plus requests per pod (issue 10). */
function verdicts(name: string, res: ScenarioResults, nproc: number): string[] {
  const s = res.summary;
  const out: string[] = [];
  const failed = res.runs.filter((r) => !r.ok);
  if (failed.length > 0) {
    out.push(
      `**${failed.length} run(s) failed**: ${failed.map((r) => `${r.tool} #${r.rep}: ${r.error ?? 'unknown'}`).join('; ')}`,
    );
  }
  const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
  const t = TARGETS[name] ?? {};
  const r = s.wallSeconds?.ratio;
  if (t.ratio !== undefined)
    out.push(
      `Target: drainflow wall time at most ${t.ratio}× kubectl drain's — ${r === undefined ? 'not measured' : `${r.toFixed(2)}× → ${verdict(r <= t.ratio)}`}.`,
    );
  // The floor the host's CPU sets: a run cannot end before its CPU (drainflow, Temporal and the
  // Kubernetes side) has run on the machine's cores.
  const cpu = median(res.runs.filter((x) => x.tool === 'drainflow' && x.ok).map(hostCpu));
  const kubectlWall = s.wallSeconds?.kubectl;
  if (t.ratio !== undefined && cpu !== undefined && kubectlWall)
    out.push(
      `CPU floor: drainflow's runs used ${cpu.toFixed(0)} CPU s (drainflow, Temporal, Kubernetes; median), ${(cpu / nproc).toFixed(0)} s of wall on ${nproc} core(s) at best = ${(cpu / nproc / kubectlWall).toFixed(2)}× kubectl drain's wall time.`,
    );
  const q = s.c429PerPod;
  if (t.c429PerPod !== undefined && q?.drainflow !== undefined)
    out.push(
      `Target: 429s per evicted pod at most ${t.c429PerPod} — ${q.drainflow.toFixed(3)}${q.kubectl !== undefined ? ` (kubectl drain ${q.kubectl.toFixed(3)})` : ''} → ${verdict(q.drainflow <= t.c429PerPod)}.`,
    );
  const calls = s.evictionsPerPod?.drainflow;
  if (t.callsPerPod !== undefined && calls !== undefined)
    out.push(
      `Target: eviction calls per evicted pod at most ${t.callsPerPod} — ${calls.toFixed(3)} → ${verdict(calls <= t.callsPerPod)}.`,
    );
  if (t.cpuMsPerPod !== undefined) {
    const per = res.runs
      .filter((x) => x.tool === 'drainflow' && x.ok && x.process && x.evictedPods)
      .map((x) => (x.process!.cpuSeconds * 1000) / x.evictedPods!);
    if (per.length > 0) {
      const worst = Math.max(...per);
      out.push(
        `Target: drainflow CPU per evicted pod at most about ${t.cpuMsPerPod} ms — ${per.map((x) => x.toFixed(0)).join(', ')} ms → ${verdict(worst <= t.cpuMsPerPod)}.`,
      );
    }
  }
  const rpp = s.requestsPerPod?.drainflow;
  if (!res.scenario.blocked)
    out.push(
      `Target: Kubernetes requests by drainflow (all verbs) per evicted pod at most 1.5 (stated for scale) — ${rpp === undefined ? 'not measured' : `${rpp.toFixed(2)} → ${rpp <= 1.5 ? 'met' : '**missed**'}`}` +
        `${s.requestsPerPod?.kubectl !== undefined ? `; kubectl drain ${s.requestsPerPod.kubectl.toFixed(2)}` : ''}.`,
    );
  if (res.scenario.blocked) {
    const m = (k: string, tool: Tool) => fmt(s[k]?.[tool], 1);
    out.push(
      `Per minute of the run (deadline ${res.scenario.timeoutSeconds} s): drainflow ${m('historyEventsPerMinute', 'drainflow')} history events, ` +
        `${m('requestsPerMinute', 'drainflow')} Kubernetes requests, ${m('evictionsPerMinute', 'drainflow')} eviction calls; ` +
        `kubectl drain ${m('requestsPerMinute', 'kubectl')} requests, ${m('evictionsPerMinute', 'kubectl')} eviction calls.`,
    );
  }
  const etaErrors = res.runs.flatMap((x) =>
    x.tool === 'drainflow' && x.ok && x.eta?.errorPercent !== undefined ? [x.eta.errorPercent] : [],
  );
  if (name === 'fleet' && etaErrors.length > 0)
    out.push(
      `Target: status.estimatedCompletion read when half the pods were gone within 30% of the time really left (issue 34) — ${etaErrors.map((x) => `${x.toFixed(1)}%`).join(', ')} → ${verdict(Math.max(...etaErrors) <= 30)}.`,
    );
  if (name === 'fleet' || name === 'fleet-all' || name === 'scale') {
    const df = res.runs.filter((x) => x.tool === 'drainflow');
    out.push(
      `drainflow runs completed (plan Drained, targets empty): ${df.filter((x) => x.ok).length}/${df.length}.`,
    );
    for (const role of ['worker', 'operator'] as const) {
      const peaks = df.flatMap((x) => (x.process?.parts?.[role] ? [x.process.parts[role].peakRssMb] : []));
      if (peaks.length === 0) continue;
      const limit = RSS_TARGET_MIB[role];
      out.push(
        `Target: ${role} peak RSS under ${role === 'worker' ? 250 : 200} MB (${limit.toFixed(0)} MiB) — ${peaks.map((p) => p.toFixed(0)).join(', ')} MiB → ${verdict(Math.max(...peaks) < limit)}.`,
      );
    }
  }
  return out;
}

function table(summary: Summary, tools: Tool[]): string[] {
  const both = tools.includes('drainflow') && tools.includes('kubectl');
  const head = both
    ? '| figure (median) | drainflow | kubectl drain | drainflow / kubectl |'
    : `| figure (median) | ${tools.join(' | ')} |`;
  const sep = both ? '| --- | ---: | ---: | ---: |' : `| --- |${tools.map(() => ' ---: |').join('')}`;
  const rows = [head, sep];
  for (const f of FIGURES) {
    const v = summary[f.key];
    if (!v || (v.drainflow === undefined && v.kubectl === undefined)) continue;
    if (both)
      rows.push(
        `| ${f.label} | ${fmt(v.drainflow, f.digits)} | ${fmt(v.kubectl, f.digits)} | ${v.ratio === undefined ? NA : `${v.ratio.toFixed(2)}×`} |`,
      );
    else rows.push(`| ${f.label} | ${tools.map((t) => fmt(v[t], f.digits)).join(' | ')} |`);
  }
  return rows.length > 2 ? rows : ['No successful run, so no figures.'];
}

function runsTable(runs: RunResult[]): string[] {
  const rows = [
    '| run | started (UTC) | tool | ok | wall s | evictions (201/429/other) | pods | history events | status writes | peak RSS MiB | CPU s |',
    '| ---: | --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of runs) {
    const e = r.api?.evictions;
    rows.push(
      `| ${r.rep} | ${r.startedAt.slice(0, 16).replace('T', ' ')} | ${r.tool}${r.maxConcurrentPerNode !== undefined && r.maxConcurrentPerNode !== 4 ? ` (c=${r.maxConcurrentPerNode})` : ''} | ${r.ok ? 'yes' : 'no'} | ${fmt(r.wallSeconds, 2)} | ` +
        `${e ? `${e.total} (${e.c201}/${e.c429}/${e.other})` : NA} | ${r.evictedPods ?? NA} | ${r.history?.events ?? NA} | ` +
        `${r.tool === 'drainflow' ? (r.statusWrites ?? NA) : NA} | ${fmt(r.process?.peakRssMb, 0)} | ${fmt(r.process?.cpuSeconds, 2)} |`,
    );
  }
  return rows;
}

/** Requests of each run by the tool's own user (audit log), by category; old runs show the placeholder. */
function requestsTable(runs: RunResult[]): string[] {
  const rows = [
    `| run | tool | requests | per evicted pod | per minute | ${CATEGORIES.join(' | ')} | workflow runs | history events per minute |`,
    `| ---: | --- | ---: | ---: | ---: |${CATEGORIES.map(() => ' ---: |').join('')} ---: | ---: |`,
  ];
  for (const r of runs) {
    const q = r.requests;
    rows.push(
      `| ${r.rep} | ${r.tool} | ${q?.total ?? NA} | ${fmt(r.requestsPerPod, 2)} | ${fmt(r.requestsPerMinute, 1)} | ` +
        `${CATEGORIES.map((c) => q?.byCategory[c] ?? NA).join(' | ')} | ${r.history?.runs ?? NA} | ${fmt(r.historyEventsPerMinute, 1)} |`,
    );
  }
  return rows;
}

/** Writes RESULTS.md. */
export function writeMarkdown(file: string, res: ResultsFile, extraNotes: string[] = []): void {
  const L: string[] = [];
  L.push('# drainflow benchmark results', '');
  L.push(
    `Generated by \`npm run bench\` on ${res.generatedAt.slice(0, 10)} (see bench/README.md for how each figure is measured and what would make it unfair).`,
    '',
  );
  L.push(
    `Machine: ${res.machine.nproc} CPU(s) (${res.machine.cpu}), ${res.machine.memoryGiB} GiB memory, Linux ${res.machine.kernel}. ` +
      `Versions: ${Object.entries(res.versions)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}.`,
    '',
  );
  L.push(
    'Every run builds the same workload on fresh kwok nodes of the local stack (real kube-apiserver, kube-controller-manager and scheduler); ' +
      'pods have terminationGracePeriodSeconds 2 and become Ready 3 s after scheduling. drainflow runs as a child process of the bench ' +
      "(`node bin/drainflow.js run`, operator and worker in one process unless noted) with its own task queue; kubectl is the stack's own " +
      "(`kubectl drain NODE --ignore-daemonsets --delete-emptydir-data --timeout=…`, one process per node, as many at once as the plan's maxUnavailableNodes). " +
      'Runs alternate drainflow, kubectl, drainflow, kubectl, …; figures are medians over the successful runs.',
    '',
  );
  L.push('![wall time and 429s per scenario](results.png)', '');
  for (const [name, r] of Object.entries(res.scenarios)) {
    L.push(`## ${name}: ${r.scenario.description}`, '');
    L.push(
      `${r.repeat} repetition(s) on ${r.date.slice(0, 10)}; tools: ${r.tools.join(', ')}; maxUnavailableNodes ${r.scenario.maxUnavailableNodes}; ` +
        `cordon ${[...new Set(r.runs.map((x) => x.cordon ?? 'PerNode'))].join('/')}; ` +
        `${podsOnTargets(r.scenario)} pods on ${r.scenario.targets} target node(s); deadline ${[...new Set(r.runs.map((x) => x.timeoutSeconds ?? r.scenario.timeoutSeconds))].join(' / ')} s.`,
      '',
    );
    L.push(...table(r.summary, r.tools), '');
    for (const v of verdicts(name, r, res.machine.nproc)) L.push(`- ${v}`);
    L.push('');
    L.push('<details><summary>every run</summary>', '', ...runsTable(r.runs), '');
    L.push(
      "Kubernetes requests by the tool's own user (API server audit log; categories in bench/README.md):",
      '',
      ...requestsTable(r.runs),
      '',
    );
    for (const x of r.runs.filter((y) => y.requests)) {
      const top = Object.entries(x.requests!.byVerbResource).slice(0, 12);
      L.push(`- ${x.tool} #${x.rep} by verb and resource: ${top.map(([k, v]) => `${k} ${v}`).join(', ')}`);
    }
    if (r.runs.some((y) => y.requests)) L.push('');
    const warnings = r.runs.flatMap((x) => x.warnings.map((w) => `${x.tool} #${x.rep}: ${w}`));
    if (warnings.length > 0) L.push('Warnings:', '', ...warnings.map((w) => `- ${w}`), '');
    const df = r.runs.find((x) => x.tool === 'drainflow' && x.history);
    if (df?.history) {
      const top = Object.entries(df.history.byType).slice(0, 8);
      L.push(
        `History of drainflow run #${df.rep}: ${df.history.workflows} workflows${df.history.runs !== undefined ? ` in ${df.history.runs} runs (plan ${df.history.planRuns})` : ''}, ${df.history.events} events (plan workflow ${df.history.planEvents}); ` +
          `most frequent: ${top.map(([k, v]) => `${k} ${v}`).join(', ')}.`,
        '',
      );
    }
    L.push('</details>', '');
  }
  if (res.sweep) {
    const sw = res.sweep;
    L.push(`## eviction.maxConcurrentPerNode on \`${sw.scenario}\` (drainflow only)`, '');
    L.push(`${sw.repeat} repetition(s) per value on ${sw.date.slice(0, 10)}, values interleaved.`, '');
    L.push(
      '| maxConcurrentPerNode | wall time, s | eviction calls | 429s | history events per pod | CPU, s | peak RSS, MiB | runs ok |',
    );
    L.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const v of sw.values) {
      const s = v.summary;
      L.push(
        `| ${v.maxConcurrentPerNode} | ${fmt(s.wallSeconds?.drainflow, 2)} | ${fmt(s.evictions?.drainflow, 0)} | ${fmt(s.evictions429?.drainflow, 0)} | ` +
          `${fmt(s.historyEventsPerPod?.drainflow, 1)} | ${fmt(s.cpuSeconds?.drainflow, 2)} | ${fmt(s.peakRssMb?.drainflow, 0)} | ${v.runs.filter((r) => r.ok).length}/${v.runs.length} |`,
      );
    }
    L.push('');
  }
  if (extraNotes.length > 0) L.push(...extraNotes, '');
  writeFileSync(file, L.join('\n'));
}

/** The chart as SVG: one column per scenario, wall time on top, 429s below, drainflow next to kubectl. */
export function chartSvg(res: ResultsFile): string {
  const names = Object.keys(res.scenarios);
  const colW = 190;
  const panelH = 170;
  const top = 60;
  const left = 20;
  const W = Math.max(600, left * 2 + Math.max(1, names.length) * colW);
  const H = top + 2 * (panelH + 50) + 40;
  const colors: Record<Tool, string> = { drainflow: '#2b6cb0', kubectl: '#dd6b20' };
  const o: string[] = [];
  o.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, sans-serif">`,
  );
  o.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  o.push(
    `<text x="${W / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">drainflow vs kubectl drain (medians)</text>`,
  );
  o.push(
    `<rect x="${W / 2 - 110}" y="36" width="12" height="12" fill="${colors.drainflow}"/><text x="${W / 2 - 94}" y="46" font-size="12">drainflow</text>`,
  );
  o.push(
    `<rect x="${W / 2 + 10}" y="36" width="12" height="12" fill="${colors.kubectl}"/><text x="${W / 2 + 26}" y="46" font-size="12">kubectl drain</text>`,
  );
  const panels: { title: string; key: 'wallSeconds' | 'evictions429'; digits: number }[] = [
    { title: 'wall time, s', key: 'wallSeconds', digits: 1 },
    { title: '429 answers', key: 'evictions429', digits: 0 },
  ];
  panels.forEach((p, pi) => {
    const y0 = top + pi * (panelH + 50) + 20;
    names.forEach((name, ci) => {
      const x0 = left + ci * colW;
      const v = res.scenarios[name]!.summary[p.key] ?? {};
      const vals: [Tool, number | undefined][] = [
        ['drainflow', v.drainflow],
        ['kubectl', v.kubectl],
      ];
      const max = Math.max(1e-9, ...vals.map(([, x]) => x ?? 0));
      o.push(
        `<text x="${x0 + colW / 2}" y="${y0 - 4}" text-anchor="middle" font-size="12">${name}: ${p.title}</text>`,
      );
      o.push(
        `<line x1="${x0 + 20}" y1="${y0 + panelH}" x2="${x0 + colW - 20}" y2="${y0 + panelH}" stroke="#444"/>`,
      );
      vals.forEach(([tool, x], bi) => {
        const bw = 50;
        const bx = x0 + 35 + bi * (bw + 20);
        if (x === undefined) {
          o.push(
            `<text x="${bx + bw / 2}" y="${y0 + panelH - 6}" text-anchor="middle" font-size="11" fill="#888">n/a</text>`,
          );
          return;
        }
        const h = Math.max(1, ((panelH - 30) * x) / max);
        o.push(`<rect x="${bx}" y="${y0 + panelH - h}" width="${bw}" height="${h}" fill="${colors[tool]}"/>`);
        o.push(
          `<text x="${bx + bw / 2}" y="${y0 + panelH - h - 5}" text-anchor="middle" font-size="11">${x.toFixed(p.digits)}</text>`,
        );
      });
    });
  });
  o.push(
    `<text x="${W / 2}" y="${H - 12}" text-anchor="middle" font-size="10" fill="#555">${res.generatedAt.slice(0, 10)} · ${res.machine.nproc} CPUs · each panel has its own scale</text>`,
  );
  o.push('</svg>');
  return o.join('\n');
}

/** Writes the chart as PNG (via @resvg/resvg-js), or as SVG next to it when resvg is not installed. */
export async function writeChart(file: string, res: ResultsFile): Promise<string> {
  const svg = chartSvg(res);
  try {
    const { Resvg } = await import('@resvg/resvg-js');
    const png = new Resvg(svg, {
      fitTo: { mode: 'zoom', value: 2 },
      font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
    })
      .render()
      .asPng();
    writeFileSync(file, png);
    return file;
  } catch (err) {
    const svgFile = file.replace(/\.png$/, '') + '.svg';
    writeFileSync(svgFile, svg);
    process.stderr.write(`[bench] PNG not written (${String(err)}); wrote ${svgFile}\n`);
    return svgFile;
  }
}
