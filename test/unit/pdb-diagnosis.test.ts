import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DisruptionBlockKind } from '../../src/api/reasons.js';
import {
  diagnosePdb,
  diagnosisDueMs,
  diagnosisStep,
  scaled,
  type DiagnosisMemo,
  type DiagnosisInput,
  type DiagnosisPod,
  type PdbDiagnosis,
} from '../../src/drain/pdb-diagnosis.js';
import { diagnosisMessage } from '../../src/drain/pdb-diagnosis-words.js';
import { answerFingerprint, observationPart } from '../../src/activities/node-pods.js';
import type { PdbObservation } from '../../src/contract/observation.js';

const NODE = 'n1';
const ready = (name: string, node = 'n2'): DiagnosisPod => ({
  key: `shop/${name}`,
  node,
  phase: 'Running',
  ready: true,
});
const notReady = (name: string, node = 'n2'): DiagnosisPod => ({
  key: `shop/${name}`,
  node,
  phase: 'Running',
  ready: false,
});
const pending = (name: string, message: string): DiagnosisPod => ({
  key: `shop/${name}`,
  phase: 'Pending',
  ready: false,
  unschedulable: { reason: 'Unschedulable', message },
});
const deployment = (replicas?: number) => ({
  ref: 'Deployment shop/web',
  ...(replicas !== undefined ? { replicas } : {}),
});

/** An input: the PDB's spec and status, the pods (one on NODE, `shop/here`), the owner. */
function input(
  spec: DiagnosisInput['pdb']['spec'],
  status: DiagnosisInput['pdb']['status'],
  pods: DiagnosisPod[],
  more: Partial<DiagnosisInput> = {},
): DiagnosisInput {
  return {
    pdb: { key: 'shop/web', spec, status },
    node: NODE,
    pod: 'shop/here',
    pods: [ready('here', NODE), ...pods],
    ...more,
  };
}

const st = (allowed: number, current: number, desired: number, expected: number) => ({
  disruptionsAllowed: allowed,
  currentHealthy: current,
  desiredHealthy: desired,
  expectedPods: expected,
});

const rows: {
  name: string;
  in: DiagnosisInput;
  want: Partial<PdbDiagnosis> | undefined;
}[] = [
  {
    name: 'allows a disruption: no diagnosis',
    in: input({ minAvailable: 1 }, st(1, 2, 1, 2), [ready('b')], { owner: deployment(2) }),
    want: undefined,
  },
  {
    name: 'Never: a single replica behind minAvailable 1',
    in: input({ minAvailable: 1 }, st(0, 1, 1, 1), [], { owner: deployment(1) }),
    want: { kind: DisruptionBlockKind.Never, cause: 'SingleReplica', owner: 'Deployment shop/web' },
  },
  {
    name: 'Never: maxUnavailable 0',
    in: input({ maxUnavailable: 0 }, st(0, 3, 3, 3), [ready('b'), ready('c')], { owner: deployment(3) }),
    want: { kind: DisruptionBlockKind.Never, cause: 'MaxUnavailableZero', expected: 3, desired: 3 },
  },
  {
    name: 'Never: maxUnavailable "0%"',
    in: input({ maxUnavailable: '0%' }, st(0, 3, 3, 3), [ready('b'), ready('c')]),
    want: { kind: DisruptionBlockKind.Never, cause: 'MaxUnavailableZero' },
  },
  {
    name: 'Never: minAvailable 100% (not maxUnavailable 0: another cause)',
    in: input({ minAvailable: '100%' }, st(0, 3, 3, 3), [ready('b'), ready('c')], { owner: deployment(3) }),
    want: { kind: DisruptionBlockKind.Never, cause: 'MinAvailableAll', desired: 3 },
  },
  {
    name: 'Never: minAvailable 3 of 3 replicas',
    in: input({ minAvailable: 3 }, st(0, 3, 3, 3), [ready('b'), ready('c')], { owner: deployment(3) }),
    want: { kind: DisruptionBlockKind.Never, cause: 'MinAvailableAll' },
  },
  {
    name: 'Never: minAvailable at or above the replicas even while a pod elsewhere is not Ready',
    in: input({ minAvailable: 2 }, st(0, 1, 2, 2), [notReady('b')], { owner: deployment(2) }),
    want: { kind: DisruptionBlockKind.Never, cause: 'MinAvailableAll' },
  },
  {
    name: 'Never: no owner, a percent PDB (the controller has no scale, expectedPods 0)',
    in: input({ maxUnavailable: '50%' }, st(0, 0, 0, 0), []),
    want: { kind: DisruptionBlockKind.Never, cause: 'NoScale', owner: undefined },
  },
  {
    name: 'percent minAvailable 50% of 4 rounds up to 2: Transient, 1 more Ready',
    in: input({ minAvailable: '50%' }, st(0, 2, 2, 4), [ready('b'), notReady('c'), notReady('d')], {
      owner: deployment(4),
    }),
    want: { kind: DisruptionBlockKind.Transient, waitingFor: 1, desired: 2 },
  },
  {
    name: 'percent maxUnavailable 25% of 3 rounds up to 1 (desired 2): not Never',
    in: input({ maxUnavailable: '25%' }, st(0, 2, 2, 3), [ready('b'), notReady('c', NODE)], {
      owner: deployment(3),
    }),
    want: { kind: DisruptionBlockKind.Transient, desired: 2, waitingFor: 1 },
  },
  {
    name: 'Transient without an owner: counts from the PDB status (integer minAvailable)',
    in: input({ minAvailable: 2 }, st(0, 2, 2, 3), [ready('b'), notReady('c')]),
    want: { kind: DisruptionBlockKind.Transient, owner: undefined, waitingFor: 1 },
  },
  {
    name: 'UnhealthyElsewhere: pods on other nodes not Ready, named (3) with their state',
    in: input(
      { minAvailable: 4 },
      st(0, 2, 4, 6),
      [ready('b'), notReady('c', 'n3'), notReady('d', 'n4'), notReady('e', 'n5'), notReady('f', 'n6')],
      { owner: deployment(6) },
    ),
    want: {
      kind: DisruptionBlockKind.UnhealthyElsewhere,
      pods: [
        { pod: 'shop/c', node: 'n3', state: 'NotReady' },
        { pod: 'shop/d', node: 'n4', state: 'NotReady' },
        { pod: 'shop/e', node: 'n5', state: 'NotReady' },
      ],
      morePods: 1,
    },
  },
  {
    name: 'UnhealthyElsewhere under unhealthyPodEvictionPolicy AlwaysAllow (the pod here is Ready)',
    in: input(
      { minAvailable: 2, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
      st(0, 1, 2, 3),
      [notReady('b')],
      {
        owner: deployment(3),
      },
    ),
    want: {
      kind: DisruptionBlockKind.UnhealthyElsewhere,
      pods: [{ pod: 'shop/b', node: 'n2', state: 'NotReady' }],
    },
  },
  {
    name: 'AlwaysAllow: the pod here not Ready goes without the budget: no diagnosis',
    in: {
      ...input({ minAvailable: 2, unhealthyPodEvictionPolicy: 'AlwaysAllow' }, st(0, 1, 2, 3), [ready('b')]),
      pods: [notReady('here', NODE), ready('b'), notReady('c')],
    },
    want: undefined,
  },
  {
    name: 'IfHealthyBudget (default): the pod here not Ready with the budget short is blocked',
    in: {
      ...input({ minAvailable: 2 }, st(0, 1, 2, 3), []),
      pods: [notReady('here', NODE), ready('b'), notReady('c')],
      owner: deployment(3),
    },
    want: {
      kind: DisruptionBlockKind.UnhealthyElsewhere,
      pods: [{ pod: 'shop/c', node: 'n2', state: 'NotReady' }],
    },
  },
  {
    name: "ReplacementsUnschedulable: the owner's new pod is Pending; the scheduler is quoted",
    in: input(
      { minAvailable: 2 },
      st(0, 2, 2, 3),
      [ready('b'), pending('new', '0/12 nodes are available: 12 Insufficient cpu.')],
      { owner: deployment(3) },
    ),
    want: {
      kind: DisruptionBlockKind.ReplacementsUnschedulable,
      scheduler: '0/12 nodes are available: 12 Insufficient cpu.',
      pods: [{ pod: 'shop/new', state: 'Pending' }],
    },
  },
  {
    name: 'SpentByOthers: evictions not of this plan hold the budget',
    in: input(
      { maxUnavailable: 1 },
      st(0, 2, 2, 3),
      [ready('b'), { ...ready('c', 'n9'), ready: false, terminating: true }],
      { owner: deployment(3), spent: { byPlan: 0, byOthers: 1 } },
    ),
    want: { kind: DisruptionBlockKind.SpentByOthers, spent: 1 },
  },
  {
    name: 'Transient: this plan spent it; the replacement is starting',
    in: input(
      { maxUnavailable: 1 },
      st(0, 2, 2, 3),
      [ready('b'), { key: 'shop/new', node: 'n2', phase: 'Running', ready: false }],
      { owner: deployment(3), spent: { byPlan: 1, byOthers: 0 } },
    ),
    want: {
      kind: DisruptionBlockKind.Transient,
      waitingFor: 1,
      pods: [{ pod: 'shop/new', node: 'n2', state: 'NotReady' }],
    },
  },
];

describe('diagnosePdb', () => {
  for (const row of rows)
    it(row.name, () => {
      const got = diagnosePdb(row.in);
      if (row.want === undefined) return assert.equal(got, undefined);
      assert.ok(got, 'a diagnosis');
      for (const [k, v] of Object.entries(row.want))
        assert.deepEqual(got[k as keyof PdbDiagnosis], v, `${k} of ${JSON.stringify(got)}`);
      assert.equal(got.pdb, 'shop/web');
      assert.ok(diagnosisMessage(got).includes('shop/web'), 'the words name the PDB');
    });
});

describe('scaled (intstr.GetScaledValueFromIntOrPercent)', () => {
  it('ints as they are, percents rounded up or down', () => {
    assert.equal(scaled(2, 10, true), 2);
    assert.equal(scaled('2', 10, true), 2);
    assert.equal(scaled('25%', 3, true), 1);
    assert.equal(scaled('25%', 3, false), 0);
    assert.equal(scaled('100%', 3, true), 3);
    assert.equal(scaled('x', 3, true), undefined);
  });
});

describe('diagnosisMessage', () => {
  it('a Transient block names the pods not Ready on other nodes, which it waits for', () => {
    const d = diagnosePdb(
      input(
        { maxUnavailable: 1 },
        st(0, 2, 2, 3),
        [ready('b'), { key: 'shop/c', node: 'n2', phase: 'Running', ready: false }],
        {
          owner: deployment(3),
        },
      ),
    )!;
    assert.equal(d.kind, DisruptionBlockKind.Transient);
    assert.match(
      diagnosisMessage(d),
      /1 more pod\(s\) of Deployment shop\/web must become Ready; not Ready now: shop\/c on n2 \(NotReady\)\)$/,
    );
  });

  it('a Never block names the PDB, the owner and what a person can do', () => {
    const d = diagnosePdb(input({ minAvailable: 1 }, st(0, 1, 1, 1), [], { owner: deployment(1) }))!;
    assert.match(diagnosisMessage(d), /shop\/web can never allow a disruption \(Never: a single replica/);
    assert.match(diagnosisMessage(d), /Deployment shop\/web/);
  });
});

describe('diagnosisStep: when the pods of a blocked PDB are read', () => {
  const LASTING = 30_000;
  const TTL = 30_000;
  const T = 1_000_000;
  const cases: { name: string; memo: DiagnosisMemo; now: number; want: 'quick' | 'read' | 'reuse' }[] = [
    { name: 'first sight of the block: spec and status only', memo: {}, now: T, want: 'quick' },
    {
      name: 'blocked 29 s (a PDB pacing the drain): still no read',
      memo: { blockedSinceMs: T },
      now: T + 29_000,
      want: 'quick',
    },
    { name: 'blocked 30 s: read', memo: { blockedSinceMs: T }, now: T + 30_000, want: 'read' },
    {
      name: 'read 10 s ago in this block: reused, whatever the PDB wrote since',
      memo: { blockedSinceMs: T, read: { atMs: T + 30_000, d: undefined } },
      now: T + 40_000,
      want: 'reuse',
    },
    {
      name: 'read 30 s ago: read again',
      memo: { blockedSinceMs: T, read: { atMs: T + 30_000, d: undefined } },
      now: T + 60_000,
      want: 'read',
    },
    {
      name: 'a read of an earlier block is not reused in a new one (young: quick)',
      memo: { blockedSinceMs: T + 50_000, read: { atMs: T + 40_000, d: undefined } },
      now: T + 55_000,
      want: 'quick',
    },
    {
      name: 'a read of an earlier block is not reused in a new lasting one',
      memo: { blockedSinceMs: T + 50_000, read: { atMs: T + 40_000, d: undefined } },
      now: T + 81_000,
      want: 'read',
    },
  ];
  for (const c of cases) it(c.name, () => assert.equal(diagnosisStep(c.memo, c.now, LASTING, TTL), c.want));
});

describe('diagnosisDueMs: when a watch that sees no change looks at a blocked PDB again', () => {
  const LASTING = 30_000;
  const TTL = 30_000;
  const T = 1_000_000;
  const cases: { name: string; memo: DiagnosisMemo; want: number | undefined }[] = [
    { name: 'not blocked: never', memo: {}, want: undefined },
    { name: 'blocked, not read yet: once it lasted 30 s', memo: { blockedSinceMs: T }, want: T + LASTING },
    {
      name: 'read in this block: when the read is 30 s old',
      memo: { blockedSinceMs: T, read: { atMs: T + 31_000, d: undefined } },
      want: T + 31_000 + TTL,
    },
    {
      name: 'a read of an earlier block does not count: 30 s into this one',
      memo: { blockedSinceMs: T + 50_000, read: { atMs: T + 40_000, d: undefined } },
      want: T + 50_000 + LASTING,
    },
  ];
  for (const c of cases) it(c.name, () => assert.equal(diagnosisDueMs(c.memo, LASTING, TTL), c.want));
  it('agrees with diagnosisStep: quick just before, not quick or reuse at it', () => {
    for (const c of cases.filter((x) => x.want !== undefined)) {
      const due = diagnosisDueMs(c.memo, LASTING, TTL)!;
      const before = diagnosisStep(c.memo, due - 1, LASTING, TTL);
      assert.ok(before === 'quick' || before === 'reuse', `${c.name}: ${before}`);
      assert.equal(diagnosisStep(c.memo, due, LASTING, TTL), 'read', c.name);
    }
  });
});

describe('a diagnosis from the PDB alone (no pods read)', () => {
  it('proves a Never block: a single replica behind minAvailable: 1, maxUnavailable 0', () => {
    const alone = (spec: DiagnosisInput['pdb']['spec']) =>
      diagnosePdb({ pdb: { key: 'shop/web', spec, status: st(0, 1, 1, 1) }, node: NODE, pods: [] });
    assert.equal(alone({ minAvailable: 1 })?.kind, DisruptionBlockKind.Never);
    assert.equal(alone({ maxUnavailable: 0 })?.kind, DisruptionBlockKind.Never);
  });
  it('anything else reads as Transient: the detail needs the pods', () => {
    const d = diagnosePdb({
      pdb: { key: 'shop/web', spec: { maxUnavailable: 1 }, status: st(0, 2, 2, 3) },
      node: NODE,
      pods: [],
    });
    assert.equal(d?.kind, DisruptionBlockKind.Transient);
  });
});

describe('answerFingerprint: the diagnoses are part of an observeNode answer', () => {
  const base = '0123456789abcdef';
  const pdb = (diagnosis?: PdbDiagnosis): PdbObservation => ({
    key: 'shop/web',
    disruptionsAllowed: 0,
    ...(diagnosis ? { diagnosis } : {}),
  });
  const unsched = diagnosePdb(
    input({ minAvailable: 2 }, st(0, 2, 2, 3), [ready('b'), pending('new', '0/3 nodes are available.')], {
      owner: deployment(3),
    }),
  )!;
  it('without a diagnosis: the observation fingerprint as it is', () => {
    assert.equal(answerFingerprint(base, [pdb()]), base);
    assert.equal(observationPart(base), base);
  });
  it('a diagnosis read later (quick: none; lasting: ReplacementsUnschedulable) makes another answer', () => {
    const later = answerFingerprint(base, [pdb(unsched)]);
    assert.match(later, /^0123456789abcdef-[0-9a-f]{8}$/);
    assert.notEqual(later, base);
    assert.equal(observationPart(later), base);
    assert.equal(
      answerFingerprint(base, [pdb({ ...unsched })]),
      later,
      'the same diagnosis, the same answer',
    );
    assert.notEqual(
      answerFingerprint(base, [pdb({ ...unsched, scheduler: '0/4 nodes are available.' })]),
      later,
    );
  });
});
