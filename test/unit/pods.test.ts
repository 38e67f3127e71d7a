import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { PodSelection } from '../../src/api/plan.js';
import {
  MIRROR_POD_ANNOTATION,
  classifyPod,
  classifyPods,
  controllerOf,
  emptyDirVolumes,
  podKey,
  toPodInfo,
  type PodDecision,
  type PodInfo,
} from '../../src/drain/pods.js';

const DEFAULTS: PodSelection = { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false };

interface PodOpts {
  ns?: string;
  name?: string;
  owner?: 'ReplicaSet' | 'DaemonSet' | 'StatefulSet' | 'Node' | 'none' | 'non-controller';
  emptyDir?: boolean;
  phase?: string;
  deleting?: boolean;
  mirror?: boolean;
  labels?: Record<string, string>;
}

function pod(o: PodOpts = {}): PodInfo {
  const ns = o.ns ?? 'default';
  const name = o.name ?? 'p';
  const owner = o.owner ?? 'ReplicaSet';
  const p: PodInfo = {
    metadata: { namespace: ns, name, uid: `uid-${ns}-${name}`, labels: o.labels ?? { app: 'web' } },
    spec: { volumes: [{ name: 'token' }], terminationGracePeriodSeconds: 30 },
    status: { phase: o.phase ?? 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
  if (owner === 'non-controller') {
    p.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'u1' }];
  } else if (owner !== 'none') {
    p.metadata.ownerReferences = [
      {
        apiVersion: owner === 'Node' ? 'v1' : 'apps/v1',
        kind: owner,
        name: `${owner.toLowerCase()}-1`,
        uid: 'u2',
        controller: true,
      },
    ];
  }
  if (o.emptyDir) p.spec!.volumes!.push({ name: 'scratch', emptyDir: {} });
  if (o.deleting) p.metadata.deletionTimestamp = '2024-05-01T12:00:00Z';
  if (o.mirror) p.metadata.annotations = { [MIRROR_POD_ANNOTATION]: 'abc123' };
  return p;
}

type Want = Pick<PodDecision, 'action' | 'reason'>;

describe('classifyPod: each rule and its precedence', () => {
  const cases: Array<{ name: string; pod: PodInfo; sel?: Partial<PodSelection>; want: Want }> = [
    { name: 'ReplicaSet pod is evicted', pod: pod(), want: { action: 'Evict', reason: 'Evictable' } },
    {
      name: 'StatefulSet pod is evicted',
      pod: pod({ owner: 'StatefulSet' }),
      want: { action: 'Evict', reason: 'Evictable' },
    },
    {
      name: 'Succeeded pod is skipped',
      pod: pod({ phase: 'Succeeded' }),
      want: { action: 'Skip', reason: 'PodFinished' },
    },
    {
      name: 'Failed pod is skipped',
      pod: pod({ phase: 'Failed' }),
      want: { action: 'Skip', reason: 'PodFinished' },
    },
    {
      name: 'Pending pod is evicted',
      pod: pod({ phase: 'Pending' }),
      want: { action: 'Evict', reason: 'Evictable' },
    },
    {
      name: 'pod without status is evicted',
      pod: { ...pod(), status: undefined },
      want: { action: 'Evict', reason: 'Evictable' },
    },
    {
      name: 'finished pod without controller is skipped, not blocked',
      pod: pod({ phase: 'Failed', owner: 'none', emptyDir: true }),
      want: { action: 'Skip', reason: 'PodFinished' },
    },
    {
      name: 'finished DaemonSet pod is skipped as finished',
      pod: pod({ phase: 'Succeeded', owner: 'DaemonSet' }),
      sel: { ignoreDaemonSets: false },
      want: { action: 'Skip', reason: 'PodFinished' },
    },
    {
      name: 'mirror pod is skipped',
      pod: pod({ mirror: true, owner: 'Node' }),
      want: { action: 'Skip', reason: 'MirrorPod' },
    },
    {
      name: 'mirror pod without controller is skipped even without force',
      pod: pod({ mirror: true, owner: 'none', emptyDir: true }),
      want: { action: 'Skip', reason: 'MirrorPod' },
    },
    {
      name: 'terminating mirror pod is skipped, not waited for',
      pod: pod({ mirror: true, owner: 'Node', deleting: true }),
      want: { action: 'Skip', reason: 'MirrorPod' },
    },
    {
      name: 'pod outside podSelector is skipped',
      pod: pod({ labels: { app: 'db' } }),
      sel: { podSelector: { matchLabels: { app: 'web' } } },
      want: { action: 'Skip', reason: 'NotSelected' },
    },
    {
      name: 'pod inside podSelector is evicted',
      pod: pod({ labels: { app: 'web' } }),
      sel: { podSelector: { matchLabels: { app: 'web' } } },
      want: { action: 'Evict', reason: 'Evictable' },
    },
    {
      name: 'podSelector exclusion wins over every blocking rule',
      pod: pod({ labels: { app: 'db' }, owner: 'none', emptyDir: true }),
      sel: { podSelector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['db'] }] } },
      want: { action: 'Skip', reason: 'NotSelected' },
    },
    {
      name: 'terminating pod is waited for',
      pod: pod({ deleting: true }),
      want: { action: 'Wait', reason: 'Terminating' },
    },
    {
      name: 'terminating pod without controller is waited for, not blocked',
      pod: pod({ deleting: true, owner: 'none' }),
      want: { action: 'Wait', reason: 'Terminating' },
    },
    {
      name: 'terminating emptyDir pod is waited for, not blocked',
      pod: pod({ deleting: true, emptyDir: true }),
      want: { action: 'Wait', reason: 'Terminating' },
    },
    {
      name: 'terminating finished pod is skipped',
      pod: pod({ deleting: true, phase: 'Succeeded' }),
      want: { action: 'Skip', reason: 'PodFinished' },
    },
    {
      name: 'DaemonSet pod is skipped with ignoreDaemonSets',
      pod: pod({ owner: 'DaemonSet' }),
      want: { action: 'Skip', reason: 'DaemonSetPod' },
    },
    {
      name: 'DaemonSet pod blocks without ignoreDaemonSets',
      pod: pod({ owner: 'DaemonSet' }),
      sel: { ignoreDaemonSets: false },
      want: { action: 'Block', reason: 'DaemonSetPod' },
    },
    {
      name: 'DaemonSet pod blocks even with force',
      pod: pod({ owner: 'DaemonSet' }),
      sel: { ignoreDaemonSets: false, force: true, deleteEmptyDirData: true },
      want: { action: 'Block', reason: 'DaemonSetPod' },
    },
    {
      name: 'terminating DaemonSet pod with ignoreDaemonSets is skipped (never waited for)',
      pod: pod({ owner: 'DaemonSet', deleting: true }),
      want: { action: 'Skip', reason: 'DaemonSetPod' },
    },
    {
      name: 'terminating DaemonSet pod without ignoreDaemonSets is waited for',
      pod: pod({ owner: 'DaemonSet', deleting: true }),
      sel: { ignoreDaemonSets: false },
      want: { action: 'Wait', reason: 'Terminating' },
    },
    {
      name: 'DaemonSet pod with emptyDir is a DaemonSet pod',
      pod: pod({ owner: 'DaemonSet', emptyDir: true }),
      sel: { ignoreDaemonSets: false },
      want: { action: 'Block', reason: 'DaemonSetPod' },
    },
    {
      name: 'pod without controller blocks',
      pod: pod({ owner: 'none' }),
      want: { action: 'Block', reason: 'NoController' },
    },
    {
      name: 'pod with only a non-controller owner blocks',
      pod: pod({ owner: 'non-controller' }),
      want: { action: 'Block', reason: 'NoController' },
    },
    {
      name: 'pod without controller is evicted with force',
      pod: pod({ owner: 'none' }),
      sel: { force: true },
      want: { action: 'Evict', reason: 'NoController' },
    },
    {
      name: 'emptyDir pod blocks',
      pod: pod({ emptyDir: true }),
      want: { action: 'Block', reason: 'EmptyDirData' },
    },
    {
      name: 'emptyDir pod is evicted with deleteEmptyDirData',
      pod: pod({ emptyDir: true }),
      sel: { deleteEmptyDirData: true },
      want: { action: 'Evict', reason: 'EmptyDirData' },
    },
    {
      name: 'emptyDir pod still blocks with only force',
      pod: pod({ emptyDir: true }),
      sel: { force: true },
      want: { action: 'Block', reason: 'EmptyDirData' },
    },
    {
      name: 'emptyDir + no controller: emptyDir reported first (kubectl order)',
      pod: pod({ emptyDir: true, owner: 'none' }),
      want: { action: 'Block', reason: 'EmptyDirData' },
    },
    {
      name: 'emptyDir + no controller with force only: emptyDir blocks',
      pod: pod({ emptyDir: true, owner: 'none' }),
      sel: { force: true },
      want: { action: 'Block', reason: 'EmptyDirData' },
    },
    {
      name: 'emptyDir + no controller with deleteEmptyDirData only: no controller blocks',
      pod: pod({ emptyDir: true, owner: 'none' }),
      sel: { deleteEmptyDirData: true },
      want: { action: 'Block', reason: 'NoController' },
    },
    {
      name: 'emptyDir + no controller with both toggles: evicted',
      pod: pod({ emptyDir: true, owner: 'none' }),
      sel: { deleteEmptyDirData: true, force: true },
      want: { action: 'Evict', reason: 'NoController' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = classifyPod(c.pod, { ...DEFAULTS, ...c.sel });
      assert.deepEqual({ action: d.action, reason: d.reason }, c.want);
      assert.equal(d.pod, `${c.pod.metadata.namespace}/${c.pod.metadata.name}`);
      assert.equal(d.uid, c.pod.metadata.uid);
      assert.ok(d.message.length > 0);
    });
  }
});

describe('classifyPod: messages', () => {
  it('names the controller of an evictable pod', () => {
    assert.deepEqual(classifyPod(pod({ ns: 'shop', name: 'web-1' }), DEFAULTS), {
      pod: 'shop/web-1',
      uid: 'uid-shop-web-1',
      action: 'Evict',
      reason: 'Evictable',
      message: 'managed by ReplicaSet shop/replicaset-1',
    });
  });
  it('a forced unmanaged pod says it will not be re-created', () => {
    const d = classifyPod(pod({ owner: 'none' }), { ...DEFAULTS, force: true });
    assert.match(d.message, /will not be re-created/);
  });
  it('a forced unmanaged emptyDir pod also names the lost volume', () => {
    const d = classifyPod(pod({ owner: 'none', emptyDir: true }), {
      ...DEFAULTS,
      force: true,
      deleteEmptyDirData: true,
    });
    assert.match(d.message, /will not be re-created; its emptyDir volume\(s\) scratch lose their data/);
  });
  it('the emptyDir blocker names the volumes and the override', () => {
    const d = classifyPod(pod({ emptyDir: true }), DEFAULTS);
    assert.equal(
      d.message,
      'pod uses emptyDir volume(s) scratch whose data is lost on eviction: move or delete the pod, or use a plan with spec.podSelection.deleteEmptyDirData: true',
    );
  });
  it('the DaemonSet blocker names the DaemonSet and the override', () => {
    const d = classifyPod(pod({ ns: 'kube-system', owner: 'DaemonSet' }), {
      ...DEFAULTS,
      ignoreDaemonSets: false,
    });
    assert.equal(
      d.message,
      'managed by DaemonSet kube-system/daemonset-1; DaemonSet pods are not evicted: a plan with spec.podSelection.ignoreDaemonSets: true ignores them',
    );
  });
  it('the terminating message carries the deletionTimestamp', () => {
    const d = classifyPod(pod({ deleting: true }), DEFAULTS);
    assert.equal(
      d.message,
      'pod is terminating (deletionTimestamp 2024-05-01T12:00:00Z); waiting for it to be gone, not evicting it again',
    );
  });
  it('the finished message names the phase', () => {
    assert.equal(
      classifyPod(pod({ phase: 'Failed' }), DEFAULTS).message,
      'pod has finished (phase Failed); it holds no resources and is not evicted',
    );
  });
});

describe('classifyPods', () => {
  it('sorts by namespace then name, independent of input order', () => {
    const pods = [
      pod({ ns: 'b', name: 'a' }),
      pod({ ns: 'a', name: 'z', owner: 'none' }),
      pod({ ns: 'a', name: 'B' }),
      pod({ ns: 'a-b', name: 'x', owner: 'DaemonSet' }),
      pod({ ns: 'a', name: 'm', deleting: true }),
    ];
    const got = classifyPods(pods, DEFAULTS).map((d) => [d.pod, d.action, d.reason]);
    const want = [
      ['a/B', 'Evict', 'Evictable'],
      ['a/m', 'Wait', 'Terminating'],
      ['a/z', 'Block', 'NoController'],
      ['a-b/x', 'Skip', 'DaemonSetPod'],
      ['b/a', 'Evict', 'Evictable'],
    ];
    assert.deepEqual(got, want);
    assert.deepEqual(
      classifyPods([...pods].reverse(), DEFAULTS).map((d) => [d.pod, d.action, d.reason]),
      want,
    );
  });
  it('does not reorder its input', () => {
    const pods = [pod({ name: 'z' }), pod({ name: 'a' })];
    classifyPods(pods, DEFAULTS);
    assert.deepEqual(
      pods.map((p) => p.metadata.name),
      ['z', 'a'],
    );
  });
  it('returns [] for no pods', () => {
    assert.deepEqual(classifyPods([], DEFAULTS), []);
  });
});

describe('helpers', () => {
  it('podKey', () => assert.equal(podKey(pod({ ns: 'x', name: 'y' })), 'x/y'));
  it('controllerOf ignores non-controller owners', () => {
    const p = pod({ owner: 'none' });
    p.metadata.ownerReferences = [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: '1', controller: false },
      { apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: '2', controller: true },
    ];
    assert.equal(controllerOf(p)?.kind, 'Job');
  });
  it('emptyDirVolumes lists only emptyDir volumes', () => {
    const p = pod();
    p.spec!.volumes = [
      { name: 'a' },
      { name: 'b', emptyDir: { medium: 'Memory' } },
      { name: 'c', emptyDir: {} },
    ];
    assert.deepEqual(emptyDirVolumes(p), ['b', 'c']);
  });
});

describe('toPodInfo', () => {
  it('keeps only the needed fields and turns Dates into RFC 3339 strings', () => {
    const v1: V1Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        namespace: 'ns',
        name: 'n',
        uid: 'u',
        labels: { a: 'b' },
        annotations: { [MIRROR_POD_ANNOTATION]: 'x' },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: 'rs',
            uid: 'r',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        deletionTimestamp: new Date('2024-05-01T12:00:00Z'),
        resourceVersion: '42',
      },
      spec: {
        nodeName: 'node-1',
        containers: [{ name: 'c', image: 'nginx' }],
        volumes: [
          { name: 'cfg', configMap: { name: 'cm' } },
          { name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } },
        ],
        terminationGracePeriodSeconds: 15,
      },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date('2024-05-01T00:00:00Z') }],
      },
    };
    assert.deepEqual(toPodInfo(v1), {
      metadata: {
        namespace: 'ns',
        name: 'n',
        uid: 'u',
        labels: { a: 'b' },
        annotations: { [MIRROR_POD_ANNOTATION]: 'x' },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'r', controller: true },
        ],
        deletionTimestamp: '2024-05-01T12:00:00.000Z',
      },
      spec: {
        volumes: [{ name: 'cfg' }, { name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } }],
        terminationGracePeriodSeconds: 15,
      },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    });
  });
  it('fills missing identity with empty strings and round-trips through JSON', () => {
    const info = toPodInfo({});
    assert.deepEqual(info, { metadata: { namespace: '', name: '', uid: '' } });
    assert.deepEqual(JSON.parse(JSON.stringify(info)), info);
  });
  it('classifies a converted emptyDir pod like the plain shape', () => {
    const d = classifyPod(
      toPodInfo({
        metadata: {
          namespace: 'ns',
          name: 'n',
          uid: 'u',
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'r', controller: true },
          ],
        },
        spec: { containers: [], volumes: [{ name: 'tmp', emptyDir: {} }] },
      }),
      DEFAULTS,
    );
    assert.deepEqual([d.action, d.reason], ['Block', 'EmptyDirData']);
  });
});
