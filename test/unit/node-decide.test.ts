/**
 * Table tests of the node decision (src/drain/node/decide.ts): `decideNode` (phases, ends, budgets,
 * concurrency, cooldowns), `nodeBlockers` and `nextActionAt`. No Temporal, no I/O.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyControl } from '../../src/drain/node/controls.js';
import { nextActionAt, nodeBlockers } from '../../src/drain/node/decide.js';
import type { NodeDecision } from '../../src/drain/node/state.js';
import {
  anObservation,
  aPod,
  callFailed,
  DEADLINE,
  Drain,
  evicted,
  evicting,
  failed,
  NOW,
  pdbRefusal,
  S,
  SETTINGS,
  throttled,
} from '../helpers/node-drain-fixtures.js';

describe('decideNode', () => {
  const cases: {
    name: string;
    run: () => { d: Drain; dec: NodeDecision };
    evict?: string[];
    phase: string;
    reason?: string;
    outcome?: string;
    wakeAtMs?: number;
  }[] = [
    {
      name: 'no observation yet: nothing, wake at the deadline',
      run: () => {
        const d = new Drain();
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Cordoned',
      wakeAtMs: DEADLINE,
    },
    {
      name: 'node deleted: ends Deleted/NodeDeleted',
      run: () => {
        const d = new Drain()
          .observe(anObservation().pods(aPod('app/a')))
          .observe(anObservation().node({ exists: false }));
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Deleted',
      reason: 'NodeDeleted',
      outcome: 'Deleted/NodeDeleted',
    },
    {
      name: 'node deleted and created again under its name (another uid): ends Deleted/NodeDeleted, nothing evicted on the new one',
      run: () => {
        const d = new Drain();
        d.s.nodeUid = 'old';
        d.observe(anObservation().node({ uid: 'old' }).pods(aPod('app/a')).pdb('app/pdb', 0));
        // The new Node's pods are not the drain's, even when an observation lists them.
        d.observe(
          anObservation().node({ uid: 'new', unschedulable: false }).pods(aPod('app/a'), aPod('app/b')),
        );
        const dec = d.decide();
        assert.match(
          dec.message ?? '',
          /created again under its name .*uid old, now new.*not claimed by this plan/,
        );
        assert.deepEqual(d.states(), ['app/a Pending'], "the new node's pods are not taken in");
        return { d, dec };
      },
      evict: [],
      phase: 'Deleted',
      reason: 'NodeDeleted',
      outcome: 'Deleted/NodeDeleted',
    },
    {
      name: 'the claimed node, by uid: drains as before',
      run: () => {
        const d = new Drain();
        d.s.nodeUid = 'old';
        d.observe(anObservation().node({ uid: 'old' }).pods(aPod('app/a')));
        return { d, dec: d.decide() };
      },
      evict: ['app/a'],
      phase: 'Draining',
    },
    {
      name: 'node deleted with an eviction in flight: no end yet',
      run: () => {
        const d = evicting().observe(anObservation().node({ exists: false }));
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Draining',
    },
    {
      name: 'abort with nothing in flight: ends Aborted (even before an observation)',
      run: () => {
        const d = new Drain();
        applyControl(d.s, 'abort');
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Aborted',
      outcome: 'Aborted/Aborted',
    },
    {
      name: 'abort while an eviction is in flight: no end and no new eviction',
      run: () => {
        const d = evicting({ more: [aPod('app/b')] });
        applyControl(d.s, 'abort');
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Draining',
    },
    {
      name: 'abort after the in-flight answer: ends Aborted',
      run: () => {
        const d = evicting({ more: [aPod('app/b')] });
        applyControl(d.s, 'abort');
        d.decide();
        d.answer('app/a', callFailed({ cancelled: true, timedOut: false, message: 'cancelled' }));
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Aborted',
      outcome: 'Aborted/Aborted',
    },
    {
      name: 'no pod left on a cordoned node: ends Drained',
      run: () => {
        const d = evicting()
          .answer('app/a', evicted)
          .observe(anObservation().pods(aPod('kube-system/ds').skipped()));
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Drained',
      outcome: 'Drained/Drained',
    },
    {
      name: 'no pod left but the node is schedulable: NOT Drained (NodeUncordonedExternally)',
      run: () => {
        const d = new Drain().observe(anObservation().node({ unschedulable: false }));
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Blocked',
      reason: 'NodeUncordonedExternally',
      wakeAtMs: DEADLINE,
    },
    {
      name: 'deadline passed: ends Blocked/DeadlineExceeded',
      run: () => {
        const d = new Drain().at(DEADLINE);
        d.decide(); // the first decision past the deadline: the next observation is a fresh view
        d.observe(anObservation().pods(aPod('app/a').blocked()));
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Blocked',
      reason: 'DeadlineExceeded',
      outcome: 'Blocked/DeadlineExceeded',
    },
    {
      name: 'deadline passed with nothing left: Drained wins (checked first)',
      run: () => {
        const d = new Drain().observe(anObservation()).at(DEADLINE + S);
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Drained',
      outcome: 'Drained/Drained',
    },
    {
      name: 'deadline passed with an eviction in flight: waits for it',
      run: () => {
        const d = evicting().at(DEADLINE);
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Draining',
    },
    {
      name: 'deadline passed on an uncordoned node: DeadlineExceeded says so',
      run: () => {
        const d = new Drain().at(DEADLINE);
        d.decide(); // the first decision past the deadline: the next observation is a fresh view
        d.observe(anObservation().node({ unschedulable: false }).pods(aPod('app/a')));
        const dec = d.decide();
        assert.match(dec.outcome!.message, /uncordoned by someone else \(1 pod/);
        return { d, dec };
      },
      evict: [],
      phase: 'Blocked',
      outcome: 'Blocked/DeadlineExceeded',
    },
    {
      name: 'uncordoned externally: no eviction, Blocked/NodeUncordonedExternally, not an end',
      run: () => {
        const d = new Drain().observe(anObservation().node({ unschedulable: false }).pods(aPod('app/a')));
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Blocked',
      reason: 'NodeUncordonedExternally',
      wakeAtMs: DEADLINE,
    },
    {
      name: 'paused: Paused, no eviction, cooldowns still reported',
      run: () => {
        const d = evicting({ more: [aPod('app/b')] }).answer('app/a', throttled(7));
        applyControl(d.s, 'pause');
        const dec = d.decide();
        assert.deepEqual(d.states(), ['app/a Pending TooManyRequests', 'app/b Pending']);
        return { d, dec };
      },
      evict: [],
      phase: 'Paused',
      reason: 'PausedByUser',
      wakeAtMs: NOW + 7 * S,
    },
    {
      name: 'resumed: evicts again',
      run: () => {
        const d = new Drain({ paused: true }).observe(anObservation().pods(aPod('app/a')));
        assert.equal(d.decide().phase, 'Paused');
        applyControl(d.s, 'resume');
        return { d, dec: d.decide() };
      },
      evict: ['app/a'],
      phase: 'Draining',
    },
    {
      name: 'maxConcurrentPerNode counts the calls in flight',
      run: () => {
        const d = new Drain().observe(
          anObservation().pods(aPod('app/1'), aPod('app/2'), aPod('app/3'), aPod('app/4')),
        );
        d.settings = { ...SETTINGS, maxConcurrentPerNode: 2 };
        assert.deepEqual(d.evicts(), ['app/1', 'app/2']);
        assert.deepEqual(d.evicts(), []);
        d.answer('app/1', evicted);
        return { d, dec: d.decide() };
      },
      evict: ['app/3'],
      phase: 'Draining',
    },
    {
      name: 'PDB budget: observed allowance minus calls in flight minus answered evictions',
      run: () => {
        const pods = ['app/1', 'app/2', 'app/3', 'app/4', 'app/5'].map((k) => aPod(k).withPdb('app/p'));
        const d = new Drain().observe(
          anObservation()
            .pods(...pods)
            .pdb('app/p', 4),
        );
        d.settings = { ...SETTINGS, maxConcurrentPerNode: 2 };
        assert.deepEqual(d.evicts(), ['app/1', 'app/2']);
        d.answer('app/1', evicted); // spent: 4 - 1 spent - 1 in flight = 2
        d.settings = SETTINGS;
        return { d, dec: d.decide() };
      },
      evict: ['app/3', 'app/4'],
      phase: 'Draining',
    },
    {
      name: 'PDB budget is per PDB; pods without a PDB are not limited',
      run: () => {
        const d = new Drain().observe(
          anObservation()
            .pods(
              aPod('a/1').withPdb('a/p'),
              aPod('a/2').withPdb('a/p'),
              aPod('b/1').withPdb('b/q'),
              aPod('c/1'),
            )
            .pdb('a/p', 0)
            .pdb('b/q', 1),
        );
        return { d, dec: d.decide() };
      },
      evict: ['b/1', 'c/1'],
      phase: 'Draining',
    },
    {
      name: 'pods are evicted in key order',
      run: () => {
        const d = new Drain().observe(
          anObservation().pods(aPod('z/z'), aPod('a/b'), aPod('a/a'), aPod('m/m')),
        );
        d.settings = { ...SETTINGS, maxConcurrentPerNode: 3 };
        return { d, dec: d.decide() };
      },
      evict: ['a/a', 'a/b', 'm/m'],
      phase: 'Draining',
    },
    {
      name: 'quiesce starts nothing',
      run: () => {
        const d = new Drain().observe(anObservation().pods(aPod('app/a')));
        return { d, dec: d.decide(true) };
      },
      evict: [],
      phase: 'Draining',
    },
    {
      name: 'every remaining pod blocked: Blocked/PodsNotEvictable, which is not an end',
      run: () => {
        const d = new Drain().observe(
          anObservation().pods(aPod('app/a').blocked(), aPod('app/b').withPdb('app/p', 'app/q')),
        );
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Blocked',
      reason: 'PodsNotEvictable',
      wakeAtMs: DEADLINE,
    },
    {
      name: 'back to Draining when a blocker clears',
      run: () => {
        const d = new Drain().observe(anObservation().pods(aPod('app/a').blocked(), aPod('app/b').blocked()));
        assert.equal(d.decide().reason, 'PodsNotEvictable');
        d.observe(anObservation().pods(aPod('app/a'), aPod('app/b').blocked()));
        return { d, dec: d.decide() };
      },
      evict: ['app/a'],
      phase: 'Draining',
      reason: 'Draining',
    },
    {
      name: 'a blocked pod next to a terminating one: Draining (not every pod is blocked)',
      run: () => {
        const d = new Drain().observe(
          anObservation().pods(aPod('app/a').blocked(), aPod('app/b').terminating()),
        );
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Draining',
    },
    {
      name: 'wakeAtMs is the earliest of cooldown ends, probe bounds and the deadline: a cooldown',
      run: () => {
        const d = evicting({ allowed: 1, more: [aPod('app/b'), aPod('app/c')] });
        d.answer('app/a', pdbRefusal()); // probe bound NOW + 5 s
        d.evicts();
        d.answer('app/b', throttled(3)).answer('app/c', failed(403, 'Forbidden')); // 3 s, 5 s
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Draining',
      wakeAtMs: NOW + 3 * S,
    },
    {
      name: 'wakeAtMs: a probe bound',
      run: () => {
        const d = evicting({ allowed: 1, more: [aPod('app/b')] });
        d.answer('app/a', pdbRefusal());
        d.evicts();
        d.answer('app/b', throttled(30));
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Draining',
      wakeAtMs: NOW + 5 * S,
    },
    {
      name: 'wakeAtMs: the deadline when it comes first',
      run: () => {
        const d = new Drain({ deadlineMs: NOW + 2 * S }).observe(anObservation().pods(aPod('app/a')));
        d.evicts();
        d.answer('app/a', throttled(30));
        return { d, dec: d.decide() };
      },
      evict: [],
      phase: 'Draining',
      wakeAtMs: NOW + 2 * S,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { d, dec } = c.run();
      if (c.evict)
        assert.deepEqual(
          dec.evict.map((u) => d.s.pods[u]!.key),
          c.evict,
        );
      assert.equal(dec.phase, c.phase);
      assert.equal(d.s.phase, c.phase, 'the phase is written into the state');
      if (c.reason) assert.equal(dec.reason, c.reason);
      assert.equal(dec.outcome ? `${dec.outcome.phase}/${dec.outcome.reason}` : undefined, c.outcome);
      if (c.wakeAtMs !== undefined) assert.equal(dec.wakeAtMs, c.wakeAtMs);
    });
  }

  it('an eviction it starts marks the pod Evicting and counts the attempt', () => {
    const d = new Drain().observe(anObservation().pods(aPod('app/a')));
    d.evicts();
    const p = d.pod('app/a')!;
    assert.deepEqual([p.state, p.attempts, p.checkAfterSeq, d.s.attempts], ['Evicting', 1, undefined, 1]);
  });
});

describe('nodeBlockers', () => {
  const cases: { name: string; run: () => Drain; blockers: object[] }[] = [
    {
      name: 'a pod refused by the server, with reason, PDB, since and attempts',
      run: () => evicting({ allowed: 1 }).answer('app/a', pdbRefusal()),
      blockers: [
        {
          pod: 'app/a',
          pdb: 'app/p',
          reason: 'DisruptionBudget',
          message: 'Cannot evict pod as it would violate the pod disruption budget.',
          since: new Date(NOW).toISOString(),
          attempts: 1,
        },
      ],
    },
    {
      name: 'a pod blocked by a rule',
      run: () => new Drain().observe(anObservation().pods(aPod('app/a').blocked())),
      blockers: [
        {
          pod: 'app/a',
          reason: 'NoController',
          message: 'pod has no controller',
          since: new Date(NOW).toISOString(),
          attempts: 0,
        },
      ],
    },
    {
      name: 'a pod waiting for its PDB (no attempt yet)',
      run: () =>
        new Drain().observe(
          anObservation().pods(aPod('app/a').withPdb('app/p'), aPod('app/b')).pdb('app/p', 0),
        ),
      blockers: [
        {
          pod: 'app/a',
          pdb: 'app/p',
          reason: 'DisruptionBudget',
          message: 'waiting for PodDisruptionBudget app/p to allow a disruption',
          attempts: 0,
        },
      ],
    },
    {
      name: 'nothing for pods that may go, are in flight or terminate before the deadline',
      run: () => {
        const d = evicting({ more: [aPod('app/b').terminating(), aPod('app/c').withPdb('app/p')] });
        d.observe(
          anObservation()
            .pods(aPod('app/a'), aPod('app/b').terminating(), aPod('app/c').withPdb('app/p'))
            .pdb('app/p', 1),
        );
        return d;
      },
      blockers: [],
    },
    {
      name: 'at the deadline: NotEvicted and Terminating',
      run: () =>
        new Drain({ deadlineMs: NOW })
          .observe(
            anObservation().pods(aPod('app/a').withPdb('app/p'), aPod('app/b').terminating()).pdb('app/p', 1),
          )
          .at(NOW),
      blockers: [
        {
          pod: 'app/a',
          pdb: 'app/p',
          reason: 'NotEvicted',
          message: 'pod was not evicted before the deadline',
          attempts: 0,
        },
        { pod: 'app/b', reason: 'Terminating', message: 'pod is still terminating', attempts: 0 },
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = c.run();
      assert.deepEqual(nodeBlockers(d.s, d.now), c.blockers);
    });
  }
  it('sorted by pod and capped at 20', () => {
    const keys = Array.from({ length: 25 }, (_, i) => `app/p${String(24 - i).padStart(2, '0')}`);
    const d = new Drain().observe(anObservation().pods(...keys.map((k) => aPod(k).blocked())));
    const got = nodeBlockers(d.s, d.now).map((b) => b.pod);
    assert.equal(got.length, 20);
    assert.deepEqual(got, [...keys].sort().slice(0, 20));
  });
});

describe('nextActionAt', () => {
  it('is the earliest future cooldown end of pending and blocked pods and PDB refusals', () => {
    const d = evicting({ allowed: 1, more: [aPod('app/b'), aPod('app/c'), aPod('app/d')] });
    d.evicts();
    d.answer('app/b', throttled(3)).answer('app/c', failed(403, 'Forbidden')).answer('app/d', evicted);
    assert.equal(nextActionAt(d.s, d.now), NOW + 3 * S);
    d.answer('app/a', pdbRefusal({ retryAfterSeconds: 60 }));
    assert.equal(
      nextActionAt(d.s, NOW + 3 * S),
      NOW + 5 * S,
      'a past end does not count; the 403 backoff and the probe bound do',
    );
    assert.equal(nextActionAt(d.s, NOW + 5 * S), NOW + 60 * S);
  });
  it('is absent when nothing cools down', () => {
    const d = evicting({ more: [aPod('app/b').blocked()] });
    assert.equal(nextActionAt(d.s, d.now), undefined);
    d.answer('app/a', throttled(3)).answer('app/a', evicted); // a Terminating pod's old cooldown
    assert.equal(nextActionAt(d.s, d.now), undefined);
  });
});
