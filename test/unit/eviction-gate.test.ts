/**
 * The eviction subresource's PDB rule (src/drain/eviction-gate.ts) against the API server's
 * behaviour (k8s.io/kubernetes/pkg/registry/core/pod/storage/eviction.go: canIgnorePDB, then the
 * one-PDB check, then the not-Ready check under spec.unhealthyPodEvictionPolicy), one row per
 * phase x readiness x terminating x PDBs/policy/health, and the agreement of the drain's
 * observation (src/activities/node-pods.ts) with the preflight report (src/drain/preflight.ts) on
 * every row: a pod the drain evicts without a budget is no preflight blocker and needs no round.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { PdbExemption } from '../../src/contract/observation.js';
import { pdbExemption, type GatePdb } from '../../src/drain/eviction-gate.js';
import { buildNodePods } from '../../src/activities/node-pods.js';
import { buildPreflightNode, summarizePreflight } from '../../src/drain/preflight.js';
import type { PreflightPdbInput } from '../../src/drain/preflight-input.js';
import { toPodInfo } from '../../src/drain/pods.js';
import type { PodSelection } from '../../src/api/plan.js';
import type { ObservedPod } from '../../src/contract/observation.js';
import { applyEvictionAnswer } from '../../src/drain/node/answers.js';
import { nodeBudgetRequest } from '../../src/drain/node/budget.js';
import { decideNode, nodeBlockers } from '../../src/drain/node/decide.js';
import { applyObservation } from '../../src/drain/node/observation.js';
import { initialNodeState, type NodeDrainSettings } from '../../src/drain/node/state.js';

const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown', undefined] as const;
const POLICIES = [undefined, 'IfHealthyBudget', 'AlwaysAllow'] as const;
/** currentHealthy/desiredHealthy: healthy budget, disrupted budget, nothing desired (maxUnavailable 100%). */
const HEALTH = [
  { name: 'healthy', currentHealthy: 3, desiredHealthy: 2 },
  { name: 'disrupted', currentHealthy: 1, desiredHealthy: 2 },
  { name: 'desired0', currentHealthy: 0, desiredHealthy: 0 },
] as const;

type PdbCase = { name: string; pdbs: GatePdb[] };
const PDB_CASES: PdbCase[] = [
  { name: 'no PDB', pdbs: [] },
  {
    name: 'two PDBs',
    pdbs: [{ currentHealthy: 3, desiredHealthy: 2 }, { unhealthyPodEvictionPolicy: 'AlwaysAllow' }],
  },
  ...POLICIES.flatMap((policy) =>
    HEALTH.map((h) => ({
      name: `policy ${policy ?? '(absent)'}, ${h.name}`,
      pdbs: [
        {
          ...(policy ? { unhealthyPodEvictionPolicy: policy } : {}),
          currentHealthy: h.currentHealthy,
          desiredHealthy: h.desiredHealthy,
        },
      ],
    })),
  ),
];

/**
 * The API server's documented behaviour, row by row:
 * - Pending, Succeeded, Failed, or terminating: evicted without looking at any PDB (canIgnorePDB);
 * - else with exactly one PDB and not Ready: AlwaysAllow lets it go; IfHealthyBudget (or no
 *   policy) lets it go when currentHealthy >= desiredHealthy > 0;
 * - else the budget (one PDB), a refusal (two), or nothing to check (none).
 */
const EXPECTED: Record<string, PdbExemption | undefined> = {
  'policy (absent), healthy': 'UnhealthyPodEvictionPolicy',
  'policy (absent), disrupted': undefined,
  'policy (absent), desired0': undefined,
  'policy IfHealthyBudget, healthy': 'UnhealthyPodEvictionPolicy',
  'policy IfHealthyBudget, disrupted': undefined,
  'policy IfHealthyBudget, desired0': undefined,
  'policy AlwaysAllow, healthy': 'UnhealthyPodEvictionPolicy',
  'policy AlwaysAllow, disrupted': 'UnhealthyPodEvictionPolicy',
  'policy AlwaysAllow, desired0': 'UnhealthyPodEvictionPolicy',
  'no PDB': undefined,
  'two PDBs': undefined,
};

function expected(phase: string | undefined, ready: boolean, terminating: boolean, c: PdbCase) {
  if (terminating || phase === 'Pending' || phase === 'Succeeded' || phase === 'Failed') return 'NotRunning';
  return ready ? undefined : EXPECTED[c.name];
}

const rows = PHASES.flatMap((phase) =>
  [true, false].flatMap((ready) =>
    [false, true].flatMap((terminating) => PDB_CASES.map((c) => ({ phase, ready, terminating, c }))),
  ),
);

describe('pdbExemption: every phase x readiness x PDB policy and health', () => {
  it(`covers ${rows.length} combinations as the eviction subresource decides them`, () => {
    assert.equal(rows.length, 6 * 2 * 2 * 11);
    for (const { phase, ready, terminating, c } of rows) {
      const got = pdbExemption({ ...(phase ? { phase } : {}), ready, terminating }, c.pdbs);
      assert.equal(
        got,
        expected(phase, ready, terminating, c),
        `phase ${phase ?? '(none)'}, ready ${ready}, terminating ${terminating}, ${c.name}`,
      );
    }
  });
});

const SELECTION: PodSelection = {
  ignoreDaemonSets: true,
  deleteEmptyDirData: false,
  force: false,
} as PodSelection;

function v1Pod(phase: string | undefined, ready: boolean): V1Pod {
  return {
    metadata: {
      namespace: 'ns',
      name: 'web-1',
      uid: 'u1',
      labels: { app: 'web' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true },
      ],
    },
    spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
    status: {
      ...(phase ? { phase } : {}),
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  };
}

function v1Pdb(i: number, g: GatePdb): V1PodDisruptionBudget {
  return {
    metadata: { namespace: 'ns', name: `pdb${i}`, generation: 1, resourceVersion: '1' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      ...(g.unhealthyPodEvictionPolicy ? { unhealthyPodEvictionPolicy: g.unhealthyPodEvictionPolicy } : {}),
    },
    status: {
      observedGeneration: 1,
      disruptionsAllowed: 0,
      currentHealthy: g.currentHealthy ?? 0,
      desiredHealthy: g.desiredHealthy ?? 0,
      expectedPods: 3,
    },
  };
}

function preflightPdb(i: number, g: GatePdb): PreflightPdbInput {
  return {
    namespace: 'ns',
    name: `pdb${i}`,
    selector: { matchLabels: { app: 'web' } },
    generation: 1,
    hasStatus: true,
    observedGeneration: 1,
    disruptionsAllowed: 0,
    currentHealthy: g.currentHealthy ?? 0,
    desiredHealthy: g.desiredHealthy ?? 0,
    ...(g.unhealthyPodEvictionPolicy ? { unhealthyPodEvictionPolicy: g.unhealthyPodEvictionPolicy } : {}),
  };
}

describe('the drain and the preflight agree (every PDB allowing 0 disruptions)', () => {
  it('a pod the drain evicts without a budget is no preflight blocker and needs no PDB round; the others block both', () => {
    for (const { phase, ready, c } of rows.filter((r) => !r.terminating && r.c.pdbs.length > 0)) {
      const what = `phase ${phase ?? '(none)'}, ready ${ready}, ${c.name}`;
      const pod = v1Pod(phase, ready);
      const observed = buildNodePods([pod], () => c.pdbs.map((g, i) => v1Pdb(i, g)), SELECTION).pods[0]!;
      assert.equal(observed.pdbExempt, expected(phase, ready, false, c), what);
      const pf = buildPreflightNode({
        node: 'n1',
        pods: [toPodInfo(pod)],
        pdbs: c.pdbs.map((g, i) => preflightPdb(i, g)),
        selection: SELECTION,
      });
      if (phase === 'Succeeded' || phase === 'Failed') {
        // Finished: both leave it alone (kubectl drain's rules, src/drain/pods.ts).
        assert.equal(observed.action, 'Skip', what);
        assert.equal(pf.report.podsSkipped, 1, what);
        continue;
      }
      const exempt = observed.pdbExempt !== undefined;
      assert.equal(
        pf.report.blockerCount === 0,
        exempt,
        `${what}: preflight blockers ${JSON.stringify(pf.report.blockers)}`,
      );
      assert.equal(pf.report.evict?.[0]?.pdbExempt, observed.pdbExempt, what);
      // The summary says the drain cannot finish exactly when it would not.
      const summary = summarizePreflight([pf]).summary;
      assert.equal(/cannot finish/.test(summary), !exempt, `${what}: ${summary}`);
    }
  });
});

describe('the drain evicts an exempt pod without waiting for or spending its PDB budget', () => {
  const NOW = 1_700_000_000_000;
  const settings: NodeDrainSettings = {
    maxConcurrentPerNode: 4,
    retryBackoff: { initialSeconds: 5, maxSeconds: 120 },
  };
  const observed = (exempt: PdbExemption | undefined): ObservedPod => ({
    key: 'ns/web-1',
    namespace: 'ns',
    name: 'web-1',
    uid: 'u1',
    action: 'Evict',
    reason: 'Evictable',
    message: '',
    pdbs: ['ns/pdb'],
    ...(exempt ? { pdbExempt: exempt } : {}),
  });
  for (const [exempt, coordinated] of [
    [undefined, false],
    ['UnhealthyPodEvictionPolicy', false],
    ['NotRunning', false],
    [undefined, true],
    ['UnhealthyPodEvictionPolicy', true],
  ] as const)
    it(`pdbExempt ${exempt ?? '(none)'}${coordinated ? ', the plan hands out budgets' : ''}`, () => {
      const s = initialNodeState('n1', NOW + 3_600_000, false);
      if (coordinated) s.budget = { grantSeq: 0, grants: {}, reports: [] };
      applyObservation(
        s,
        {
          changed: true,
          fingerprint: 'f1',
          node: { exists: true, unschedulable: true },
          pods: [observed(exempt)],
          pdbs: [{ key: 'ns/pdb', disruptionsAllowed: 0, resourceVersion: '7' }],
        },
        ++s.observeSeq,
        NOW,
      );
      const blockers = nodeBlockers(s, NOW);
      const req = nodeBudgetRequest(s, NOW, settings);
      const d = decideNode(s, NOW, settings);
      assert.equal(d.evict.length, exempt ? 1 : 0, 'evicted at once only when exempt');
      assert.equal(blockers.length, exempt ? 0 : 1);
      if (coordinated)
        assert.deepEqual(req?.wants, exempt ? {} : { 'ns/pdb': 1 }, 'an exempt pod wants no grant');
      if (!exempt) return;
      assert.equal(
        nodeBudgetRequest(s, NOW, settings)?.holding['ns/pdb'],
        undefined,
        'holds nothing in flight',
      );
      applyEvictionAnswer(s, 'u1', { outcome: 'Evicted' }, NOW, settings.retryBackoff);
      assert.deepEqual(s.pdbs['ns/pdb']?.spentAtSeq, [], 'the API server spent no disruption');
    });
});
