/**
 * The activities over a fake {@link KubernetesPort} (no stack): what each activity asks the port,
 * and what it makes of the answers. The rule for each Eviction API answer on its own is the
 * `classifyEviction` table of eviction.test.ts; here every kind of answer goes through the whole
 * `evictPod` activity (the request it sends, the 409 resolved by a pod read, errors and
 * cancellation passed on), modelled on Cluster API's TestEvictPods table.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  KubeConfig,
  type V1Node,
  type V1NodeCondition,
  type V1Pod,
  type V1PodDisruptionBudget,
} from '@kubernetes/client-node';
import { CancelledFailure } from '@temporalio/common';
import { pino } from 'pino';
import { createActivities } from '../../src/activities/index.js';
import type { DrainActivities } from '../../src/activities/types.js';
import type { EvictInput, EvictResult } from '../../src/contract/eviction.js';
import type { MaintenancePlan, MaintenancePlanStatus } from '../../src/api/plan.js';
import { PermanentKubernetesError, TransientKubernetesError, type RawAnswer } from '../../src/k8s/errors.js';
import type { PlanEvent } from '../../src/k8s/events.js';
import {
  NODE_CLAIM_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  NODE_CLAIM_NODE_UID_ANNOTATION,
} from '../../src/k8s/node-claim.js';
import { CONFLICT_ATTEMPTS } from '../../src/k8s/patch.js';
import { wantedNodeConditions } from '../../src/drain/node-conditions.js';
import type { KubernetesPort } from '../../src/k8s/port.js';
import { createPreflightActivities } from '../../src/activities/preflight.js';
import type { ControllerObject, OwnerRef } from '../../src/drain/preflight-returning.js';
import { parseSpec } from '../../src/api/plan.js';

/** A call the fake port received: method name and arguments. */
type Call = [string, ...unknown[]];

/**
 * An in-memory port: nodes, pods, PDBs and plans in maps, evictions answered from a queue, scripted
 * patch/status answers; every call recorded in `calls`. Methods not set up throw.
 */
class FakePort implements KubernetesPort {
  readonly calls: Call[] = [];
  readonly nodes = new Map<string, V1Node>();
  readonly pods = new Map<string, V1Pod>();
  readonly pdbs = new Map<string, V1PodDisruptionBudget[]>();
  readonly plans = new Map<string, MaintenancePlan>();
  readonly events: PlanEvent[] = [];
  /** Answers of the next evictPod calls, in order (an Error is thrown). */
  evictions: Array<RawAnswer | 'aborted' | Error> = [];
  /** Answers of the next deletePod calls, in order (an Error is thrown). */
  deletions: Array<'deleted' | 'gone' | Error> = [];
  /** Answers of the next patchNode calls before the patch is applied ('apply': apply it). */
  patchAnswers: Array<'conflict' | 'gone' | 'apply'> = [];
  /** Answers of the next replacePlanStatus calls ('apply': store the status). */
  statusAnswers: Array<'conflict' | 'gone' | 'apply' | Error> = [];

  async *listNodes(): AsyncIterable<V1Node> {
    this.calls.push(['listNodes']);
    yield* this.nodes.values();
  }
  async readNode(name: string): Promise<V1Node | undefined> {
    this.calls.push(['readNode', name]);
    const n = this.nodes.get(name);
    return n && structuredClone(n);
  }
  async patchNode(name: string, patch: object): Promise<V1Node | 'conflict' | 'gone'> {
    this.calls.push(['patchNode', name, patch]);
    const answer = this.patchAnswers.shift() ?? 'apply';
    if (answer !== 'apply') return answer;
    const node = this.nodes.get(name);
    if (!node) return 'gone';
    const p = patch as { metadata?: { annotations?: Record<string, string | null> }; spec?: object };
    const ann = { ...(node.metadata?.annotations ?? {}) };
    for (const [k, v] of Object.entries(p.metadata?.annotations ?? {})) {
      if (v === null) delete ann[k];
      else ann[k] = v;
    }
    const spec = { ...(node.spec ?? {}) } as Record<string, unknown>;
    for (const [k, v] of Object.entries(p.spec ?? {})) {
      if (v === null) delete spec[k];
      else spec[k] = v;
    }
    const rv = String(Number(node.metadata?.resourceVersion ?? '0') + 1);
    const next: V1Node = {
      ...node,
      metadata: { ...node.metadata, annotations: ann, resourceVersion: rv },
      spec,
    };
    this.nodes.set(name, next);
    return structuredClone(next);
  }
  /** Strategic merge of `status.conditions` by type (`$patch: delete` removes), resourceVersion-guarded. */
  async patchNodeStatus(name: string, patch: object): Promise<V1Node | 'conflict' | 'gone'> {
    this.calls.push(['patchNodeStatus', name, patch]);
    const node = this.nodes.get(name);
    if (!node) return 'gone';
    const p = patch as {
      metadata?: { resourceVersion?: string };
      status?: { conditions?: Array<V1NodeCondition & { $patch?: string }> };
    };
    if (
      p.metadata?.resourceVersion !== undefined &&
      p.metadata.resourceVersion !== node.metadata?.resourceVersion
    )
      return 'conflict';
    const conditions = [...(node.status?.conditions ?? [])];
    for (const c of p.status?.conditions ?? []) {
      const i = conditions.findIndex((x) => x.type === c.type);
      if (c.$patch === 'delete') {
        if (i >= 0) conditions.splice(i, 1);
      } else if (i >= 0) conditions[i] = { ...conditions[i]!, ...c };
      else conditions.push(c);
    }
    const rv = String(Number(node.metadata?.resourceVersion ?? '0') + 1);
    const next: V1Node = {
      ...node,
      metadata: { ...node.metadata, resourceVersion: rv },
      status: { ...node.status, conditions },
    };
    this.nodes.set(name, next);
    return structuredClone(next);
  }
  async listNodePods(node: string): Promise<V1Pod[]> {
    this.calls.push(['listNodePods', node]);
    return [...this.pods.values()].filter((p) => p.spec?.nodeName === node);
  }
  async listPdbs(namespace: string): Promise<V1PodDisruptionBudget[]> {
    this.calls.push(['listPdbs', namespace]);
    return this.pdbs.get(namespace) ?? [];
  }
  /** Pod controllers by `Kind namespace/name` (an Error is thrown). */
  readonly controllers = new Map<string, ControllerObject | Error>();
  async readController(ref: OwnerRef): Promise<ControllerObject | undefined> {
    this.calls.push(['readController', ref.kind, ref.namespace, ref.name]);
    const c = this.controllers.get(`${ref.kind} ${ref.namespace}/${ref.name}`);
    if (c instanceof Error) throw c;
    return c;
  }
  async readPod(namespace: string, name: string): Promise<V1Pod | undefined> {
    this.calls.push(['readPod', namespace, name]);
    return this.pods.get(`${namespace}/${name}`);
  }
  async evictPod(input: EvictInput, signal?: AbortSignal): Promise<RawAnswer | 'aborted'> {
    this.calls.push(['evictPod', input, signal !== undefined]);
    const next = this.evictions.shift();
    if (next === undefined) throw new Error('FakePort: no eviction answer queued');
    if (next instanceof Error) throw next;
    return next;
  }
  async deletePod(input: {
    namespace: string;
    name: string;
    uid: string;
    gracePeriodSeconds: number;
  }): Promise<'deleted' | 'gone'> {
    this.calls.push(['deletePod', input]);
    const next = this.deletions.shift();
    if (next === undefined) throw new Error('FakePort: no deletion answer queued');
    if (next instanceof Error) throw next;
    return next;
  }
  async readPlan(name: string): Promise<MaintenancePlan | undefined> {
    this.calls.push(['readPlan', name]);
    const p = this.plans.get(name);
    return p && structuredClone(p);
  }
  async replacePlanStatus(
    plan: MaintenancePlan,
    status: MaintenancePlanStatus,
  ): Promise<'written' | 'conflict' | 'gone'> {
    this.calls.push(['replacePlanStatus', plan.metadata.name, plan.metadata.resourceVersion, status]);
    const answer = this.statusAnswers.shift() ?? 'apply';
    if (answer instanceof Error) throw answer;
    if (answer !== 'apply') return answer;
    this.plans.set(plan.metadata.name, { ...plan, status });
    return 'written';
  }
  async recordEvent(event: PlanEvent): Promise<void> {
    this.calls.push(['recordEvent', event]);
    this.events.push(event);
  }
  /** The names of the calls made, in order. */
  names(): string[] {
    return this.calls.map((c) => c[0]);
  }
}

/** A KubeConfig pointing nowhere (only `observeNode` would use it; these tests never call it). */
function nowhere(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'none', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'none' }],
    contexts: [{ name: 'none', cluster: 'none', user: 'none' }],
    currentContext: 'none',
  });
  return kc;
}

function activities(port: FakePort): DrainActivities {
  return createActivities({ kubeConfig: nowhere(), logger: pino({ level: 'silent' }), port });
}

const NS = 'shop';
const UID = 'uid-1';
const POD: EvictInput = { namespace: NS, name: 'web-0', uid: UID };

function pod(uid: string, deleting = false): V1Pod {
  return {
    metadata: {
      namespace: NS,
      name: 'web-0',
      uid,
      ...(deleting ? { deletionTimestamp: new Date(0) } : {}),
    },
    spec: { nodeName: 'n1', containers: [] },
  };
}

/** A `metav1.Status` Failure answer. */
function status(code: number, s: { message?: string; reason?: string; details?: object }): RawAnswer {
  return {
    code,
    headers: { 'content-type': 'application/json' },
    text: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', ...s, code }),
  };
}

const PDB_CAUSE = {
  causes: [
    {
      reason: 'DisruptionBudget',
      message: 'The disruption budget web needs 2 healthy pods and has 2 currently',
    },
  ],
};
const CONFLICT_MESSAGE =
  'Operation cannot be fulfilled on pods "web-0": the object has been modified; please apply your changes to the latest version and try again';

interface EvictRow {
  name: string;
  answer: RawAnswer | 'aborted' | Error;
  /** The pod a 409 finds when it reads (absent: none). */
  podAfter?: V1Pod;
  expect: EvictResult | { throws: (err: unknown) => boolean };
  /** Whether the activity reads the pod after the answer. */
  reads?: boolean;
}

const EVICT_ROWS: EvictRow[] = [
  {
    name: '201 → Evicted',
    answer: {
      code: 201,
      headers: {},
      text: JSON.stringify({ kind: 'Status', status: 'Success', code: 201 }),
    },
    expect: { outcome: 'Evicted' },
  },
  {
    name: '404 → Gone, no read',
    answer: status(404, { reason: 'NotFound', message: 'pods "web-0" not found' }),
    expect: { outcome: 'Gone' },
  },
  {
    name: '409, the pod is gone when read → Gone',
    answer: status(409, { reason: 'Conflict', message: CONFLICT_MESSAGE }),
    expect: { outcome: 'Gone' },
    reads: true,
  },
  {
    name: '409, the name now belongs to another UID → Gone',
    answer: status(409, { reason: 'Conflict', message: CONFLICT_MESSAGE }),
    podAfter: pod('uid-2'),
    expect: { outcome: 'Gone' },
    reads: true,
  },
  {
    name: '409, the pod with that UID still exists → Retry/Conflict with the server message',
    answer: status(409, { reason: 'Conflict', message: CONFLICT_MESSAGE }),
    podAfter: pod(UID),
    expect: { outcome: 'Retry', code: 409, reason: 'Conflict', message: CONFLICT_MESSAGE },
    reads: true,
  },
  {
    name: '409 with a plain-text body, pod still there → Retry/Conflict with the text',
    answer: { code: 409, headers: {}, text: 'conflict\n' },
    podAfter: pod(UID, true),
    expect: { outcome: 'Retry', code: 409, reason: 'Conflict', message: 'conflict' },
    reads: true,
  },
  {
    name: '429 DisruptionBudget without Retry-After → TooManyRequests, the PDB, no retryAfterSeconds',
    answer: status(429, {
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: PDB_CAUSE,
    }),
    expect: {
      outcome: 'TooManyRequests',
      cause: 'DisruptionBudget',
      pdb: `${NS}/web`,
      message:
        "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web needs 2 healthy pods and has 2 currently",
    },
  },
  {
    name: '429 DisruptionBudget with Retry-After 10 → retryAfterSeconds 10',
    answer: {
      ...status(429, { reason: 'TooManyRequests', message: 'budget', details: PDB_CAUSE }),
      headers: { 'Retry-After': '10' },
    },
    expect: {
      outcome: 'TooManyRequests',
      cause: 'DisruptionBudget',
      retryAfterSeconds: 10,
      pdb: `${NS}/web`,
      message: 'budget The disruption budget web needs 2 healthy pods and has 2 currently',
    },
  },
  {
    name: 'plain-text 429 of API Priority and Fairness, Retry-After 4 → Throttled',
    answer: {
      code: 429,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '4' },
      text: 'Too many requests, please try again later.\n',
    },
    expect: {
      outcome: 'TooManyRequests',
      cause: 'Throttled',
      retryAfterSeconds: 4,
      message: 'Too many requests, please try again later.',
    },
  },
  {
    name: 'two-PDB 500 → Failed/MultiplePodDisruptionBudgets, not thrown',
    answer: status(500, {
      message:
        'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    }),
    expect: {
      outcome: 'Failed',
      code: 500,
      reason: 'MultiplePodDisruptionBudgets',
      message:
        'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    },
  },
  {
    name: '403 NamespaceTerminating → Retry/NamespaceTerminating',
    answer: status(403, {
      reason: 'Forbidden',
      message: 'unable to create new content in namespace shop because it is being terminated',
      details: {
        name: NS,
        kind: 'namespaces',
        causes: [{ reason: 'NamespaceTerminating', field: 'metadata.namespace' }],
      },
    }),
    expect: {
      outcome: 'Retry',
      code: 403,
      reason: 'NamespaceTerminating',
      message: 'unable to create new content in namespace shop because it is being terminated',
    },
  },
  {
    name: '503 → throws TransientKubernetesError 503',
    answer: status(503, { reason: 'ServiceUnavailable', message: 'etcd is down' }),
    expect: { throws: (e) => e instanceof TransientKubernetesError && e.code === 503 },
  },
  {
    name: 'no answer (transport error, classified by the port) → the port’s TransientKubernetesError',
    answer: new TransientKubernetesError('evict pod shop/web-0: TypeError: fetch failed'),
    expect: {
      throws: (e) =>
        e instanceof TransientKubernetesError &&
        e.message === 'evict pod shop/web-0: TypeError: fetch failed',
    },
  },
  {
    name: 'request aborted before an answer → CancelledFailure',
    answer: 'aborted',
    expect: { throws: (e) => e instanceof CancelledFailure },
  },
];

describe('evictPod over a fake port', () => {
  for (const row of EVICT_ROWS) {
    it(row.name, async () => {
      const port = new FakePort();
      port.evictions = [row.answer];
      if (row.podAfter) port.pods.set(`${NS}/web-0`, row.podAfter);
      const run = activities(port).evictPod(POD);
      if ('throws' in row.expect) await assert.rejects(run, row.expect.throws);
      else assert.deepEqual(await run, row.expect);
      // One eviction of exactly this pod; outside an activity no abort signal is passed.
      assert.deepEqual(port.calls[0], ['evictPod', POD, false]);
      assert.deepEqual(port.names().slice(1), row.reads ? ['readPod'] : []);
    });
  }

  it('passes gracePeriodSeconds through to the port', async () => {
    const port = new FakePort();
    port.evictions = [{ code: 201, headers: {}, text: '' }];
    const input = { ...POD, gracePeriodSeconds: 0 };
    assert.deepEqual(await activities(port).evictPod(input), { outcome: 'Evicted' });
    assert.deepEqual(port.calls, [['evictPod', input, false]]);
  });
});

const PLAN = { name: 'p', uid: 'plan-uid' };

function node(name: string, annotations: Record<string, string> = {}, unschedulable?: boolean): V1Node {
  return {
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: '7',
      annotations,
      labels: { pool: name.startsWith('a') ? 'a' : 'b' },
    },
    spec: unschedulable === undefined ? {} : { unschedulable },
  };
}

const CLAIM = {
  [NODE_CLAIM_ANNOTATION]: 'p',
  [NODE_CLAIM_UID_ANNOTATION]: 'plan-uid',
  [NODE_WAS_UNSCHEDULABLE_ANNOTATION]: 'false',
};

describe('node activities over a fake port', () => {
  it('resolveNodes: names in nodeNames order, then selector-only matches by name; missing names reported', async () => {
    const port = new FakePort();
    for (const n of ['b1', 'a3', 'a2', 'a1']) port.nodes.set(n, node(n));
    const r = await activities(port).resolveNodes({
      nodeNames: ['b1', 'zz', 'a2'],
      nodeSelector: { matchLabels: { pool: 'a' } },
    });
    assert.deepEqual(r, { nodes: ['b1', 'a2', 'a1', 'a3'], missing: ['zz'] });
  });

  it('resolveNodes: nodeNames alone keep their order (not sorted by name)', async () => {
    const port = new FakePort();
    for (const n of ['n1', 'n2', 'n3']) port.nodes.set(n, node(n));
    const r = await activities(port).resolveNodes({ nodeNames: ['n3', 'n1', 'n2'] });
    assert.deepEqual(r, { nodes: ['n3', 'n1', 'n2'], missing: [] });
  });

  it("cordonNode: first claim writes the four annotations (the node's own uid too) and the cordon, guarded by resourceVersion and uid", async () => {
    const port = new FakePort();
    port.nodes.set('n1', node('n1'));
    assert.deepEqual(await activities(port).cordonNode({ plan: PLAN, node: 'n1' }), {
      outcome: 'Cordoned',
      wasUnschedulable: false,
      nodeUid: 'uid-n1',
    });
    assert.deepEqual(port.calls[1], [
      'patchNode',
      'n1',
      {
        metadata: {
          uid: 'uid-n1',
          resourceVersion: '7',
          annotations: { ...CLAIM, [NODE_CLAIM_NODE_UID_ANNOTATION]: 'uid-n1' },
        },
        spec: { unschedulable: true },
      },
    ]);
  });

  it('cordonNode: the node claimed before (nodeUid) was deleted and created again → NodeReplaced, nothing written', async () => {
    const port = new FakePort();
    port.nodes.set('n1', node('n1'));
    assert.deepEqual(await activities(port).cordonNode({ plan: PLAN, node: 'n1', nodeUid: 'old' }), {
      outcome: 'NodeReplaced',
      nodeUid: 'uid-n1',
    });
    assert.deepEqual(await activities(port).cordonNode({ plan: PLAN, node: 'n1', nodeUid: 'uid-n1' }), {
      outcome: 'Cordoned',
      wasUnschedulable: false,
      nodeUid: 'uid-n1',
    });
    assert.deepEqual(port.names(), ['readNode', 'readNode', 'patchNode']);
  });

  it('cordonNode: a claim copied onto a Node created again (its node uid is not this one) is no claim: claimed afresh', async () => {
    const port = new FakePort();
    const copied = { ...CLAIM, [NODE_CLAIM_ANNOTATION]: 'q', [NODE_CLAIM_NODE_UID_ANNOTATION]: 'old' };
    port.nodes.set('n1', node('n1', copied, true));
    assert.deepEqual(await activities(port).cordonNode({ plan: PLAN, node: 'n1' }), {
      outcome: 'Cordoned',
      wasUnschedulable: true,
      nodeUid: 'uid-n1',
    });
    assert.equal(port.nodes.get('n1')?.metadata?.annotations?.[NODE_CLAIM_ANNOTATION], 'p');
    assert.equal(port.nodes.get('n1')?.metadata?.annotations?.[NODE_CLAIM_NODE_UID_ANNOTATION], 'uid-n1');
  });

  it('cordonNode: a 409 re-reads and retries; a node cordoned before is recorded as such', async () => {
    const port = new FakePort();
    port.nodes.set('n1', node('n1', {}, true));
    port.patchAnswers = ['conflict', 'conflict'];
    const r = await activities(port).cordonNode({ plan: PLAN, node: 'n1' });
    assert.deepEqual(r, { outcome: 'Cordoned', wasUnschedulable: true, nodeUid: 'uid-n1' });
    assert.deepEqual(port.names(), [
      'readNode',
      'patchNode',
      'readNode',
      'patchNode',
      'readNode',
      'patchNode',
    ]);
    assert.equal(port.nodes.get('n1')?.metadata?.annotations?.[NODE_WAS_UNSCHEDULABLE_ANNOTATION], 'true');
  });

  it(`cordonNode: ${CONFLICT_ATTEMPTS} conflicts in a row → TransientKubernetesError 409`, async () => {
    const port = new FakePort();
    port.nodes.set('n1', node('n1'));
    port.patchAnswers = Array.from({ length: CONFLICT_ATTEMPTS }, () => 'conflict' as const);
    await assert.rejects(
      activities(port).cordonNode({ plan: PLAN, node: 'n1' }),
      (e: unknown) =>
        e instanceof TransientKubernetesError &&
        e.code === 409 &&
        e.message === `cordon node n1: ${CONFLICT_ATTEMPTS} conflicting updates in a row`,
    );
    assert.equal(port.names().filter((n) => n === 'patchNode').length, CONFLICT_ATTEMPTS);
  });

  it('cordonNode: held by another plan (or the same name with another uid) changes nothing', async () => {
    const claims: Array<Record<string, string>> = [
      { [NODE_CLAIM_ANNOTATION]: 'q' },
      { [NODE_CLAIM_ANNOTATION]: 'p', [NODE_CLAIM_UID_ANNOTATION]: 'old-uid' },
    ];
    for (const ann of claims) {
      const port = new FakePort();
      port.nodes.set('n1', node('n1', ann));
      assert.deepEqual(await activities(port).cordonNode({ plan: PLAN, node: 'n1' }), {
        outcome: 'HeldByOtherPlan',
        heldBy: ann[NODE_CLAIM_ANNOTATION],
      });
      assert.deepEqual(port.names(), ['readNode']);
    }
  });

  it('cordonNode: already claimed and still cordoned → no write; missing node → NodeNotFound', async () => {
    const port = new FakePort();
    port.nodes.set(
      'n1',
      node(
        'n1',
        { ...CLAIM, [NODE_WAS_UNSCHEDULABLE_ANNOTATION]: 'true', [NODE_CLAIM_NODE_UID_ANNOTATION]: 'uid-n1' },
        true,
      ),
    );
    const a = activities(port);
    assert.deepEqual(await a.cordonNode({ plan: PLAN, node: 'n1' }), {
      outcome: 'Cordoned',
      wasUnschedulable: true,
      nodeUid: 'uid-n1',
    });
    assert.deepEqual(await a.cordonNode({ plan: PLAN, node: 'gone' }), { outcome: 'NodeNotFound' });
    assert.deepEqual(port.names(), ['readNode', 'readNode']);
  });

  it('releaseNode: removes the claim and the cordon it made; leaves a node cordoned before cordoned', async () => {
    const port = new FakePort();
    port.nodes.set('n1', node('n1', CLAIM, true));
    port.nodes.set('n2', node('n2', { ...CLAIM, [NODE_WAS_UNSCHEDULABLE_ANNOTATION]: 'true' }, true));
    const a = activities(port);
    assert.deepEqual(await a.releaseNode({ plan: PLAN, node: 'n1', uncordon: true }), { uncordoned: true });
    assert.deepEqual(await a.releaseNode({ plan: PLAN, node: 'n2', uncordon: true }), {
      uncordoned: false,
      left: 'wasUnschedulable',
    });
    assert.deepEqual(port.nodes.get('n1')?.metadata?.annotations, {});
    assert.equal(port.nodes.get('n1')?.spec?.unschedulable, undefined);
    assert.deepEqual(port.nodes.get('n2')?.metadata?.annotations, {});
    assert.equal(port.nodes.get('n2')?.spec?.unschedulable, true);
  });

  it('releaseNode: a Node created again under the name (another uid than nodeUid, or a copied claim) is left alone: replaced', async () => {
    const port = new FakePort();
    port.nodes.set('n1', node('n1', CLAIM, true));
    port.nodes.set('n2', node('n2', { ...CLAIM, [NODE_CLAIM_NODE_UID_ANNOTATION]: 'old' }, true));
    const a = activities(port);
    const replaced = { uncordoned: false, left: 'replaced' };
    assert.deepEqual(
      await a.releaseNode({ plan: PLAN, node: 'n1', uncordon: true, nodeUid: 'old' }),
      replaced,
    );
    assert.deepEqual(await a.releaseNode({ plan: PLAN, node: 'n2', uncordon: true }), replaced);
    assert.deepEqual(port.names(), ['readNode', 'readNode']);
    assert.equal(port.nodes.get('n1')?.spec?.unschedulable, true);
    assert.equal(port.nodes.get('n2')?.spec?.unschedulable, true);
    // The node it claimed, by uid: handed back, the patch guarded by that uid.
    assert.deepEqual(await a.releaseNode({ plan: PLAN, node: 'n1', uncordon: true, nodeUid: 'uid-n1' }), {
      uncordoned: true,
    });
    assert.equal((port.calls.at(-1)![2] as { metadata: { uid: string } }).metadata.uid, 'uid-n1');
  });

  it('releaseNode: a 409 re-reads and retries', async () => {
    const port = new FakePort();
    port.nodes.set('n1', node('n1', CLAIM, true));
    port.patchAnswers = ['conflict'];
    assert.deepEqual(await activities(port).releaseNode({ plan: PLAN, node: 'n1', uncordon: true }), {
      uncordoned: true,
    });
    assert.deepEqual(port.names(), ['readNode', 'patchNode', 'readNode', 'patchNode']);
    assert.deepEqual(port.nodes.get('n1')?.metadata?.annotations, {});
  });

  it("releaseNode: removes the plan's node lifecycle conditions, keeps every other condition; also when the claim was gone already", async () => {
    const port = new FakePort();
    const mine = wantedNodeConditions(PLAN.name, 'Running', { phase: 'Draining' });
    const other: V1NodeCondition[] = [
      { type: 'Ready', status: 'True', reason: 'KubeletReady' },
      // Another writer's MaintenancePlanned, and another plan's Drained: not this plan's.
      { type: 'MaintenancePlanned', status: 'True', reason: 'AdminRequested', message: 'rack 7' },
    ];
    const withConds = (n: V1Node, conditions: V1NodeCondition[]): V1Node => ({
      ...n,
      status: { conditions },
    });
    port.nodes.set('n1', withConds(node('n1', CLAIM, true), [other[0]!, ...mine]));
    port.nodes.set('n2', withConds(node('n2', {}, false), [...other, mine[2]!]));
    const a = activities(port);
    assert.deepEqual(await a.releaseNode({ plan: PLAN, node: 'n1', uncordon: true }), { uncordoned: true });
    assert.deepEqual(port.nodes.get('n1')?.status?.conditions, [other[0]]);
    assert.deepEqual(port.names(), ['readNode', 'patchNode', 'patchNodeStatus']);
    // n2: handed back before (no claim), a Drained of this plan left over: removed, the rest kept.
    assert.deepEqual(await a.releaseNode({ plan: PLAN, node: 'n2', uncordon: true }), {
      uncordoned: false,
      left: 'notClaimed',
    });
    assert.deepEqual(port.nodes.get('n2')?.status?.conditions, other);
    // Nothing of this plan's left: no write.
    const before = port.calls.length;
    await a.releaseNode({ plan: PLAN, node: 'n2', uncordon: true });
    assert.deepEqual(port.names().slice(before), ['readNode']);
  });

  it('releaseNode: a node claimed by another plan is left alone', async () => {
    const port = new FakePort();
    port.nodes.set('n1', node('n1', { [NODE_CLAIM_ANNOTATION]: 'q' }, true));
    assert.deepEqual(await activities(port).releaseNode({ plan: PLAN, node: 'n1', uncordon: true }), {
      uncordoned: false,
      left: 'notClaimed',
    });
    assert.deepEqual(port.names(), ['readNode']);
  });

  it('releaseNode: says why it did not uncordon (someone uncordoned it, uncordon false, node gone)', async () => {
    const port = new FakePort();
    port.nodes.set('n1', node('n1', CLAIM, false));
    port.nodes.set('n2', node('n2', CLAIM, true));
    const a = activities(port);
    assert.deepEqual(await a.releaseNode({ plan: PLAN, node: 'n1', uncordon: true }), {
      uncordoned: false,
      left: 'alreadySchedulable',
    });
    assert.deepEqual(await a.releaseNode({ plan: PLAN, node: 'n2', uncordon: false }), {
      uncordoned: false,
      left: 'notAsked',
    });
    assert.deepEqual(await a.releaseNode({ plan: PLAN, node: 'n3', uncordon: true }), {
      uncordoned: false,
      left: 'gone',
    });
  });
});

describe('plan activities over a fake port', () => {
  const stored = (status: MaintenancePlanStatus | undefined, uid = 'plan-uid'): MaintenancePlan =>
    ({
      apiVersion: 'maintenance.drainflow.dev/v1alpha1',
      kind: 'MaintenancePlan',
      metadata: { name: 'p', uid, resourceVersion: '3' },
      spec: {},
      ...(status ? { status } : {}),
    }) as unknown as MaintenancePlan;

  it('publishStatus: writes a new status, skips an equal one', async () => {
    const port = new FakePort();
    port.plans.set('p', stored({ phase: 'Pending' } as MaintenancePlanStatus));
    const a = activities(port);
    const next = { phase: 'Running' } as MaintenancePlanStatus;
    assert.deepEqual(await a.publishStatus({ plan: PLAN, status: next }), { written: true, exists: true });
    assert.deepEqual(port.calls[1], ['replacePlanStatus', 'p', '3', next]);
    assert.deepEqual(await a.publishStatus({ plan: PLAN, status: next }), { written: false, exists: true });
    assert.deepEqual(port.names(), ['readPlan', 'replacePlanStatus', 'readPlan']);
  });

  it('writePlanStatus: renders the status from the state, keeps lastTransitionTime from the stored one, skips an equal one', async () => {
    const port = new FakePort();
    port.plans.set('p', stored(undefined));
    const a = activities(port);
    const T0 = Date.parse('2026-12-01T00:00:00Z');
    const state = {
      phase: 'Running' as const,
      reason: 'Draining',
      message: 'draining 1 of 1 node(s)',
      observedGeneration: 1,
      nodes: [],
      conditions: [],
    };
    assert.deepEqual(await a.writePlanStatus({ plan: PLAN, state: { state, nowMs: T0 } }), {
      written: true,
      exists: true,
    });
    const first = port.plans.get('p')!.status!;
    assert.equal(first.message, 'draining 1 of 1 node(s)');
    const progressing = () => port.plans.get('p')!.status!.conditions!.find((c) => c.type === 'Progressing')!;
    assert.equal(progressing().lastTransitionTime, new Date(T0).toISOString());
    // The same state an hour later: nothing to write (the stored conditions keep their time).
    assert.deepEqual(await a.writePlanStatus({ plan: PLAN, state: { state, nowMs: T0 + 3600_000 } }), {
      written: false,
      exists: true,
    });
    // Paused: Progressing holds (True) and keeps its time; the message changes.
    const paused = {
      ...state,
      phase: 'Paused' as const,
      reason: 'PausedByUser',
      message: 'no new evictions until resumed',
    };
    assert.deepEqual(
      await a.writePlanStatus({ plan: PLAN, state: { state: paused, nowMs: T0 + 7200_000 } }),
      {
        written: true,
        exists: true,
      },
    );
    assert.equal(progressing().lastTransitionTime, new Date(T0).toISOString());
    assert.equal(progressing().reason, 'Paused');
  });

  it('publishStatus: a 409 re-reads and writes again; a plan gone or re-created is not an error', async () => {
    const port = new FakePort();
    port.plans.set('p', stored(undefined));
    port.statusAnswers = ['conflict'];
    const a = activities(port);
    const next = { phase: 'Running' } as MaintenancePlanStatus;
    assert.deepEqual(await a.publishStatus({ plan: PLAN, status: next }), { written: true, exists: true });
    assert.deepEqual(port.names(), ['readPlan', 'replacePlanStatus', 'readPlan', 'replacePlanStatus']);
    port.statusAnswers = ['gone'];
    assert.deepEqual(
      await a.publishStatus({ plan: PLAN, status: { phase: 'Drained' } as MaintenancePlanStatus }),
      {
        written: false,
        exists: false,
      },
    );
    port.plans.set('p', stored(undefined, 'other-uid'));
    assert.deepEqual(await a.publishStatus({ plan: PLAN, status: next }), { written: false, exists: false });
    port.plans.delete('p');
    assert.deepEqual(await a.publishStatus({ plan: PLAN, status: next }), { written: false, exists: false });
  });

  it('publishStatus: a refusal of the port is thrown as is (e.g. 422 for a status the schema refuses)', async () => {
    const port = new FakePort();
    port.plans.set('p', stored(undefined));
    const refusal = new PermanentKubernetesError(
      'update maintenanceplans/p/status: HTTP 422 Invalid',
      422,
      'Invalid',
    );
    port.statusAnswers = [refusal];
    await assert.rejects(
      activities(port).publishStatus({ plan: PLAN, status: { phase: 'Running' } as MaintenancePlanStatus }),
      (e: unknown) => e === refusal && refusal.nonRetryable && refusal.type === 'KubernetesApiError',
    );
  });

  it('recordEvent: hands the Event to the port', async () => {
    const port = new FakePort();
    const event = { plan: PLAN, type: 'Warning' as const, reason: 'NodeBlocked', message: 'm' };
    await activities(port).recordEvent(event);
    assert.deepEqual(port.events, [event]);
  });
});

describe('deletePod over a fake port (onDeadline DeletePods)', () => {
  const input = { namespace: NS, name: 'web-0', uid: UID, gracePeriodSeconds: 7 };
  const rows: { what: string; answer: 'deleted' | 'gone' | Error; result?: unknown; throws?: RegExp }[] = [
    { what: 'deleted: the pod is terminating', answer: 'deleted', result: { outcome: 'Deleted' } },
    { what: 'gone (404, or 409: another pod holds the name)', answer: 'gone', result: { outcome: 'Gone' } },
    {
      what: '403 without RBAC: Failed with the code and message, a blocker',
      answer: new PermanentKubernetesError('delete pod shop/web-0: HTTP 403 Forbidden: no', 403, 'Forbidden'),
      result: { outcome: 'Failed', code: 403, message: 'delete pod shop/web-0: HTTP 403 Forbidden: no' },
    },
    {
      what: 'a transient error is thrown for the retry policy',
      answer: new TransientKubernetesError('delete pod shop/web-0: HTTP 503', 503),
      throws: /HTTP 503/,
    },
  ];
  for (const r of rows) {
    it(r.what, async () => {
      const port = new FakePort();
      port.deletions.push(r.answer);
      const run = activities(port).deletePod(input);
      if (r.throws) await assert.rejects(run, r.throws);
      else assert.deepEqual(await run, r.result);
      assert.deepEqual(port.calls, [['deletePod', input]]);
    });
  }
});

describe("preflightNode over a fake port: the pods' controllers", () => {
  const node = 'n1';
  const owned = (name: string, kind: string, owner: string, uid: string): V1Pod => ({
    metadata: {
      namespace: NS,
      name,
      uid: `${name}-uid`,
      ownerReferences: [{ apiVersion: 'apps/v1', kind, name: owner, uid, controller: true }],
    },
    spec: { nodeName: node, containers: [] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const rs = (deployment: string, nodeName?: string): ControllerObject => ({
    metadata: {
      ownerReferences: [{ kind: 'Deployment', name: deployment, controller: true }],
    },
    spec: { template: { spec: nodeName ? { nodeName } : {} } },
  });

  it('reads each controller once per cache, names the Deployment, counts a failed read, not a 404', async () => {
    const port = new FakePort();
    port.nodes.set(node, { metadata: { name: node } });
    for (const p of [
      owned('pinned-a', 'ReplicaSet', 'pinned-1', 'rs1'),
      owned('pinned-b', 'ReplicaSet', 'pinned-1', 'rs1'),
      owned('free-a', 'ReplicaSet', 'free-1', 'rs2'),
      owned('db-0', 'StatefulSet', 'db', 'ss1'),
      owned('gone-a', 'ReplicaSet', 'gone-1', 'rs3'),
      owned('custom-a', 'Widget', 'w', 'cr1'),
    ])
      port.pods.set(`${NS}/${p.metadata!.name}`, p);
    port.controllers.set(`ReplicaSet ${NS}/pinned-1`, rs('pinned', node));
    port.controllers.set(`ReplicaSet ${NS}/free-1`, rs('free'));
    port.controllers.set(
      `StatefulSet ${NS}/db`,
      new PermanentKubernetesError('get StatefulSet: HTTP 403 Forbidden', 403, 'Forbidden'),
    );
    const cache = new Map();
    const acts = createPreflightActivities(port, pino({ level: 'silent' }), cache);
    const selection = parseSpec({ nodeNames: [node] }).podSelection;
    const run = () => acts.preflightNode({ node, selection, dryRun: false });
    const { report } = await run();
    const reads = () =>
      port.calls
        .filter((c) => c[0] === 'readController')
        .map(([, kind, ns, name]) => `${String(kind)} ${String(ns)}/${String(name)}`);
    assert.deepEqual(reads().sort(), [
      `ReplicaSet ${NS}/free-1`,
      `ReplicaSet ${NS}/gone-1`,
      `ReplicaSet ${NS}/pinned-1`,
      `StatefulSet ${NS}/db`,
    ]);
    assert.equal(report.podsReturning, 2);
    assert.deepEqual(
      report.returning?.map((r) => [r.workload, r.reason, r.pods]),
      [[`Deployment ${NS}/pinned`, 'NodeNameInTemplate', 2]],
    );
    assert.deepEqual(
      report.evict?.filter((e) => e.returns).map((e) => [e.pod, e.returns]),
      [
        [`${NS}/pinned-a`, 'NodeNameInTemplate'],
        [`${NS}/pinned-b`, 'NodeNameInTemplate'],
      ],
    );
    assert.equal(report.ownersUnread, 1, 'the 403 counted, the 404 not');
    // A second node's examination with the same cache reads nothing again.
    await run();
    assert.equal(reads().length, 4);
    // Without a cache (a worker's activity), each call reads its own.
    const fresh = createPreflightActivities(port, pino({ level: 'silent' }));
    await fresh.preflightNode({ node, selection, dryRun: false });
    assert.equal(reads().length, 8);
  });
});
