/**
 * Table tests of the node drain's observation reducers (src/drain/node/observation.ts): the node by
 * uid, pods that must leave added, re-evaluated and dropped when gone, PDB allowances and refusals,
 * and unchanged observations confirming evictions. No Temporal, no I/O.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeBlockers } from '../../src/drain/node/decide.js';
import {
  applyUnchangedObservation,
  hasUnconfirmedEvictions,
  replacingUid,
} from '../../src/drain/node/observation.js';
import { nodeCounts } from '../../src/drain/node/report.js';
import {
  anObservation,
  aPod,
  Drain,
  evicted,
  NOW,
  S,
  SETTINGS,
  twoBehindPdb,
} from '../helpers/node-drain-fixtures.js';

describe('replacingUid: nodes are identified by uid', () => {
  const cases: [string, string | undefined, { exists: boolean; uid?: string }, string | undefined][] = [
    ['the claimed Node', 'u1', { exists: true, uid: 'u1' }, undefined],
    ['another Node under the name', 'u1', { exists: true, uid: 'u2' }, 'u2'],
    ['no Node under the name (deleted: not replaced)', 'u1', { exists: false }, undefined],
    ['not claimed yet (no uid recorded): not compared', undefined, { exists: true, uid: 'u2' }, undefined],
    ['an answer without the uid: not compared', 'u1', { exists: true }, undefined],
  ];
  for (const [name, claimed, node, want] of cases)
    it(`${name}: ${String(want)}`, () => assert.equal(replacingUid(claimed, node), want));
});

describe('applyObservation', () => {
  const cases: {
    name: string;
    run: () => Drain;
    states: string[];
    podsGone?: number;
    check?: (d: Drain) => void;
  }[] = [
    {
      name: 'first observation: Evict → Pending, Wait → Terminating, Block → Blocked with the classification reason, Skip not at all',
      run: () =>
        new Drain().observe(
          anObservation().pods(
            aPod('app/a'),
            aPod('app/b').terminating(),
            aPod('app/c').blocked('EmptyDirData', 'pod has local storage'),
            aPod('kube-system/ds').skipped(),
          ),
        ),
      states: ['app/a Pending', 'app/b Terminating', 'app/c Blocked EmptyDirData'],
      podsGone: 0,
      check: (d) => {
        const c = d.pod('app/c')!;
        assert.equal(c.ruleBlocked, true);
        assert.equal(c.message, 'pod has local storage');
        assert.equal(c.blockedSinceMs, NOW);
        assert.equal(d.pod('kube-system/ds'), undefined);
        assert.deepEqual(d.s.view, {
          fingerprint: d.s.view!.fingerprint,
          exists: true,
          unschedulable: true,
          seq: 1,
        });
      },
    },
    {
      name: 'a pod with two PDBs is Blocked MultiplePodDisruptionBudgets, without an eviction',
      run: () =>
        new Drain().observe(
          anObservation().pods(aPod('app/a').withPdb('app/p', 'app/q')).pdb('app/p', 5).pdb('app/q', 5),
        ),
      states: ['app/a Blocked MultiplePodDisruptionBudgets'],
      check: (d) => {
        const dec = d.decide();
        assert.deepEqual(dec.evict, []);
        assert.equal(d.s.attempts, 0);
        assert.equal(dec.reason, 'PodsNotEvictable');
        assert.match(d.pod('app/a')!.message!, /app\/p, app\/q/);
      },
    },
    {
      name: 'a pod missing from the observation is gone, whatever its state',
      run: () => {
        const d = new Drain().observe(
          anObservation()
            .pods(
              aPod('app/pending'),
              aPod('app/evicting'),
              aPod('app/term').terminating(),
              aPod('app/blocked').blocked(),
            )
            .pdb('app/p', 1),
        );
        d.settings = { ...SETTINGS, maxConcurrentPerNode: 1 };
        assert.deepEqual(d.evicts(), ['app/evicting']);
        return d.observe(anObservation());
      },
      states: [],
      podsGone: 4,
      // Only the pod whose call is in flight counts as this drain's eviction; the others left without one.
      check: (d) =>
        assert.deepEqual(nodeCounts(d.s), {
          podsTotal: 4,
          podsEvicted: 1,
          podsFailed: 0,
          podsGoneWithoutEviction: 3,
        }),
    },
    {
      name: 'a tracked pod now skipped (finished) is gone',
      run: () =>
        new Drain()
          .observe(anObservation().pods(aPod('app/job')))
          .observe(anObservation().pods(aPod('app/job').skipped('Succeeded'))),
      states: [],
      podsGone: 1,
    },
    {
      name: 'a pod blocked for two PDBs is Pending again once the second PDB is deleted',
      run: () =>
        new Drain()
          .observe(
            anObservation().pods(aPod('app/a').withPdb('app/p', 'app/q')).pdb('app/p', 1).pdb('app/q', 1),
          )
          .observe(anObservation().pods(aPod('app/a').withPdb('app/p')).pdb('app/p', 1)),
      states: ['app/a Pending'],
      check: (d) => {
        const p = d.pod('app/a')!;
        assert.equal(p.ruleBlocked, false);
        assert.equal(p.blockedSinceMs, undefined);
        assert.deepEqual(d.s.pdbs['app/q'], undefined, 'a PDB no longer observed is dropped');
        assert.deepEqual(d.evicts(), ['app/a']);
      },
    },
    {
      name: 'a rule-blocked pod (Block) is Pending again when the classification says Evict',
      run: () =>
        new Drain()
          .observe(anObservation().pods(aPod('app/a').blocked()))
          .observe(anObservation().pods(aPod('app/a'))),
      states: ['app/a Pending'],
    },
    {
      name: 'a block keeps its first time across observations',
      run: () => {
        const d = new Drain().observe(anObservation().pods(aPod('app/a').blocked()));
        return d.at(NOW + 60 * S).observe(anObservation().pods(aPod('app/a').blocked('EmptyDirData')));
      },
      states: ['app/a Blocked EmptyDirData'],
      check: (d) => assert.equal(d.pod('app/a')!.blockedSinceMs, NOW),
    },
    {
      name: 'a rule-blocked pod found terminating is Terminating, with no stale block reason',
      run: () =>
        new Drain()
          .observe(anObservation().pods(aPod('app/a').blocked()))
          .observe(anObservation().pods(aPod('app/a').terminating())),
      states: ['app/a Terminating'],
      check: (d) => {
        assert.equal(d.pod('app/a')!.ruleBlocked, false);
        assert.deepEqual(nodeBlockers(d.s, d.now), []);
      },
    },
    {
      name: 'a pod evicted by this drain stays Terminating while an older observation still shows it',
      run: () => {
        const d = new Drain().observe(anObservation().pods(aPod('app/a')));
        d.evicts();
        const seq = d.startObserve();
        d.answer('app/a', evicted);
        return d.applyObserved(anObservation().pods(aPod('app/a')), seq);
      },
      states: ['app/a Terminating'],
    },
    {
      name: 'a pod whose eviction is in flight is left alone (its answer comes first), even when now blocked',
      run: () => {
        const d = new Drain().observe(anObservation().pods(aPod('app/a')));
        d.evicts();
        return d.observe(anObservation().pods(aPod('app/a').blocked()));
      },
      states: ['app/a Evicting'],
    },
    {
      name: 'node absent: only the view changes',
      run: () => {
        const d = new Drain().observe(
          anObservation().pods(aPod('app/a').withPdb('app/p'), aPod('app/b')).pdb('app/p', 1),
        );
        const before = structuredClone({ pods: d.s.pods, pdbs: d.s.pdbs, podsGone: d.s.podsGone });
        d.observe(anObservation().node({ exists: false }));
        assert.deepEqual({ pods: d.s.pods, pdbs: d.s.pdbs, podsGone: d.s.podsGone }, before);
        return d;
      },
      states: ['app/a Pending', 'app/b Pending'],
      podsGone: 0,
      check: (d) => {
        assert.equal(d.s.view!.exists, false);
        assert.equal(d.s.view!.seq, 2);
      },
    },
    {
      name: 'PDBs take the observed allowance',
      run: () =>
        new Drain()
          .observe(anObservation().pods(aPod('app/a').withPdb('app/p')).pdb('app/p', 0))
          .observe(anObservation().pods(aPod('app/a').withPdb('app/p')).pdb('app/p', 2)),
      states: ['app/a Pending'],
      check: (d) =>
        assert.deepEqual(d.s.pdbs['app/p'], {
          key: 'app/p',
          observedAllowed: 2,
          spentAtSeq: [],
          refusalRounds: 0,
        }),
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = c.run();
      assert.deepEqual(d.states(), c.states);
      if (c.podsGone !== undefined) assert.equal(d.s.podsGone, c.podsGone);
      c.check?.(d);
    });
  }
});

describe('applyUnchangedObservation', () => {
  it('confirms an eviction answered after the last changed observation started, freeing its budget', () => {
    // The operator e2e case: the last changed observation already showed the PDB back at 1 (it
    // started before the answer arrived), and nothing changes afterwards.
    const d = new Drain().observe(twoBehindPdb(1));
    assert.deepEqual(d.evicts(), ['app/a']);
    const before = d.startObserve();
    d.answer('app/a', evicted);
    d.applyObserved(twoBehindPdb(1, { aGone: true }), before);
    assert.equal(hasUnconfirmedEvictions(d.s), true);
    assert.deepEqual(d.evicts(), [], 'held by the unconfirmed eviction');
    const after = d.startObserve();
    applyUnchangedObservation(d.s, after);
    assert.equal(hasUnconfirmedEvictions(d.s), false);
    assert.equal(d.s.view?.seq, after);
    assert.deepEqual(d.evicts(), ['app/b']);
  });
  it('keeps spends answered after the unchanged observation started', () => {
    const d = new Drain().observe(twoBehindPdb(2));
    assert.deepEqual(d.evicts(), ['app/a', 'app/b']);
    const seq = d.startObserve();
    d.answer('app/a', evicted);
    applyUnchangedObservation(d.s, seq);
    assert.deepEqual(d.s.pdbs['app/p']!.spentAtSeq, [seq]);
  });
  it('does nothing before the first observation', () => {
    const d = new Drain();
    applyUnchangedObservation(d.s, 3);
    assert.equal(d.s.view, undefined);
  });
});
