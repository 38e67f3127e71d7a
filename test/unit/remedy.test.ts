/**
 * The remedy by surge (src/drain/remedy.ts): which Never blocks a rollout restart may clear, as
 * Kubernetes computes a Deployment's rollout bounds, and what the plan does next with its remedies.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosePdb } from '../../src/drain/pdb-diagnosis.js';
import { diagnosisMessage } from '../../src/drain/pdb-diagnosis-words.js';
import {
  approvalRefusal,
  decideRemedies,
  recordRemedy,
  recordRestart,
  remedyBlocks,
  rolloutBounds,
  rolloutRemedy,
  type DeploymentShape,
  type RemedyBlock,
  type RemedyContext,
  type RemedyRecord,
} from '../../src/drain/remedy.js';
import { abortRemedyNote, remedyCondition } from '../../src/drain/remedy-words.js';

const rolling = (
  replicas: number | undefined,
  maxUnavailable?: number | string,
  maxSurge?: number | string,
): DeploymentShape => ({
  ...(replicas !== undefined ? { replicas } : {}),
  strategy: {
    type: 'RollingUpdate',
    rollingUpdate: {
      ...(maxUnavailable !== undefined ? { maxUnavailable } : {}),
      ...(maxSurge !== undefined ? { maxSurge } : {}),
    },
  },
});

describe('rolloutBounds: as Kubernetes ResolveFenceposts', () => {
  const rows: [string, DeploymentShape, { maxUnavailable: number; maxSurge: number } | undefined][] = [
    ['default 25%/25% of 1 replica: 0/1', rolling(1), { maxUnavailable: 0, maxSurge: 1 }],
    ['default 25%/25%, replicas absent (1)', {}, { maxUnavailable: 0, maxSurge: 1 }],
    ['default 25%/25% of 3: 0/1', rolling(3), { maxUnavailable: 0, maxSurge: 1 }],
    ['default 25%/25% of 4: 1/1', rolling(4), { maxUnavailable: 1, maxSurge: 1 }],
    [
      '25%/25% of 7: unavailable rounded down 1, surge rounded up 2',
      rolling(7),
      { maxUnavailable: 1, maxSurge: 2 },
    ],
    ['maxUnavailable 0, maxSurge 1', rolling(5, 0, 1), { maxUnavailable: 0, maxSurge: 1 }],
    ['maxUnavailable 0, maxSurge 100%', rolling(2, 0, '100%'), { maxUnavailable: 0, maxSurge: 2 }],
    ['maxUnavailable 1, maxSurge 0', rolling(1, 1, 0), { maxUnavailable: 1, maxSurge: 0 }],
    ['both rounding to 0 make maxUnavailable 1', rolling(1, '25%', 0), { maxUnavailable: 1, maxSurge: 0 }],
    ['0 replicas: both 0, so maxUnavailable 1', rolling(0), { maxUnavailable: 1, maxSurge: 0 }],
    ['a string that is no percent', rolling(1, '1', 1), undefined],
    ['Recreate', { replicas: 1, strategy: { type: 'Recreate' } }, undefined],
  ];
  for (const [name, d, want] of rows) it(name, () => assert.deepEqual(rolloutBounds(d), want));
});

describe('rolloutRemedy: a Never block a rollout restart may clear', () => {
  const rows: [string, string | undefined, DeploymentShape | undefined, string][] = [
    [
      'a single-replica Deployment with the default strategy',
      'Deployment shop/web',
      rolling(1),
      'RolloutRestart shop/web',
    ],
    ['maxUnavailable 0, maxSurge 1 of 3', 'Deployment shop/web', rolling(3, 0, 1), 'RolloutRestart shop/web'],
    [
      'the default of 4 replicas lowers availability (1 unavailable)',
      'Deployment shop/web',
      rolling(4),
      'None LowersAvailability',
    ],
    ['maxSurge 0', 'Deployment shop/web', rolling(1, 0, 0), 'None LowersAvailability'],
    ['Recreate', 'Deployment shop/web', { replicas: 1, strategy: { type: 'Recreate' } }, 'None Recreate'],
    ['a Deployment not read', 'Deployment shop/web', undefined, 'None Unknown'],
    ['a StatefulSet', 'StatefulSet shop/db', undefined, 'None StatefulSet'],
    ['a ReplicaSet without Deployment', 'ReplicaSet shop/rs', undefined, 'None NotDeployment'],
    ['a Job', 'Job shop/j', undefined, 'None NotDeployment'],
    ['no controller', undefined, undefined, 'None NoController'],
  ];
  for (const [name, owner, d, want] of rows)
    it(name, () => {
      const r = rolloutRemedy(owner, d);
      assert.equal(r.kind === 'RolloutRestart' ? `${r.kind} ${r.workload}` : `${r.kind} ${r.cause}`, want);
    });

  it('the diagnosis of a Never block carries it, and its words say it (or why none is safe)', () => {
    const base = {
      pdb: {
        key: 'shop/web',
        spec: { minAvailable: 1 },
        status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
      },
      node: 'n1',
      pod: 'shop/web-1',
      pods: [{ key: 'shop/web-1', node: 'n1', phase: 'Running', ready: true }],
    };
    const dep = diagnosePdb({
      ...base,
      owner: { ref: 'Deployment shop/web', replicas: 1, deployment: rolling(1) },
    })!;
    assert.deepEqual(dep.remedy, { kind: 'RolloutRestart', workload: 'shop/web' });
    assert.match(
      diagnosisMessage(dep),
      /drainflow can move it by surge: a rollout restart of Deployment shop\/web/,
    );
    const sts = diagnosePdb({ ...base, owner: { ref: 'StatefulSet shop/web', replicas: 1 } })!;
    assert.match(
      diagnosisMessage(sts),
      /no safe remedy by drainflow: a StatefulSet deletes a pod before it starts its replacement/,
    );
    // Not Never: no remedy at all.
    const transient = diagnosePdb({
      ...base,
      pdb: { ...base.pdb, spec: { maxUnavailable: 1 } },
      owner: { ref: 'Deployment shop/web', replicas: 3, deployment: rolling(3) },
    });
    assert.equal(transient?.remedy, undefined);
  });
});

const BLOCK: RemedyBlock = { node: 'n1', pod: 'shop/web-1', pdb: 'shop/web', workload: 'shop/web' };
const T0 = 1_000_000;
const ctx = (over: Partial<RemedyContext> = {}): RemedyContext => ({
  policy: 'Approve',
  afterSeconds: 300,
  nowMs: T0,
  held: false,
  stopped: false,
  blockedPods: { n1: ['shop/web-1'] },
  ...over,
});
const rec = (over: Partial<RemedyRecord> = {}): RemedyRecord => ({ ...BLOCK, sinceMs: T0, ...over });
const iso = (ms: number) => new Date(ms).toISOString();

describe('decideRemedies', () => {
  const rows: [string, RemedyRecord[], RemedyBlock[], RemedyContext, ReturnType<typeof decideRemedies>][] = [
    ['Never: nothing is proposed', [], [BLOCK], ctx({ policy: 'Never' }), { actions: [] }],
    ['Approve: a new block is proposed', [], [BLOCK], ctx(), { actions: [{ do: 'propose', record: rec() }] }],
    [
      'Auto: proposed, due afterSeconds later',
      [],
      [BLOCK],
      ctx({ policy: 'Auto' }),
      { actions: [{ do: 'propose', record: rec({ autoAtMs: T0 + 300_000 }) }], wakeAtMs: T0 + 300_000 },
    ],
    [
      'one proposal per Deployment (two pods of it blocked)',
      [],
      [BLOCK, { ...BLOCK, pod: 'shop/web-2' }],
      ctx(),
      { actions: [{ do: 'propose', record: rec() }] },
    ],
    ['aborted or past the deadline: nothing new', [], [BLOCK], ctx({ stopped: true }), { actions: [] }],
    [
      'Approve: a proposal waits for its approval',
      [rec()],
      [BLOCK],
      ctx({ nowMs: T0 + 9e6 }),
      { actions: [] },
    ],
    [
      'approved: restarted with the approval time as the annotation value',
      [rec({ approved: { by: 'alice', atMs: T0 + 5000 } })],
      [BLOCK],
      ctx({ nowMs: T0 + 6000 }),
      { actions: [{ do: 'restart', workload: 'shop/web', restartedAt: iso(T0 + 5000) }] },
    ],
    [
      'approved while paused: not yet',
      [rec({ approved: { by: 'alice', atMs: T0 } })],
      [BLOCK],
      ctx({ held: true }),
      { actions: [] },
    ],
    [
      'Auto before its time: waits (a durable timer)',
      [rec({ autoAtMs: T0 + 300_000 })],
      [BLOCK],
      ctx({ policy: 'Auto', nowMs: T0 + 1000 }),
      { actions: [], wakeAtMs: T0 + 300_000 },
    ],
    [
      'Auto at its time: approved by Auto and restarted',
      [rec({ autoAtMs: T0 + 300_000 })],
      [BLOCK],
      ctx({ policy: 'Auto', nowMs: T0 + 300_000 }),
      {
        actions: [
          { do: 'approve', workload: 'shop/web', by: 'Auto' },
          { do: 'restart', workload: 'shop/web', restartedAt: iso(T0 + 300_000) },
        ],
      },
    ],
    [
      'Auto at its time while paused: waits for the resume',
      [rec({ autoAtMs: T0 })],
      [BLOCK],
      ctx({ policy: 'Auto', nowMs: T0 + 1, held: true }),
      { actions: [] },
    ],
    [
      'the block cleared before the restart: withdrawn',
      [rec()],
      [],
      ctx(),
      { actions: [{ do: 'end', workload: 'shop/web', result: 'Withdrawn' }] },
    ],
    [
      'restarted, the pod still blocks: waits',
      [
        rec({
          approved: { by: 'a', atMs: T0 },
          applied: { atMs: T0, restartedAt: iso(T0), requested: true },
        }),
      ],
      [BLOCK],
      ctx(),
      { actions: [] },
    ],
    [
      'restarted, the pod still blocks under another kind: waits',
      [
        rec({
          approved: { by: 'a', atMs: T0 },
          applied: { atMs: T0, restartedAt: iso(T0), requested: true },
        }),
      ],
      [],
      ctx(),
      { actions: [] },
    ],
    [
      'restarted and the pod no longer blocks its node: succeeded',
      [
        rec({
          approved: { by: 'a', atMs: T0 },
          applied: { atMs: T0, restartedAt: iso(T0), requested: true },
        }),
      ],
      [],
      ctx({ blockedPods: { n1: [] } }),
      { actions: [{ do: 'end', workload: 'shop/web', result: 'Succeeded' }] },
    ],
    [
      'a pod already remedied is not proposed again (a new pod of it is)',
      [rec({ outcome: { result: 'Withdrawn', atMs: T0 } })],
      [BLOCK, { ...BLOCK, node: 'n2', pod: 'shop/web-2' }],
      ctx(),
      { actions: [{ do: 'propose', record: rec({ node: 'n2', pod: 'shop/web-2' }) }] },
    ],
  ];
  for (const [name, records, blocks, c, want] of rows)
    it(name, () => assert.deepEqual(decideRemedies(records, blocks, c), want));
});

describe('the remedy records', () => {
  it('propose → approve → restart → succeeded, with the Remedy condition at each step', () => {
    const records: RemedyRecord[] = [];
    recordRemedy(records, { do: 'propose', record: rec() }, T0);
    assert.equal(remedyCondition(records, 'p')?.reason, 'RemedyProposed');
    assert.match(remedyCondition(records, 'p')!.message, /drainflow approve p --workload shop\/web/);
    recordRemedy(records, { do: 'approve', workload: 'shop/web', by: 'alice' }, T0 + 1);
    recordRemedy(records, { do: 'approve', workload: 'shop/web', by: 'bob' }, T0 + 2);
    assert.deepEqual(records[0]!.approved, { by: 'alice', atMs: T0 + 1 }, 'the first approval stands');
    assert.equal(remedyCondition(records, 'p')?.reason, 'RemedyApproved');
    recordRestart(records, 'shop/web', iso(T0 + 1), true, T0 + 3);
    assert.equal(remedyCondition(records, 'p')?.reason, 'RolloutRestarted');
    assert.match(abortRemedyNote(records), /Deployment shop\/web .* is left to finish on its own/);
    recordRemedy(records, { do: 'end', workload: 'shop/web', result: 'Succeeded' }, T0 + 4);
    assert.deepEqual(
      { status: remedyCondition(records, 'p')?.status, reason: remedyCondition(records, 'p')?.reason },
      { status: 'False', reason: 'RemedySucceeded' },
    );
    assert.equal(abortRemedyNote(records), '');
    assert.equal(remedyCondition([], 'p'), undefined);
  });

  it('an approval is refused, readably, for a Deployment not proposed or already restarted', () => {
    const records = [rec()];
    assert.equal(approvalRefusal(records, 'shop/web', 'alice', 'p'), undefined);
    assert.equal(
      approvalRefusal(records, 'shop/other', 'alice', 'p'),
      'plan p proposes no rollout restart of Deployment shop/other (proposed now: shop/web)',
    );
    assert.equal(
      approvalRefusal([], 'shop/web', 'alice', 'p'),
      'plan p proposes no rollout restart of Deployment shop/web (none is proposed now)',
    );
    assert.match(approvalRefusal(records, 'web', 'alice', 'p')!, /workload must be NAMESPACE\/NAME/);
    assert.match(approvalRefusal(records, 'shop/web', '', 'p')!, /by must name who approves/);
    records[0]!.applied = { atMs: T0, restartedAt: iso(T0), requested: true };
    assert.match(approvalRefusal(records, 'shop/web', 'alice', 'p')!, /was already restarted by plan p/);
  });

  it('remedyBlocks: only Never blocks of a Deployment with remedy RolloutRestart', () => {
    const b = (over: object) => ({
      pod: 'shop/web-1',
      pdb: 'shop/web',
      reason: 'DisruptionBudget',
      message: '',
      ...over,
    });
    const nodes = [
      {
        name: 'n1',
        blockedBy: [
          b({ kind: 'Never', owner: 'Deployment shop/web', remedy: 'RolloutRestart' }),
          b({ pod: 'shop/db-0', kind: 'Never', owner: 'StatefulSet shop/db', remedy: 'None' }),
          b({ pod: 'shop/x', kind: 'Transient', owner: 'Deployment shop/x' }),
        ],
      },
    ] as Parameters<typeof remedyBlocks>[0];
    assert.deepEqual(remedyBlocks(nodes), [BLOCK]);
  });
});
