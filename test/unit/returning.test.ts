/**
 * Pods that come back (src/drain/returning.ts): the cordon's toleration and the pinning to a node
 * (tables), the ledger's rules, and the node drain's reducers (src/drain/node-drain.ts) playing a
 * drain where each evicted pod's replacement is bound back to the node: each pod at the cordon is
 * evicted once, the replacements are listed under ReturnsToNode with one Warning per controller,
 * and the node ends Drained.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeObservation, ObservedPod } from '../../src/contract/observation.js';
import {
  RETURN_SLACK,
  evictionBoundReached,
  pinnedToNode,
  placementReturn,
  returnsAfterCordon,
  returningWarnings,
  startLedger,
  toleratesCordon,
  type PodToleration,
} from '../../src/drain/returning.js';
import { applyEvictionAnswer } from '../../src/drain/node/answers.js';
import { decideNode } from '../../src/drain/node/decide.js';
import { applyObservation } from '../../src/drain/node/observation.js';
import { nodeSkipped } from '../../src/drain/node/report.js';
import { initialNodeState, type NodeDrainSettings, type NodeDrainState } from '../../src/drain/node/state.js';
import { buildPreflightNode, nodeBlocked, summarizePreflight } from '../../src/drain/preflight.js';
import type { PodInfo } from '../../src/drain/pods.js';
import type { PodSelection } from '../../src/api/plan.js';
import { preflightExitCode } from '../../src/cli/preflight.js';
import { renderPreflight } from '../../src/cli/render-preflight.js';

describe('toleratesCordon (v1.Toleration.ToleratesTaint against node.kubernetes.io/unschedulable:NoSchedule)', () => {
  const table: Array<[PodToleration, boolean]> = [
    [{ operator: 'Exists' }, true],
    [{ operator: 'Exists', effect: 'NoSchedule' }, true],
    [{ operator: 'Exists', effect: 'NoExecute' }, false],
    [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists' }, true],
    [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }, true],
    [{ key: 'node.kubernetes.io/unschedulable' }, true],
    [{ key: 'node.kubernetes.io/unschedulable', operator: 'Equal', value: '' }, true],
    [{ key: 'node.kubernetes.io/unschedulable', operator: 'Equal', value: 'true' }, false],
    [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }, false],
    [{ key: '', operator: 'Equal' }, false],
    [{}, false],
  ];
  for (const [t, want] of table)
    it(`${JSON.stringify(t)} → ${want}`, () => assert.equal(toleratesCordon(t), want));
});

describe('pinnedToNode and placementReturn', () => {
  const any = [{ operator: 'Exists' }];
  const table: Array<[string, Parameters<typeof placementReturn>[0], boolean, string | undefined]> = [
    ['no toleration, no pinning', {}, false, undefined],
    ['tolerates everything', { tolerations: any }, false, 'ToleratesCordon'],
    [
      'hostname selector, tolerates',
      { tolerations: any, nodeSelector: { 'kubernetes.io/hostname': 'n1' } },
      true,
      'PinnedToNode',
    ],
    [
      'hostname selector of another node',
      { tolerations: any, nodeSelector: { 'kubernetes.io/hostname': 'n2' } },
      false,
      'ToleratesCordon',
    ],
    [
      'pinned but not tolerating: cannot come back',
      { nodeSelector: { 'kubernetes.io/hostname': 'n1' } },
      true,
      undefined,
    ],
    [
      'metadata.name field (the DaemonSet way)',
      {
        tolerations: any,
        requiredNodeTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }],
      },
      true,
      'PinnedToNode',
    ],
    [
      'one of two terms elsewhere',
      {
        tolerations: any,
        requiredNodeTerms: [
          { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
        ],
      },
      false,
      'ToleratesCordon',
    ],
    [
      'hostname In [n1, n2]',
      {
        tolerations: any,
        requiredNodeTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1', 'n2'] }] },
        ],
      },
      false,
      'ToleratesCordon',
    ],
  ];
  for (const [what, p, pinned, returns] of table)
    it(what, () => {
      assert.equal(pinnedToNode(p, 'n1'), pinned);
      assert.equal(placementReturn(p, 'n1'), returns);
    });
});

describe('the ledger', () => {
  it('counts pods at the cordon per controller; a later pod returns when it tolerates or its controller lost one', () => {
    const l = startLedger([{ ownerUid: 'rs', owner: 'ReplicaSet ns/web' }, { ownerUid: 'rs' }, {}]);
    assert.deepEqual(l.owners, { rs: { owner: 'ReplicaSet ns/web', atCordon: 2, evicted: 0 } });
    assert.equal(returnsAfterCordon(l, { ownerUid: 'rs' }), false, 'nothing evicted yet');
    assert.equal(returnsAfterCordon(l, { ownerUid: 'rs', returns: 'ToleratesCordon' }), true);
    assert.equal(returnsAfterCordon(l, { returns: 'ToleratesCordon' }), false, 'no controller: never');
    l.owners.rs!.evicted = 1;
    assert.equal(returnsAfterCordon(l, { ownerUid: 'rs' }), true, 'its controller put it back');
    assert.equal(returnsAfterCordon(l, { ownerUid: 'other' }), false);
  });
  it(`bounds a controller's evictions by its pods at the cordon + ${RETURN_SLACK}`, () => {
    const l = startLedger([{ ownerUid: 'rs' }, { ownerUid: 'rs' }]);
    l.owners.rs!.evicted = 2;
    assert.equal(evictionBoundReached(l, 'rs', 0), RETURN_SLACK <= 0);
    l.owners.rs!.evicted = 1;
    assert.equal(evictionBoundReached(l, 'rs', 2), true, 'in-flight calls count');
    assert.equal(evictionBoundReached(l, 'unknown', 5), false);
  });
  it('one Warning per controller with returning pods, until marked', () => {
    const l = startLedger([
      { ownerUid: 'b', owner: 'ReplicaSet ns/b' },
      { ownerUid: 'a', owner: 'ReplicaSet ns/a' },
    ]);
    l.owners.a!.returned = 1;
    l.owners.b!.returned = 2;
    const w = returningWarnings(l, 'n1');
    assert.deepEqual(
      w.map((x) => x.ownerUid),
      ['a', 'b'],
    );
    assert.match(w[1]!.message, /^node n1: pods of ReplicaSet ns\/b come back to the node/);
    l.owners.a!.warned = true;
    assert.deepEqual(
      returningWarnings(l, 'n1').map((x) => x.ownerUid),
      ['b'],
    );
  });
});

// ---- the node drain, played ----

const NOW = 1_700_000_000_000;
const SETTINGS: NodeDrainSettings = {
  maxConcurrentPerNode: 10,
  retryBackoff: { initialSeconds: 5, maxSeconds: 120 },
};

function pod(
  name: string,
  opts: { returns?: ObservedPod['returns']; terminating?: boolean; owner?: string } = {},
): ObservedPod {
  return {
    key: `ns/${name}`,
    namespace: 'ns',
    name,
    uid: `uid-${name}`,
    action: opts.terminating ? 'Wait' : 'Evict',
    reason: opts.terminating ? 'Terminating' : 'Evictable',
    message: '',
    pdbs: [],
    controller: { uid: opts.owner ?? 'rs', ref: `ReplicaSet ns/${opts.owner ?? 'rs'}` },
    ...(opts.returns ? { returns: opts.returns } : {}),
    ...(opts.terminating ? { deletionTimestampMs: NOW } : {}),
  };
}

function observe(s: NodeDrainState, pods: ObservedPod[]): void {
  const obs: Extract<NodeObservation, { changed: true }> = {
    changed: true,
    fingerprint: `f${s.observeSeq + 1}`,
    node: { exists: true, unschedulable: true },
    pods,
    pdbs: [],
  };
  applyObservation(s, obs, ++s.observeSeq, NOW);
}

/** Plays a drain where every evicted pod's replacement is bound back; returns the eviction calls. */
function play(returns: ObservedPod['returns'], replicas: number): { s: NodeDrainState; calls: number } {
  const s = initialNodeState('n1', NOW + 3_600_000, false);
  let calls = 0;
  let live = Array.from({ length: replicas }, (_, i) => pod(`web-${i}`, returns ? { returns } : {}));
  let next = replicas;
  observe(s, live);
  for (let round = 0; round < 50; round++) {
    const d = decideNode(s, NOW, SETTINGS);
    if (d.outcome) break;
    for (const uid of d.evict) {
      calls++;
      applyEvictionAnswer(s, uid, { outcome: 'Evicted' }, NOW, SETTINGS.retryBackoff);
    }
    // The evicted pods go; their controller binds a replacement back to the node.
    const evicted = new Set(d.evict);
    const replacements = d.evict.map(() => pod(`web-${next++}`, returns ? { returns } : {}));
    live = [...live.filter((p) => !evicted.has(p.uid)), ...replacements];
    observe(s, live);
  }
  return { s, calls };
}

describe('a drain whose evicted pods come back', () => {
  for (const [what, returns] of [
    ['tolerations [{operator: Exists}]', 'ToleratesCordon'],
    ['spec.nodeName in the pod template (nothing in the pod spec says so)', undefined],
  ] as const)
    it(`${what}: each pod at the cordon evicted once, the replacements listed, the node Drained`, () => {
      const { s, calls } = play(returns, 3);
      assert.equal(calls, 3);
      assert.equal(s.phase, 'Drained');
      assert.match(s.message ?? '', /3 pod\(s\) came back to the node after the cordon/);
      const skipped = nodeSkipped(s);
      assert.deepEqual(
        skipped.map((p) => [p.pod, p.reason]),
        [
          ['ns/web-3', 'ReturnsToNode'],
          ['ns/web-4', 'ReturnsToNode'],
          ['ns/web-5', 'ReturnsToNode'],
        ],
      );
      assert.equal(s.returning?.owners.rs?.returned, 3);
      assert.equal(returningWarnings(s.returning, 'n1').length, 1, 'one Warning for the one controller');
    });

  it('a controller with no pod at the cordon that puts pods on the node gets one eviction (RETURN_SLACK), then none', () => {
    const s = initialNodeState('n1', NOW + 3_600_000, false);
    observe(s, [pod('other-0', { owner: 'other' })]);
    // Two pods of a new controller appear before any eviction of theirs: one is evicted, the
    // second waits for the bound (in flight), then is a returning pod.
    observe(s, [
      pod('other-0', { owner: 'other' }),
      pod('late-0', { owner: 'late' }),
      pod('late-1', { owner: 'late' }),
    ]);
    const d = decideNode(s, NOW, SETTINGS);
    const lateEvicted = d.evict.filter((u) => u.startsWith('uid-late'));
    assert.equal(lateEvicted.length, 1);
    applyEvictionAnswer(s, lateEvicted[0]!, { outcome: 'Evicted' }, NOW, SETTINGS.retryBackoff);
    const again = decideNode(s, NOW, SETTINGS);
    assert.deepEqual(
      again.evict.filter((u) => u.startsWith('uid-late')),
      [],
    );
    assert.deepEqual(Object.keys(s.returned ?? {}), ['uid-late-1']);
  });

  it('pods that do not come back: the node ends Drained with nothing listed', () => {
    const s = initialNodeState('n1', NOW + 3_600_000, false);
    observe(s, [pod('a-0')]);
    const d = decideNode(s, NOW, SETTINGS);
    assert.equal(d.evict.length, 1);
    applyEvictionAnswer(s, d.evict[0]!, { outcome: 'Evicted' }, NOW, SETTINGS.retryBackoff);
    observe(s, []);
    assert.equal(decideNode(s, NOW, SETTINGS).outcome?.phase, 'Drained');
    assert.equal(nodeSkipped(s).length, 0);
  });
});

describe('preflight warns about pods that tolerate the cordon', () => {
  const selection = { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false } as PodSelection;
  const agent = (name: string, spec: PodInfo['spec']): PodInfo => ({
    metadata: {
      namespace: 'ns',
      name,
      uid: `u-${name}`,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'agent', uid: 'rs', controller: true },
      ],
    },
    ...(spec ? { spec } : {}),
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
  it('flags them (returns, podsReturning) and says so in the summary, with no blocker and exit 0', () => {
    const pf = buildPreflightNode({
      node: 'n1',
      pods: [
        agent('a', {
          tolerations: [{ operator: 'Exists' }],
          nodeSelector: { 'kubernetes.io/hostname': 'n1' },
        }),
        agent('b', { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists' }] }),
        agent('c', { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }] }),
      ],
      pdbs: [],
      selection,
    });
    assert.deepEqual(
      pf.report.evict?.map((e) => [e.pod, e.returns]),
      [
        ['ns/a', 'PinnedToNode'],
        ['ns/b', 'ToleratesCordon'],
        ['ns/c', undefined],
      ],
    );
    assert.equal(pf.report.podsReturning, 2);
    assert.equal(nodeBlocked(pf.report), false);
    const report = summarizePreflight([pf]);
    assert.equal(report.podsReturning, 2);
    assert.match(
      report.summary,
      /warning: 2 pod\(s\) of 1 workload\(s\) would come back to their node after their eviction \(ReturnsToNode: 1 PinnedToNode, 1 ToleratesCordon\)/,
    );
    assert.equal(preflightExitCode(report), 0);
    assert.match(renderPreflight(report), /ns\/a warning ReturnsToNode: PinnedToNode/);
  });
});
