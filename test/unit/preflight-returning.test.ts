/**
 * Preflight's warning about workloads whose pods come back to the cordoned node
 * (src/drain/preflight-returning.ts), as tables: why a pod comes back, which workload it names,
 * which controllers are read, and the report of a node with such pods (a warning: no blocker, the
 * exit code of a clean node).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSpec } from '../../src/api/plan.js';
import type { PodInfo } from '../../src/drain/pods.js';
import { buildPreflightNode, nodeBlocked, summarizePreflight } from '../../src/drain/preflight.js';
import {
  ownersToRead,
  returnReason,
  returningWorkloads,
  toPreflightOwner,
  type ControllerObject,
  type OwnerRef,
  type PreflightOwner,
} from '../../src/drain/preflight-returning.js';
import { preflightExitCode } from '../../src/cli/preflight.js';
import { renderPreflight } from '../../src/cli/render-preflight.js';

const NODE = 'n1';
const NS = 'shop';
const selection = parseSpec({ nodeNames: [NODE] }).podSelection;

/** A Running, Ready pod of `kind name` (uid `owner-uid`), or without a controller when `kind` is absent. */
function pod(name: string, kind?: string, owner = 'owner', spec: PodInfo['spec'] = {}): PodInfo {
  return {
    metadata: {
      namespace: NS,
      name,
      uid: `${name}-uid`,
      ...(kind
        ? {
            ownerReferences: [
              { apiVersion: 'apps/v1', kind, name: owner, uid: `${owner}-uid`, controller: true },
            ],
          }
        : {}),
    },
    spec,
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

const pinnedOwner: PreflightOwner = { workload: `Deployment ${NS}/agent`, templateNodeName: NODE };
const owners: Record<string, PreflightOwner> = { 'owner-uid': pinnedOwner };
const exists = { tolerations: [{ operator: 'Exists' }] };
const hostname = { nodeSelector: { 'kubernetes.io/hostname': NODE } };

describe('returnReason: why a pod to evict would come back to the node', () => {
  const rows: Array<{
    what: string;
    pod: PodInfo;
    owners?: Record<string, PreflightOwner>;
    want: string | undefined;
  }> = [
    {
      what: 'template spec.nodeName is this node',
      pod: pod('a', 'ReplicaSet'),
      owners,
      want: 'NodeNameInTemplate',
    },
    {
      what: 'template spec.nodeName is another node',
      pod: pod('a', 'ReplicaSet'),
      owners: { 'owner-uid': { workload: 'x', templateNodeName: 'n2' } },
      want: undefined,
    },
    {
      what: 'template without spec.nodeName',
      pod: pod('a', 'ReplicaSet'),
      owners: { 'owner-uid': { workload: 'x' } },
      want: undefined,
    },
    { what: 'controller not read', pod: pod('a', 'ReplicaSet'), want: undefined },
    {
      what: 'template pin wins over a toleration',
      pod: pod('a', 'ReplicaSet', 'owner', exists),
      owners,
      want: 'NodeNameInTemplate',
    },
    { what: 'tolerates every taint', pod: pod('a', 'ReplicaSet', 'owner', exists), want: 'ToleratesCordon' },
    {
      what: 'tolerates the cordon by key',
      pod: pod('a', 'StatefulSet', 'owner', {
        tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }],
      }),
      want: 'ToleratesCordon',
    },
    {
      what: 'tolerates and selects this node by hostname',
      pod: pod('a', 'ReplicaSet', 'owner', { ...exists, ...hostname }),
      want: 'PinnedToNode',
    },
    {
      what: 'selects this node but does not tolerate the cordon',
      pod: pod('a', 'ReplicaSet', 'owner', hostname),
      want: undefined,
    },
    {
      what: 'tolerates NoExecute only',
      pod: pod('a', 'ReplicaSet', 'owner', { tolerations: [{ operator: 'Exists', effect: 'NoExecute' }] }),
      want: undefined,
    },
    {
      what: 'no controller, tolerating everything (never re-created)',
      pod: pod('a', undefined, 'o', exists),
      want: undefined,
    },
    {
      what: 'a controller of an unread kind, tolerating everything',
      pod: pod('a', 'Widget', 'owner', exists),
      want: 'ToleratesCordon',
    },
  ];
  for (const r of rows)
    it(`${r.what}: ${r.want ?? 'does not come back'}`, () => {
      assert.equal(returnReason(r.pod, NODE, r.owners), r.want);
    });
});

describe('toPreflightOwner: the workload an admin acts on, and the template pin', () => {
  const ref = (kind: OwnerRef['kind'], name: string): OwnerRef => ({ kind, namespace: NS, name, uid: 'u' });
  const obj = (up: { kind: string; name: string } | undefined, nodeName?: string): ControllerObject => ({
    metadata: up ? { ownerReferences: [{ ...up, controller: true }] } : {},
    spec: { template: { spec: nodeName ? { nodeName } : {} } },
  });
  const rows: Array<{ what: string; ref: OwnerRef; obj: ControllerObject; want: PreflightOwner }> = [
    {
      what: 'a ReplicaSet of a Deployment names the Deployment',
      ref: ref('ReplicaSet', 'web-5d8f'),
      obj: obj({ kind: 'Deployment', name: 'web' }, NODE),
      want: { workload: `Deployment ${NS}/web`, templateNodeName: NODE },
    },
    {
      what: 'a bare ReplicaSet names itself',
      ref: ref('ReplicaSet', 'web-5d8f'),
      obj: obj(undefined),
      want: { workload: `ReplicaSet ${NS}/web-5d8f` },
    },
    {
      what: 'a ReplicaSet owned by something else names itself',
      ref: ref('ReplicaSet', 'web-5d8f'),
      obj: obj({ kind: 'Rollout', name: 'web' }),
      want: { workload: `ReplicaSet ${NS}/web-5d8f` },
    },
    {
      what: 'a Job of a CronJob names the CronJob',
      ref: ref('Job', 'nightly-2901'),
      obj: obj({ kind: 'CronJob', name: 'nightly' }, NODE),
      want: { workload: `CronJob ${NS}/nightly`, templateNodeName: NODE },
    },
    {
      what: 'a StatefulSet names itself',
      ref: ref('StatefulSet', 'db'),
      obj: obj(undefined, 'n9'),
      want: { workload: `StatefulSet ${NS}/db`, templateNodeName: 'n9' },
    },
    {
      what: 'a ReplicationController names itself',
      ref: ref('ReplicationController', 'old'),
      obj: {},
      want: { workload: `ReplicationController ${NS}/old` },
    },
  ];
  for (const r of rows) it(r.what, () => assert.deepEqual(toPreflightOwner(r.ref, r.obj), r.want));
});

describe('ownersToRead: one read per distinct controller of a pod to evict', () => {
  it('reads ReplicaSets, StatefulSets, Jobs and ReplicationControllers once each; not DaemonSets, other kinds, pods not evicted', () => {
    const pods = [
      pod('a-1', 'ReplicaSet', 'a'),
      pod('a-2', 'ReplicaSet', 'a'),
      pod('db-0', 'StatefulSet', 'db'),
      pod('job-x', 'Job', 'job'),
      pod('rc-x', 'ReplicationController', 'rc'),
      pod('ds-x', 'DaemonSet', 'ds'),
      pod('w-x', 'Widget', 'w'),
      pod('bare'),
      { ...pod('done', 'ReplicaSet', 'finished'), status: { phase: 'Succeeded' } },
    ];
    assert.deepEqual(
      ownersToRead(pods, selection).map((r) => `${r.kind} ${r.namespace}/${r.name}`),
      [`ReplicaSet ${NS}/a`, `StatefulSet ${NS}/db`, `Job ${NS}/job`, `ReplicationController ${NS}/rc`],
    );
  });
});

describe('returningWorkloads: one entry per workload and reason', () => {
  it('groups by workload, names the reason and what the admin can do, sorted', () => {
    const list = returningWorkloads(
      [
        { pod: pod('b-1', 'ReplicaSet', 'b', exists), reason: 'ToleratesCordon' },
        { pod: pod('a-1', 'ReplicaSet', 'owner'), reason: 'NodeNameInTemplate' },
        { pod: pod('a-2', 'ReplicaSet', 'owner'), reason: 'NodeNameInTemplate' },
      ],
      NODE,
      owners,
    );
    assert.deepEqual(
      list.map((r) => [r.workload, r.reason, r.pods]),
      [
        [`Deployment ${NS}/agent`, 'NodeNameInTemplate', 2],
        [`ReplicaSet ${NS}/b`, 'ToleratesCordon', 1],
      ],
    );
    assert.match(list[0]!.message, /pod template sets spec\.nodeName: n1/);
    assert.match(list[0]!.message, /evicts its 2 pod\(s\) on the node once/);
    assert.match(list[0]!.message, /ends Drained/);
    assert.match(list[0]!.message, /scale it down, or replace spec\.nodeName with node affinity/);
    assert.match(list[1]!.message, /tolerate the cordon .*narrow its toleration/);
  });
});

describe('buildPreflightNode with pods that come back: a warning, not a blocker', () => {
  const pods = [
    pod('agent-1', 'ReplicaSet', 'owner'),
    pod('agent-2', 'ReplicaSet', 'owner'),
    pod('web-1', 'ReplicaSet', 'web'),
  ];
  const build = (o?: Record<string, PreflightOwner>, ownersUnread?: number) =>
    buildPreflightNode({
      node: NODE,
      pods,
      pdbs: [],
      selection,
      ...(o ? { owners: o } : {}),
      ...(ownersUnread ? { ownersUnread } : {}),
    });

  it('lists the pinned workload, counts its pods, blocks nothing, exits 0', () => {
    const n = build(owners);
    assert.equal(n.report.podsToEvict, 3);
    assert.equal(n.report.podsReturning, 2);
    assert.deepEqual(
      n.report.returning?.map((r) => [r.workload, r.reason, r.pods]),
      [[`Deployment ${NS}/agent`, 'NodeNameInTemplate', 2]],
    );
    assert.equal(nodeBlocked(n.report), false);
    const r = summarizePreflight([n]);
    assert.equal(r.podsReturning, 2);
    assert.match(
      r.summary,
      /warning: 2 pod\(s\) of 1 workload\(s\) would come back to their node after their eviction \(ReturnsToNode: 2 NodeNameInTemplate\)/,
    );
    assert.equal(preflightExitCode(r), 0, 'the drain ends the node Drained: exit 0');
    assert.match(
      renderPreflight(r),
      /would come back to the node after their eviction \(warning, ReturnsToNode\):\n {4}NodeNameInTemplate: Deployment shop\/agent: its pod template/,
    );
  });

  it('without the controllers read, nothing is reported; unread controllers are said', () => {
    const n = build(undefined, 2);
    assert.equal(n.report.podsReturning, undefined);
    assert.equal(n.report.returning, undefined);
    assert.equal(n.report.ownersUnread, 2);
    assert.match(summarizePreflight([n]).summary, /2 controller\(s\) of pods to evict could not be read/);
    assert.doesNotMatch(summarizePreflight([build()]).summary, /could not be read|come back/);
  });
});
