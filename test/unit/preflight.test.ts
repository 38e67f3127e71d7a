/**
 * The preflight report builder (src/drain/preflight.ts): one table of pods and PodDisruptionBudgets
 * with the blockers, skips and dry-run refusals each must produce, then the caps, the rounds per
 * PDB over several nodes and the plan's summary.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodSelection } from '../../src/api/plan.js';
import { PREFLIGHT_LIST_CAP, PREFLIGHT_NODE_CAP } from '../../src/api/bounds.js';
import { PreflightReason } from '../../src/api/reasons.js';
import {
  allowedOf,
  buildPreflightNode,
  capMessage,
  dryRunVerdict,
  failedPreflightNode,
  pdbNotSynced,
  podsToDryRun,
  preflightOutcome,
  roundsClause,
  summarizePreflight,
} from '../../src/drain/preflight.js';
import type { PreflightPdbInput } from '../../src/drain/preflight-input.js';
import type { PodInfo } from '../../src/drain/pods.js';
import { toPreflightPdb } from '../../src/activities/preflight.js';

const DEFAULTS: PodSelection = { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false };

interface PodOpts {
  owner?: 'ReplicaSet' | 'DaemonSet' | 'none';
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  emptyDir?: boolean;
  phase?: string;
  ready?: boolean;
  deleting?: boolean;
}

function pod(name: string, o: PodOpts = {}, ns = 'app'): PodInfo {
  const owner = o.owner ?? 'ReplicaSet';
  const p: PodInfo = {
    metadata: { namespace: ns, name, uid: `uid-${name}`, labels: o.labels ?? { app: name } },
    spec: { volumes: o.emptyDir ? [{ name: 'scratch', emptyDir: {} }] : [] },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
  if (owner !== 'none')
    p.metadata.ownerReferences = [
      { apiVersion: 'apps/v1', kind: owner, name: `${name}-owner`, uid: 'o', controller: true },
    ];
  if (o.annotations) p.metadata.annotations = o.annotations;
  if (o.deleting) p.metadata.deletionTimestamp = '2026-12-01T10:00:00.000Z';
  return p;
}

function pdb(name: string, app: string, o: Partial<PreflightPdbInput> = {}, ns = 'app'): PreflightPdbInput {
  return {
    namespace: ns,
    name,
    selector: { matchLabels: { app } },
    generation: 1,
    hasStatus: true,
    observedGeneration: 1,
    disruptionsAllowed: 1,
    currentHealthy: 2,
    desiredHealthy: 1,
    ...o,
  };
}

describe('buildPreflightNode: one pod per row', () => {
  // [row name, pod, pdbs, selection, expected blocker reasons, expected skip reason (or undefined)]
  const rows: Array<[string, PodInfo, PreflightPdbInput[], PodSelection, string[], string?]> = [
    ['evictable, no PDB', pod('web'), [], DEFAULTS, []],
    ['evictable, PDB allows 1', pod('web'), [pdb('web', 'web')], DEFAULTS, []],
    ['no controller', pod('bare', { owner: 'none' }), [], DEFAULTS, ['NoController']],
    ['no controller, force', pod('bare', { owner: 'none' }), [], { ...DEFAULTS, force: true }, []],
    ['emptyDir', pod('cache', { emptyDir: true }), [], DEFAULTS, ['EmptyDirData']],
    [
      'emptyDir, deleteEmptyDirData',
      pod('cache', { emptyDir: true }),
      [],
      { ...DEFAULTS, deleteEmptyDirData: true },
      [],
    ],
    [
      'DaemonSet pod, not ignored',
      pod('agent', { owner: 'DaemonSet' }),
      [],
      { ...DEFAULTS, ignoreDaemonSets: false },
      ['DaemonSetPod'],
    ],
    ['DaemonSet pod, ignored', pod('agent', { owner: 'DaemonSet' }), [], DEFAULTS, [], 'DaemonSetPod'],
    ['finished pod', pod('job', { phase: 'Succeeded' }), [], DEFAULTS, [], 'PodFinished'],
    ['terminating pod', pod('old', { deleting: true }), [], DEFAULTS, [], 'Terminating'],
    [
      'not selected',
      pod('other'),
      [],
      { ...DEFAULTS, podSelector: { matchLabels: { app: 'web' } } },
      [],
      'NotSelected',
    ],
    ['PDB allows 0', pod('db'), [pdb('db', 'db', { disruptionsAllowed: 0 })], DEFAULTS, ['DisruptionBudget']],
    [
      'PDB allows a negative count',
      pod('db'),
      [pdb('db', 'db', { disruptionsAllowed: -1 })],
      DEFAULTS,
      ['DisruptionBudget'],
    ],
    [
      'two PDBs',
      pod('db'),
      [pdb('db-a', 'db'), pdb('db-b', 'db')],
      DEFAULTS,
      ['MultiplePodDisruptionBudgets'],
    ],
    [
      'PDB of another namespace does not count',
      pod('db'),
      [pdb('db', 'db', { disruptionsAllowed: 0 }, 'other')],
      DEFAULTS,
      [],
    ],
    [
      'PDB without selector selects nothing',
      pod('db'),
      [{ ...pdb('db', 'db', { disruptionsAllowed: 0 }), selector: undefined }],
      DEFAULTS,
      [],
    ],
    [
      'PDB with an empty selector selects every pod of its namespace',
      pod('db'),
      [pdb('all', 'x', { selector: {}, disruptionsAllowed: 0 })],
      DEFAULTS,
      ['DisruptionBudget'],
    ],
    [
      'PDB generation not observed',
      pod('db'),
      [pdb('db', 'db', { generation: 3, observedGeneration: 2 })],
      DEFAULTS,
      ['PdbNotSynced'],
    ],
    ['PDB without status', pod('db'), [pdb('db', 'db', { hasStatus: false })], DEFAULTS, ['PdbNotSynced']],
    [
      'PDB SyncFailed',
      pod('db'),
      [
        pdb('db', 'db', {
          disruptionsAllowed: 0,
          conditions: [{ type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message: 'boom' }],
        }),
      ],
      DEFAULTS,
      ['PdbNotSynced'],
    ],
    [
      'unhealthy pod, IfHealthyBudget, budget not healthy, allows 0',
      pod('db', { ready: false }),
      [pdb('db', 'db', { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1 })],
      DEFAULTS,
      ['UnhealthyPodGuarded'],
    ],
    [
      'unhealthy pod, explicit IfHealthyBudget',
      pod('db', { ready: false }),
      [
        pdb('db', 'db', {
          disruptionsAllowed: 0,
          currentHealthy: 0,
          desiredHealthy: 1,
          unhealthyPodEvictionPolicy: 'IfHealthyBudget',
        }),
      ],
      DEFAULTS,
      ['UnhealthyPodGuarded'],
    ],
    [
      'unhealthy pod, AlwaysAllow',
      pod('db', { ready: false }),
      [
        pdb('db', 'db', {
          disruptionsAllowed: 0,
          currentHealthy: 0,
          desiredHealthy: 1,
          unhealthyPodEvictionPolicy: 'AlwaysAllow',
        }),
      ],
      DEFAULTS,
      [],
    ],
    [
      'unhealthy pod, healthy budget (evicted without spending)',
      pod('db', { ready: false }),
      [pdb('db', 'db', { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 })],
      DEFAULTS,
      [],
    ],
    [
      'unhealthy pod, budget not healthy but allows 1',
      pod('db', { ready: false }),
      [pdb('db', 'db', { disruptionsAllowed: 1, currentHealthy: 1, desiredHealthy: 2 })],
      DEFAULTS,
      [],
    ],
    [
      'pending pod: no PDB check',
      pod('db', { phase: 'Pending', ready: false }),
      [pdb('db', 'db', { disruptionsAllowed: 0 })],
      DEFAULTS,
      [],
    ],
    [
      'do-not-disrupt',
      pod('batch', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
      [],
      DEFAULTS,
      ['DoNotDisrupt'],
    ],
    [
      'do-not-disrupt "false"',
      pod('batch', { annotations: { 'karpenter.sh/do-not-disrupt': 'false' } }),
      [],
      DEFAULTS,
      [],
    ],
    [
      'do-not-disrupt ignored by the plan',
      pod('batch', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
      [],
      { ...DEFAULTS, ignoreDoNotDisrupt: true } as PodSelection,
      [],
    ],
    [
      'do-not-disrupt and a PDB allowing 0: both',
      pod('db', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
      [pdb('db', 'db', { disruptionsAllowed: 0 })],
      DEFAULTS,
      ['DisruptionBudget', 'DoNotDisrupt'],
    ],
  ];
  for (const [name, p, pdbs, selection, blockers, skip] of rows)
    it(name, () => {
      const { report } = buildPreflightNode({ node: 'n1', pods: [p], pdbs, selection });
      assert.deepEqual(
        (report.blockers ?? []).map((b) => b.reason),
        blockers,
      );
      assert.equal(report.blockerCount, blockers.length);
      assert.equal(report.podsBlocked, blockers.length ? 1 : 0);
      assert.equal(report.skipped?.[0]?.reason, skip);
      assert.equal(report.podsSkipped, skip ? 1 : 0);
      // A do-not-disrupt pod is a blocker only: a drain never evicts it, so it is not to evict and gets no dry run.
      const evicts =
        !skip &&
        !blockers.some((b) => ['NoController', 'EmptyDirData', 'DaemonSetPod', 'DoNotDisrupt'].includes(b));
      assert.equal(report.podsToEvict, evicts ? 1 : 0);
      assert.deepEqual(
        podsToDryRun([p], selection).map((x) => x.name),
        evicts ? [p.metadata.name] : [],
      );
    });

  it('says the kind of a PDB block before the drain: Never for a single replica behind minAvailable 1, else Transient', () => {
    const kindOf = (o: Partial<PreflightPdbInput>) =>
      buildPreflightNode({ node: 'n1', pods: [pod('db')], pdbs: [pdb('db', 'db', o)], selection: DEFAULTS })
        .report.blockers?.[0];
    const single = kindOf({
      minAvailable: 1,
      disruptionsAllowed: 0,
      currentHealthy: 1,
      desiredHealthy: 1,
      expectedPods: 1,
    });
    assert.equal(single?.kind, 'Never');
    assert.match(
      single!.message,
      /can never allow a disruption \(Never: a single replica behind minAvailable: 1\)/,
    );
    assert.equal(
      kindOf({
        maxUnavailable: 0,
        disruptionsAllowed: 0,
        currentHealthy: 3,
        desiredHealthy: 3,
        expectedPods: 3,
      })?.kind,
      'Never',
    );
    const short = kindOf({
      minAvailable: 2,
      disruptionsAllowed: 0,
      currentHealthy: 2,
      desiredHealthy: 2,
      expectedPods: 3,
    });
    assert.equal(short?.kind, 'Transient');
    assert.match(short!.message, /the drain waits until it allows one/);
  });

  it('names both PDBs of a pod under two, and the pod', () => {
    const { report } = buildPreflightNode({
      node: 'n1',
      pods: [pod('db')],
      pdbs: [pdb('db-b', 'db'), pdb('db-a', 'db')],
      selection: DEFAULTS,
    });
    const b = report.blockers![0]!;
    assert.equal(b.pod, 'app/db');
    assert.deepEqual(b.pdbs, ['app/db-a', 'app/db-b']);
    assert.match(b.message, /app\/db-a, app\/db-b/);
    assert.deepEqual(report.evict, [{ pod: 'app/db', pdbs: ['app/db-a', 'app/db-b'] }]);
  });

  it('a node held by another plan is a node-level blocker; one held by the plan itself is not', () => {
    const other = buildPreflightNode({
      node: 'n1',
      heldBy: 'p2',
      planName: 'p1',
      pods: [],
      pdbs: [],
      selection: DEFAULTS,
    });
    assert.deepEqual(
      other.report.blockers?.map((b) => [b.pod, b.reason]),
      [[undefined, PreflightReason.NodeHeldByOtherPlan]],
    );
    assert.equal(other.report.podsBlocked, 0);
    const self = buildPreflightNode({
      node: 'n1',
      heldBy: 'p1',
      planName: 'p1',
      pods: [],
      pdbs: [],
      selection: DEFAULTS,
    });
    assert.equal(self.report.blockerCount, 0);
  });
});

describe('dry-run verdicts', () => {
  const rows: Array<[string, Parameters<typeof dryRunVerdict>[0], ReturnType<typeof dryRunVerdict>]> = [
    ['201', { outcome: 'Evicted' }, { verdict: 'Accepted' }],
    ['404', { outcome: 'Gone' }, { verdict: 'Gone', message: 'the pod is gone' }],
    [
      '429 budget',
      { outcome: 'TooManyRequests', cause: 'DisruptionBudget', pdb: 'app/db', message: 'needs 1' },
      { verdict: 'Refused', code: 429, reason: 'DisruptionBudget', pdb: 'app/db', message: 'needs 1' },
    ],
    [
      '500 two PDBs',
      { outcome: 'Failed', code: 500, reason: 'MultiplePodDisruptionBudgets', message: 'more than one' },
      { verdict: 'Refused', code: 500, reason: 'MultiplePodDisruptionBudgets', message: 'more than one' },
    ],
    [
      '403 namespace terminating',
      { outcome: 'Retry', code: 403, reason: 'NamespaceTerminating', message: 'ns' },
      { verdict: 'Refused', code: 403, reason: 'NamespaceTerminating', message: 'ns' },
    ],
    ['no answer', { error: 'ECONNRESET' }, { verdict: 'Error', reason: 'NoAnswer', message: 'ECONNRESET' }],
  ];
  for (const [name, answer, verdict] of rows)
    it(name, () => assert.deepEqual(dryRunVerdict(answer), verdict));

  it('a refusal is listed and counted; an acceptance only counted; Gone neither', () => {
    const { report } = buildPreflightNode({
      node: 'n1',
      pods: [pod('a'), pod('b'), pod('c'), pod('d')],
      pdbs: [],
      selection: DEFAULTS,
      dryRun: {
        'app/a': { verdict: 'Accepted' },
        'app/b': { verdict: 'Refused', code: 429, reason: 'DisruptionBudget', pdb: 'app/b', message: 'm' },
        'app/c': { verdict: 'Gone' },
      },
    });
    assert.equal(report.dryRunAccepted, 1);
    assert.equal(report.dryRunRefused, 1);
    assert.deepEqual(report.dryRunRefusals, [
      { pod: 'app/b', code: 429, reason: 'DisruptionBudget', pdb: 'app/b', message: 'm' },
    ]);
    assert.deepEqual(
      report.evict?.map((e) => [e.pod, e.dryRun]),
      [
        ['app/a', 'Accepted'],
        ['app/b', 'Refused'],
        ['app/c', 'Gone'],
        ['app/d', undefined],
      ],
    );
  });
});

describe('PDB status helpers', () => {
  it('allowedOf is 0 while the status is not in sync', () => {
    assert.equal(allowedOf(pdb('x', 'x', { disruptionsAllowed: 3 })), 3);
    assert.equal(allowedOf(pdb('x', 'x', { disruptionsAllowed: 3, generation: 2 })), 0);
    assert.match(
      pdbNotSynced(pdb('x', 'x', { generation: 2 }))!,
      /observedGeneration 1 is behind metadata\.generation 2/,
    );
    assert.equal(pdbNotSynced(pdb('x', 'x')), undefined);
  });
  it('capMessage keeps 300 characters', () => {
    assert.equal(capMessage('x'.repeat(1000)).length, 300);
    assert.equal(capMessage('short'), 'short');
  });
});

describe('caps and the plan summary', () => {
  it('lists at most PREFLIGHT_LIST_CAP pods per kind, counts all', () => {
    const pods = Array.from({ length: 25 }, (_, i) =>
      pod(`bare-${String(i).padStart(2, '0')}`, { owner: 'none' }),
    );
    const { report } = buildPreflightNode({ node: 'n1', pods, pdbs: [], selection: DEFAULTS });
    assert.equal(report.blockers!.length, PREFLIGHT_LIST_CAP);
    assert.equal(report.blockerCount, 25);
    assert.equal(report.podsBlocked, 25);
    assert.equal(report.blockers![0]!.pod, 'app/bare-00');
  });

  it('rounds per PDB add up over nodes; a PDB allowing 0 has none and sorts first', () => {
    const web = (n: number) =>
      Array.from({ length: n }, (_, i) => pod(`web-${i}`, { labels: { app: 'web' } }));
    const budget = pdb('web', 'web', { disruptionsAllowed: 2 });
    const n1 = buildPreflightNode({ node: 'n1', pods: web(3), pdbs: [budget], selection: DEFAULTS });
    const n2 = buildPreflightNode({
      node: 'n2',
      pods: [
        ...web(2).map((p) => ({ ...p, metadata: { ...p.metadata, name: `${p.metadata.name}-b` } })),
        pod('db'),
      ],
      pdbs: [budget, pdb('db', 'db', { disruptionsAllowed: 0 })],
      selection: DEFAULTS,
    });
    const r = summarizePreflight([n2, n1], Date.parse('2026-12-01T12:00:00Z'));
    assert.deepEqual(
      r.pdbs?.map((p) => [p.pdb, p.podsToEvict, p.disruptionsAllowed, p.rounds]),
      [
        ['app/db', 1, 0, undefined],
        ['app/web', 5, 2, 3],
      ],
    );
    assert.equal(r.maxRounds, 3);
    assert.equal(r.podsToEvict, 6);
    assert.equal(r.nodesExamined, 2);
    assert.equal(r.nodesBlocked, 1);
    assert.deepEqual(
      r.nodes.map((n) => n.name),
      ['n2', 'n1'],
    );
    assert.equal(r.completedAt, '2026-12-01T12:00:00.000Z');
    assert.match(r.summary, /2 node\(s\) examined, nothing cordoned or evicted: 6 pod\(s\) to evict/);
    // db allows none: the drain cannot finish, whatever web needs.
    assert.match(
      r.summary,
      /; PodDisruptionBudget app\/db allows no disruption: the drain cannot finish while it does \(the others need at most 3 round\(s\)\)/,
    );
    assert.doesNotMatch(r.summary, /slowest/);
    assert.equal(preflightOutcome(r), PreflightReason.BlockersFound);
    assert.match(
      summarizePreflight([n1]).summary,
      /; the slowest PodDisruptionBudget needs 2 round\(s\)$/,
      'without a PDB at 0 the slowest one is named',
    );
  });

  it('roundsClause: PDBs at 0 first, then the others; the slowest alone; nothing without PDBs', () => {
    const rows: Array<[string[], number | undefined, string]> = [
      [[], undefined, ''],
      [[], 4, '; the slowest PodDisruptionBudget needs 4 round(s)'],
      [
        ['a/db'],
        undefined,
        '; PodDisruptionBudget a/db allows no disruption: the drain cannot finish while it does',
      ],
      [
        ['a/db'],
        4,
        '; PodDisruptionBudget a/db allows no disruption: the drain cannot finish while it does (the others need at most 4 round(s))',
      ],
      [
        ['a/1', 'a/2', 'a/3', 'a/4'],
        undefined,
        '; 4 PodDisruptionBudgets allow no disruption (a/1, a/2, a/3 and 1 more): the drain cannot finish while they do',
      ],
    ];
    for (const [stuck, max, want] of rows) assert.equal(roundsClause(stuck, max), want);
  });

  it('a do-not-disrupt pod is a blocker only: not to evict, not counted, no dry run, no PDB round', () => {
    // Five pods behind one PDB, one of them do-not-disrupt: a drain evicts four.
    const pods = [
      ...Array.from({ length: 4 }, (_, i) => pod(`web-${i}`, { labels: { app: 'web' } })),
      pod('web-held', { labels: { app: 'web' }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
    ];
    const pdbs = [pdb('web', 'web', { disruptionsAllowed: 1 })];
    const toDryRun = podsToDryRun(pods, DEFAULTS).map((p) => p.name);
    assert.deepEqual(toDryRun, ['web-0', 'web-1', 'web-2', 'web-3']);
    const dryRun = Object.fromEntries(toDryRun.map((n) => [`app/${n}`, { verdict: 'Accepted' as const }]));
    const node = buildPreflightNode({ node: 'n1', pods, pdbs, selection: DEFAULTS, dryRun });
    assert.equal(node.report.podsToEvict, 4);
    assert.deepEqual(
      node.report.evict?.map((e) => e.pod),
      ['app/web-0', 'app/web-1', 'app/web-2', 'app/web-3'],
    );
    assert.deepEqual(
      node.report.blockers?.map((b) => [b.pod, b.reason]),
      [['app/web-held', 'DoNotDisrupt']],
    );
    assert.equal(node.report.dryRunAccepted, 4);
    assert.deepEqual(node.pdbs, [
      { pdb: 'app/web', pods: 4, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 },
    ]);
    const r = summarizePreflight([node]);
    assert.equal(r.podsToEvict, 4);
    assert.equal(r.pdbs?.[0]?.rounds, 4);
    // Ignored by the plan: evicted like the others.
    const ignored = { ...DEFAULTS, ignoreDoNotDisrupt: true } as PodSelection;
    assert.equal(podsToDryRun(pods, ignored).length, 5);
    assert.equal(buildPreflightNode({ node: 'n1', pods, pdbs, selection: ignored }).report.podsToEvict, 5);
  });

  it('a do-not-disrupt pod without a controller names both reasons', () => {
    const { report } = buildPreflightNode({
      node: 'n1',
      pods: [pod('bare', { owner: 'none', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })],
      pdbs: [],
      selection: DEFAULTS,
    });
    assert.deepEqual(
      report.blockers?.map((b) => b.reason),
      ['DoNotDisrupt', 'NoController'],
    );
    assert.equal(report.podsBlocked, 1);
    assert.equal(report.podsToEvict, 0);
  });

  it('nodes: blockers first, then by name, capped; outcome NoBlockers / PreflightIncomplete', () => {
    const clean = Array.from({ length: PREFLIGHT_NODE_CAP + 5 }, (_, i) =>
      buildPreflightNode({
        node: `n${String(i).padStart(2, '0')}`,
        pods: [pod('w')],
        pdbs: [],
        selection: DEFAULTS,
      }),
    );
    const r = summarizePreflight(clean);
    assert.equal(r.nodes.length, PREFLIGHT_NODE_CAP);
    assert.equal(r.nodesExamined, PREFLIGHT_NODE_CAP + 5);
    assert.equal(r.completedAt, undefined);
    assert.equal(r.maxRounds, undefined);
    assert.equal(preflightOutcome(r), PreflightReason.NoBlockers);
    const withError = summarizePreflight([...clean, failedPreflightNode('zz', 'node zz not found')]);
    assert.equal(withError.nodes[0]!.name, 'zz');
    assert.equal(withError.nodes[0]!.error, 'node zz not found');
    assert.equal(preflightOutcome(withError), PreflightReason.PreflightIncomplete);
    assert.match(withError.summary, /1 node\(s\) could not be examined/);
  });
});

describe('toPreflightPdb', () => {
  it('keeps selector, generation, status counts, conditions and the policy; a nil selector stays absent', () => {
    assert.deepEqual(
      toPreflightPdb({
        metadata: { namespace: 'app', name: 'db', generation: 2 },
        spec: { selector: { matchLabels: { app: 'db' } }, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
        status: {
          observedGeneration: 1,
          disruptionsAllowed: 0,
          currentHealthy: 1,
          desiredHealthy: 1,
          expectedPods: 1,
          conditions: [
            {
              type: 'DisruptionAllowed',
              status: 'False',
              reason: 'SyncFailed',
              message: 'found no controllers',
              lastTransitionTime: new Date(0),
            },
          ],
        },
      }),
      {
        namespace: 'app',
        name: 'db',
        hasStatus: true,
        selector: { matchLabels: { app: 'db' } },
        generation: 2,
        unhealthyPodEvictionPolicy: 'AlwaysAllow',
        observedGeneration: 1,
        disruptionsAllowed: 0,
        currentHealthy: 1,
        desiredHealthy: 1,
        expectedPods: 1,
        conditions: [
          {
            type: 'DisruptionAllowed',
            status: 'False',
            reason: 'SyncFailed',
            message: 'found no controllers',
          },
        ],
      },
    );
    const bare = toPreflightPdb({ metadata: { namespace: 'app', name: 'x' }, spec: {} });
    assert.deepEqual(bare, { namespace: 'app', name: 'x', hasStatus: false });
    assert.match(pdbNotSynced(bare)!, /has no status yet/);
  });
});
