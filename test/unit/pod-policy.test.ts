/**
 * Table tests of the per-pod drain policy (src/drain/pod-policy.ts) and where it acts: the opt-out
 * labels and do-not-disrupt in the classification (src/drain/pods.ts), order groups in the pod list
 * (src/activities/node-pods.ts) and in the node decision, and the skip-wait-for-delete timeout
 * (src/drain/node-drain.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { NodeObservation, ObservedPod } from '../../src/contract/observation.js';
import type { PodOrderRule, PodSelection } from '../../src/api/plan.js';
import { parseSpec } from '../../src/api/plan.js';
import { buildNodePods, observationFingerprint } from '../../src/activities/node-pods.js';
import { classifyPod, type PodInfo } from '../../src/drain/pods.js';
import {
  CRITICAL_POD_ORDER,
  currentOrderGroup,
  drainOptOut,
  hasDoNotDisrupt,
  podOrderOf,
} from '../../src/drain/pod-policy.js';
import {
  applyDeleteTimeout,
  applyEvictionAnswer,
  nextDeleteTimeoutAt,
} from '../../src/drain/node/answers.js';
import { nodeBudgetRequest } from '../../src/drain/node/budget.js';
import { decideNode } from '../../src/drain/node/decide.js';
import { applyObservation } from '../../src/drain/node/observation.js';
import { nodeCounts, podPolicyProgress } from '../../src/drain/node/report.js';
import { initialNodeState, type NodeDrainSettings, type NodeDrainState } from '../../src/drain/node/state.js';

const NOW = 1_700_000_000_000;
const S = 1000;
const BACKOFF = { initialSeconds: 5, maxSeconds: 120 };
const ORDERED: NodeDrainSettings = { maxConcurrentPerNode: 10, retryBackoff: BACKOFF };
const DEFAULTS: PodSelection = { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false };

describe('drainOptOut', () => {
  const cases: Array<[string, Record<string, string> | undefined, ReturnType<typeof drainOptOut>]> = [
    ['no labels', undefined, undefined],
    ['drainflow skip', { 'drainflow.dev/drain': 'skip' }, { value: 'skip', label: 'drainflow.dev/drain' }],
    [
      'Cluster API wait-completed',
      { 'cluster.x-k8s.io/drain': 'wait-completed' },
      { value: 'wait-completed', label: 'cluster.x-k8s.io/drain' },
    ],
    [
      'drainflow wins over Cluster API',
      { 'drainflow.dev/drain': 'wait-completed', 'cluster.x-k8s.io/drain': 'skip' },
      { value: 'wait-completed', label: 'drainflow.dev/drain' },
    ],
    [
      'an unknown value does not count (the other label does)',
      { 'drainflow.dev/drain': 'Skip', 'cluster.x-k8s.io/drain': 'skip' },
      { value: 'skip', label: 'cluster.x-k8s.io/drain' },
    ],
    ['an unknown value alone', { 'drainflow.dev/drain': 'never' }, undefined],
  ];
  for (const [name, labels, want] of cases) it(name, () => assert.deepEqual(drainOptOut(labels), want));

  it('do-not-disrupt counts only with value "true"', () => {
    assert.equal(hasDoNotDisrupt({ 'karpenter.sh/do-not-disrupt': 'true' }), true);
    assert.equal(hasDoNotDisrupt({ 'karpenter.sh/do-not-disrupt': 'false' }), false);
    assert.equal(hasDoNotDisrupt({ 'karpenter.sh/do-not-disrupt': 'True' }), false);
    assert.equal(hasDoNotDisrupt(undefined), false);
  });
});

describe('podOrderOf', () => {
  const rules: PodOrderRule[] = [
    { podSelector: { matchLabels: { tier: 'client' } }, order: -5 },
    { namespaceSelector: { matchLabels: { role: 'storage' } }, order: 100 },
    { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ceph' } }, order: 200 },
    { podSelector: { matchLabels: { tier: 'client' } }, order: 999 },
  ];
  const ns: Record<string, Record<string, string>> = { rook: { role: 'storage' } };
  const labelsOf = (n: string) => ns[n];
  const cases: Array<[string, Parameters<typeof podOrderOf>[0], number]> = [
    ['no entry matches, not critical: 0', { namespace: 'app', labels: { tier: 'web' } }, 0],
    ['first matching entry counts', { namespace: 'rook', labels: { tier: 'client' } }, -5],
    ['namespace labels match', { namespace: 'rook', labels: { app: 'osd' } }, 100],
    ['the namespace name is always a label', { namespace: 'ceph' }, 200],
    [
      'critical priority class, no entry: after the others',
      { namespace: 'kube-system', priorityClassName: 'system-node-critical' },
      CRITICAL_POD_ORDER,
    ],
    [
      'system-cluster-critical too',
      { namespace: 'kube-system', priorityClassName: 'system-cluster-critical' },
      CRITICAL_POD_ORDER,
    ],
    ['another priority class is not critical', { namespace: 'app', priorityClassName: 'high' }, 0],
    [
      'an entry overrides the critical default',
      { namespace: 'rook', priorityClassName: 'system-node-critical' },
      100,
    ],
    ['unknown namespace labels: no match on them', { namespace: 'other', labels: {} }, 0],
  ];
  for (const [name, pod, want] of cases) it(name, () => assert.equal(podOrderOf(pod, rules, labelsOf), want));

  it('a pod selector and a namespace selector in one entry are ANDed', () => {
    const both: PodOrderRule[] = [
      {
        podSelector: { matchLabels: { app: 'osd' } },
        namespaceSelector: { matchLabels: { role: 'storage' } },
        order: 7,
      },
    ];
    assert.equal(podOrderOf({ namespace: 'rook', labels: { app: 'osd' } }, both, labelsOf), 7);
    assert.equal(podOrderOf({ namespace: 'app', labels: { app: 'osd' } }, both, labelsOf), 0);
    assert.equal(podOrderOf({ namespace: 'rook', labels: { app: 'mon' } }, both, labelsOf), 0);
  });

  it('currentOrderGroup is the lowest order present (absent = 0)', () => {
    assert.equal(currentOrderGroup([]), undefined);
    assert.equal(currentOrderGroup([undefined, 5]), 0);
    assert.equal(currentOrderGroup([1000, 5, 100]), 5);
    assert.equal(currentOrderGroup([-3, undefined]), -3);
  });
});

describe('classifyPod: opt-outs', () => {
  const base = (
    o: {
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
      terminating?: boolean;
      phase?: string;
    } = {},
  ): PodInfo => ({
    metadata: {
      namespace: 'app',
      name: 'p',
      uid: 'u',
      ...(o.labels ? { labels: o.labels } : {}),
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs', controller: true },
      ],
      ...(o.terminating ? { deletionTimestamp: '2026-12-01T10:00:00Z' } : {}),
    },
    ...(o.phase ? { status: { phase: o.phase } } : {}),
  });
  const dnd = { 'karpenter.sh/do-not-disrupt': 'true' };
  const cases: Array<[string, PodInfo, PodSelection, string, string]> = [
    [
      'skip label: Skip, not a blocker',
      base({ labels: { 'drainflow.dev/drain': 'skip' } }),
      DEFAULTS,
      'Skip',
      'DrainLabelSkip',
    ],
    [
      'Cluster API skip label',
      base({ labels: { 'cluster.x-k8s.io/drain': 'skip' } }),
      DEFAULTS,
      'Skip',
      'DrainLabelSkip',
    ],
    [
      'skip label on a terminating pod: not waited for',
      base({ labels: { 'drainflow.dev/drain': 'skip' }, terminating: true }),
      DEFAULTS,
      'Skip',
      'DrainLabelSkip',
    ],
    [
      'wait-completed: a blocker named as such',
      base({ labels: { 'drainflow.dev/drain': 'wait-completed' } }),
      DEFAULTS,
      'Block',
      'WaitCompleted',
    ],
    [
      'wait-completed, finished: gone',
      base({ labels: { 'drainflow.dev/drain': 'wait-completed' }, phase: 'Succeeded' }),
      DEFAULTS,
      'Skip',
      'PodFinished',
    ],
    [
      'wait-completed, terminating: waited for',
      base({ labels: { 'cluster.x-k8s.io/drain': 'wait-completed' }, terminating: true }),
      DEFAULTS,
      'Wait',
      'Terminating',
    ],
    ['do-not-disrupt: a blocker', base({ annotations: dnd }), DEFAULTS, 'Block', 'DoNotDisrupt'],
    [
      'do-not-disrupt ignored by the plan',
      base({ annotations: dnd }),
      { ...DEFAULTS, ignoreDoNotDisrupt: true },
      'Evict',
      'Evictable',
    ],
    [
      'do-not-disrupt "false"',
      base({ annotations: { 'karpenter.sh/do-not-disrupt': 'false' } }),
      DEFAULTS,
      'Evict',
      'Evictable',
    ],
    [
      'do-not-disrupt, terminating: waited for',
      base({ annotations: dnd, terminating: true }),
      DEFAULTS,
      'Wait',
      'Terminating',
    ],
    [
      'an unknown label value: the usual rules',
      base({ labels: { 'drainflow.dev/drain': 'later' } }),
      DEFAULTS,
      'Evict',
      'Evictable',
    ],
    [
      'do-not-disrupt as a label does not count (it is an annotation)',
      base({ labels: dnd }),
      DEFAULTS,
      'Evict',
      'Evictable',
    ],
  ];
  for (const [name, pod, sel, action, reason] of cases)
    it(name, () => {
      const d = classifyPod(pod, sel);
      assert.deepEqual([d.action, d.reason], [action, reason], d.message);
    });
  it('the messages say what to do', () => {
    assert.match(classifyPod(base({ annotations: dnd }), DEFAULTS).message, /ignoreDoNotDisrupt/);
    assert.match(
      classifyPod(base({ labels: { 'cluster.x-k8s.io/drain': 'wait-completed' } }), DEFAULTS).message,
      /cluster\.x-k8s\.io\/drain=wait-completed.*waits until the pod completes/,
    );
  });
});

describe('buildNodePods: order groups', () => {
  const v1 = (
    ns: string,
    name: string,
    extra: Partial<V1Pod['spec']> = {},
    labels?: Record<string, string>,
  ): V1Pod => ({
    metadata: {
      namespace: ns,
      name,
      uid: `uid-${name}`,
      ...(labels ? { labels } : {}),
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs', controller: true },
      ],
    },
    spec: { containers: [], ...extra },
  });
  it('sets order when not 0, from spec.podOrder, namespace labels and the priority class', () => {
    const pods = [
      v1('app', 'client', {}, { tier: 'client' }),
      v1('rook', 'osd'),
      v1('kube-system', 'dns', { priorityClassName: 'system-cluster-critical' }),
      v1('app', 'web'),
    ];
    const rules: PodOrderRule[] = [
      { podSelector: { matchLabels: { tier: 'client' } }, order: 0 },
      { namespaceSelector: { matchLabels: { role: 'storage' } }, order: 10 },
    ];
    const { pods: items } = buildNodePods(pods, () => [], DEFAULTS, {
      podOrder: rules,
      namespaceLabels: (n) => (n === 'rook' ? { role: 'storage' } : undefined),
    });
    assert.deepEqual(
      items.map((p) => [p.key, p.order]),
      [
        ['app/client', undefined],
        ['app/web', undefined],
        ['kube-system/dns', CRITICAL_POD_ORDER],
        ['rook/osd', 10],
      ],
    );
  });
  it('the order is part of the fingerprint only when set', () => {
    const item: ObservedPod = {
      key: 'a/p',
      namespace: 'a',
      name: 'p',
      uid: 'u',
      action: 'Evict',
      reason: 'Evictable',
      message: '',
      pdbs: [],
    };
    const content = (pods: ObservedPod[]) => ({
      node: { exists: true, unschedulable: true },
      pods,
      pdbs: [],
    });
    const plain = observationFingerprint(content([item]));
    assert.notEqual(observationFingerprint(content([{ ...item, order: 10 }])), plain);
    assert.notEqual(
      observationFingerprint(content([{ ...item, order: 10 }])),
      observationFingerprint(content([{ ...item, order: 11 }])),
    );
  });
});

describe('observationFingerprint: PDB versions', () => {
  /** A node without pods whose observation holds PDBs a/x and a/y at these allowances and versions. */
  const withPdbs = (a: [allowed: number, rv: string], b: [allowed: number, rv: string]) => ({
    node: { exists: true, unschedulable: true },
    pods: [],
    pdbs: [
      { key: 'a/x', disruptionsAllowed: a[0], resourceVersion: a[1] },
      { key: 'a/y', disruptionsAllowed: b[0], resourceVersion: b[1] },
    ],
  });

  it('a new PDB version is material only for the PDBs the pdbVersions option names', () => {
    const before = withPdbs([1, '10'], [2, '20']);
    const xWritten = withPdbs([1, '11'], [2, '20']); // a/x: new version, same allowance
    const yWritten = withPdbs([1, '10'], [2, '21']);
    const yRose = withPdbs([1, '10'], [3, '21']);
    const table: [string, boolean | string[], typeof before, boolean][] = [
      ['no versions: a status write that keeps the allowance', false, xWritten, false],
      ['every version', true, xWritten, true],
      ['every version', true, yWritten, true],
      ['reports a/x: its new version', ['a/x'], xWritten, true],
      ['reports a/x: a/y written, same allowance', ['a/x'], yWritten, false],
      ['reports a/x: a/y allows more', ['a/x'], yRose, true],
      ['reports nothing: a/y allows more', [], yRose, true],
      ['reports nothing: a/x written', [], xWritten, false],
    ];
    for (const [what, versions, after, material] of table)
      assert.equal(
        observationFingerprint(after, versions) !== observationFingerprint(before, versions),
        material,
        what,
      );
  });

  it('with listedPdbsOnly, the PDBs not listed are not material at all (allowance and version)', () => {
    const before = withPdbs([1, '10'], [2, '20']);
    const xWritten = withPdbs([1, '11'], [2, '20']);
    const xRose = withPdbs([2, '11'], [2, '20']);
    const yRose = withPdbs([1, '10'], [3, '21']);
    const table: [string, boolean | string[], typeof before, boolean][] = [
      ['reports a/x: its new version', ['a/x'], xWritten, true],
      ['reports a/x: it allows more', ['a/x'], xRose, true],
      ['reports a/x: a/y allows more (not its to watch)', ['a/x'], yRose, false],
      ['reports a/y: a/y allows more', ['a/y'], yRose, true],
      ['reports nothing: a/y allows more', [], yRose, false],
      ['no list (true): the option has no effect', true, yRose, true],
    ];
    for (const [what, versions, after, material] of table)
      assert.equal(
        observationFingerprint(after, versions, true) !== observationFingerprint(before, versions, true),
        material,
        what,
      );
    // Without the option a list keeps the allowance of every PDB material.
    assert.notEqual(observationFingerprint(yRose, ['a/x']), observationFingerprint(before, ['a/x']));
  });
});

// ---- the node decision ----

type Changed = Extract<NodeObservation, { changed: true }>;
const item = (key: string, extra: Partial<ObservedPod> = {}): ObservedPod => {
  const [namespace, name] = key.split('/') as [string, string];
  return {
    key,
    namespace,
    name,
    uid: `uid-${key}`,
    action: 'Evict',
    reason: 'Evictable',
    message: '',
    pdbs: [],
    ...extra,
  };
};
const obs = (pods: ObservedPod[], pdbs: Changed['pdbs'] = []): Changed => ({
  changed: true,
  fingerprint: JSON.stringify(pods.map((p) => [p.uid, p.action, p.order, p.deletionTimestampMs])),
  node: { exists: true, unschedulable: true },
  pods,
  pdbs,
});
function observed(
  pods: ObservedPod[],
  pdbs: Changed['pdbs'] = [],
  s?: NodeDrainState,
  now = NOW,
): NodeDrainState {
  const st = s ?? initialNodeState('n1', NOW + 3600 * S, false);
  st.observeSeq++;
  return applyObservation(st, obs(pods, pdbs), st.observeSeq, now);
}

describe('decideNode with order groups', () => {
  const three = () => [
    item('app/client-a'),
    item('app/client-b'),
    item('rook/osd-0', { order: 10 }),
    item('kube-system/dns', { order: CRITICAL_POD_ORDER }),
  ];

  it('evicts only the lowest group; the status names it', () => {
    const s = observed(three());
    const d = decideNode(s, NOW, ORDERED);
    assert.deepEqual(d.evict, ['uid-app/client-a', 'uid-app/client-b']);
    assert.equal(d.phase, 'Draining');
    assert.match(d.message!, /order group 0 first \(2 pod\(s\)\), 2 pod\(s\) in later groups/);
    assert.equal(podPolicyProgress(s).orderGroup, 0);
  });

  it('the next group starts only once the group is gone (not when it is terminating)', () => {
    const s = observed(three());
    decideNode(s, NOW, ORDERED);
    for (const uid of ['uid-app/client-a', 'uid-app/client-b'])
      applyEvictionAnswer(s, uid, { outcome: 'Evicted' }, NOW, BACKOFF);
    observed(
      [
        item('app/client-a', { action: 'Wait', reason: 'Terminating', deletionTimestampMs: NOW }),
        item('rook/osd-0', { order: 10 }),
        item('kube-system/dns', { order: CRITICAL_POD_ORDER }),
      ],
      [],
      s,
    );
    assert.deepEqual(decideNode(s, NOW + S, ORDERED).evict, [], 'client-a still terminating');
    observed(
      [item('rook/osd-0', { order: 10 }), item('kube-system/dns', { order: CRITICAL_POD_ORDER })],
      [],
      s,
    );
    assert.deepEqual(decideNode(s, NOW + 2 * S, ORDERED).evict, ['uid-rook/osd-0']);
    assert.equal(podPolicyProgress(s).orderGroup, 10);
    observed([item('kube-system/dns', { order: CRITICAL_POD_ORDER })], [], s);
    assert.deepEqual(decideNode(s, NOW + 3 * S, ORDERED).evict, ['uid-kube-system/dns']);
  });

  it('a blocked pod holds the later groups, and the node says so', () => {
    const s = observed([
      item('app/bare', { action: 'Block', reason: 'NoController', message: 'no controller' }),
      item('rook/osd-0', { order: 10 }),
    ]);
    const d = decideNode(s, NOW, ORDERED);
    assert.deepEqual(d.evict, []);
    assert.equal(d.phase, 'Blocked');
    assert.match(
      d.message!,
      /1 pod\(s\) of order group 0 cannot be evicted; 1 pod\(s\) of later groups wait/,
    );
  });

  it('a wait-completed pod holds its group until it finishes', () => {
    const s = observed([
      item('batch/job', { action: 'Block', reason: 'WaitCompleted', message: 'wait' }),
      item('rook/osd-0', { order: 10 }),
    ]);
    assert.deepEqual(decideNode(s, NOW, ORDERED).evict, []);
    observed([item('rook/osd-0', { order: 10 })], [], s); // the job finished (Skip PodFinished: not listed)
    assert.deepEqual(decideNode(s, NOW + S, ORDERED).evict, ['uid-rook/osd-0']);
  });

  it('the PDB budget request wants only pods of the current group', () => {
    const s = observed(
      [item('app/client-a', { pdbs: ['app/c'] }), item('rook/osd-0', { order: 10, pdbs: ['rook/osd'] })],
      [
        { key: 'app/c', disruptionsAllowed: 1 },
        { key: 'rook/osd', disruptionsAllowed: 1 },
      ],
    );
    s.budget = { grantSeq: 0, grants: {} };
    assert.deepEqual(nodeBudgetRequest(s, NOW, ORDERED)!.wants, { 'app/c': 1 });
  });

  it('skip-labelled pods are listed as skipped, not tracked', () => {
    const s = observed([
      item('app/keep', {
        action: 'Skip',
        reason: 'DrainLabelSkip',
        message: 'label drainflow.dev/drain=skip',
      }),
      item('app/ds', { action: 'Skip', reason: 'DaemonSetPod', message: 'ds' }),
    ]);
    assert.deepEqual(Object.keys(s.pods), []);
    assert.deepEqual(podPolicyProgress(s).skipped, [
      { pod: 'app/keep', reason: 'DrainLabelSkip', message: 'label drainflow.dev/drain=skip' },
    ]);
    assert.equal(decideNode(s, NOW, ORDERED).outcome?.phase, 'Drained');
  });
});

describe('applyDeleteTimeout (eviction.skipWaitForDeleteTimeoutSeconds)', () => {
  const stuck = (deletionMs: number) =>
    item('app/stuck', { action: 'Wait', reason: 'Terminating', deletionTimestampMs: deletionMs });

  it('a pod terminating that long after its deletionTimestamp counts as gone, and is reported', () => {
    const s = observed([stuck(NOW - 10 * S), item('app/other', { order: 10 })]);
    assert.equal(nextDeleteTimeoutAt(s, 60), NOW + 50 * S);
    assert.deepEqual(applyDeleteTimeout(s, NOW + 49 * S, 60), [], 'not yet');
    const gone = applyDeleteTimeout(s, NOW + 50 * S, 60);
    assert.deepEqual(
      gone.map((p) => p.key),
      ['app/stuck'],
    );
    assert.equal(s.pods['uid-app/stuck'], undefined);
    assert.equal(nodeCounts(s).podsTotal, 2, 'it counts as one of the pods that left');
    const skipped = podPolicyProgress(s).skipped!;
    assert.equal(skipped[0]!.reason, 'DeleteTimeoutPassed');
    assert.match(skipped[0]!.message, /still terminating 60 s after its deletionTimestamp/);
    // The next group starts, though the stuck pod is still shown.
    observed([stuck(NOW - 10 * S), item('app/other', { order: 10 })], [], s, NOW + 51 * S);
    assert.equal(s.pods['uid-app/stuck'], undefined, 'a later observation does not bring it back');
    assert.deepEqual(decideNode(s, NOW + 51 * S, ORDERED).evict, ['uid-app/other']);
    // Once it is really gone it is no longer listed.
    observed([item('app/other', { order: 10 })], [], s, NOW + 52 * S);
    assert.equal(podPolicyProgress(s).skipped, undefined);
  });

  it('pods not terminating, or without an observed deletionTimestamp, are left alone', () => {
    const s = observed([item('app/live')]);
    assert.deepEqual(applyDeleteTimeout(s, NOW + 3600 * S, 1), []);
    assert.equal(nextDeleteTimeoutAt(s, 1), undefined);
  });
});

describe('spec parsing', () => {
  it('podOrder, ignoreDoNotDisrupt and skipWaitForDeleteTimeoutSeconds parse', () => {
    const spec = parseSpec({
      nodeNames: ['n1'],
      podOrder: [{ podSelector: { matchLabels: { app: 'client' } }, order: -1 }],
      podSelection: { ignoreDoNotDisrupt: true },
      eviction: { skipWaitForDeleteTimeoutSeconds: 30 },
    });
    assert.equal(spec.podOrder?.[0]?.order, -1);
    assert.equal(spec.podSelection.ignoreDoNotDisrupt, true);
    assert.equal(spec.eviction.skipWaitForDeleteTimeoutSeconds, 30);
  });
  const bad: Array<[string, unknown, RegExp]> = [
    ['an entry without a selector', { podOrder: [{ order: 1 }] }, /needs podSelector or namespaceSelector/],
    ['a fractional order', { podOrder: [{ podSelector: {}, order: 1.5 }] }, /expected int/],
    ['an order beyond int32', { podOrder: [{ podSelector: {}, order: 2 ** 31 }] }, /2147483647/],
    [
      'a timeout of 0',
      { eviction: { skipWaitForDeleteTimeoutSeconds: 0 } },
      />=1|at least 1|too_small|Too small/i,
    ],
  ];
  for (const [name, extra, re] of bad)
    it(`refuses ${name}`, () =>
      assert.throws(() => parseSpec({ nodeNames: ['n1'], ...(extra as object) }), re));
});
