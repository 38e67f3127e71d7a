/**
 * Table tests of the node's report (src/drain/node/report.ts): `nodeCounts` (total, evicted,
 * failed, deleted, gone without eviction; a node deleted mid-drain; an aborted node counts its
 * evicted pods still terminating as evicted). No Temporal, no I/O.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodePhase } from '../../src/api/reasons.js';
import type { EvictResult } from '../../src/contract/eviction.js';
import type { ObservedPod } from '../../src/contract/observation.js';
import { applyEvictionAnswer } from '../../src/drain/node/answers.js';
import { applyControl } from '../../src/drain/node/controls.js';
import { decideNode } from '../../src/drain/node/decide.js';
import { applyObservation } from '../../src/drain/node/observation.js';
import { nodeCounts, terminatingEvicted } from '../../src/drain/node/report.js';
import {
  initialNodeState,
  type EvictionCallFailure,
  type NodeDrainSettings,
  type NodeDrainState,
} from '../../src/drain/node/state.js';
import { goneMessage } from '../../src/drain/node/words.js';
import {
  anObservation,
  aPod,
  BACKOFF,
  callFailed,
  DEADLINE,
  Drain,
  evicted,
  NOW,
  S,
  failed,
  gone,
  retry,
  throttled,
} from '../helpers/node-drain-fixtures.js';
import { BACKOFF as PDB_BACKOFF, observed, pdbPod } from '../helpers/pdb-fixtures.js';

describe('nodeCounts', () => {
  it('total = gone + tracked, evicted = gone by this drain, failed = Blocked', () => {
    const d = new Drain().observe(
      anObservation().pods(
        aPod('app/a'),
        aPod('app/b').blocked(),
        aPod('app/c').terminating(),
        aPod('app/d'),
        aPod('app/e'),
      ),
    );
    d.evicts();
    // a: the server answers 404, gone before the eviction: not evicted by this drain.
    d.answer('app/a', gone).answer('app/d', failed(403, 'Forbidden'));
    assert.deepEqual(nodeCounts(d.s), {
      podsTotal: 5,
      podsEvicted: 0,
      podsFailed: 2,
      podsGoneWithoutEviction: 1,
    });
    // c (terminating before the drain) goes: gone without eviction; e goes while its call is in
    // flight: counted as this drain's eviction.
    d.observe(anObservation().pods(aPod('app/b').blocked(), aPod('app/d')));
    assert.deepEqual(nodeCounts(d.s), {
      podsTotal: 5,
      podsEvicted: 1,
      podsFailed: 2,
      podsGoneWithoutEviction: 2,
    });
  });
  it('a pod whose eviction call timed out and that then goes counts as evicted (the call may have taken effect)', () => {
    const d = new Drain().observe(anObservation().pods(aPod('app/a'), aPod('app/b')));
    d.evicts();
    d.answer('app/a', callFailed()).answer('app/b', callFailed());
    // a: seen terminating after the timed-out call, then gone; b: a later 429 says the pod is
    // still there (the call did not take effect), then someone else deletes it.
    d.observe(anObservation().pods(aPod('app/a').terminating(), aPod('app/b')));
    d.evicts();
    d.answer('app/b', throttled(1));
    d.observe(anObservation().pods());
    assert.deepEqual(nodeCounts(d.s), {
      podsTotal: 2,
      podsEvicted: 1,
      podsFailed: 0,
      podsGoneWithoutEviction: 1,
    });
  });
  describe('a pod seen terminating while its call is in flight, gone after the answer', () => {
    const cases: {
      name: string;
      answer: EvictResult | EvictionCallFailure;
      evicted: number;
    }[] = [
      // A refusal says the call evicted nothing: someone else (a namespace deletion) did.
      {
        name: '403 NamespaceTerminating',
        answer: retry('NamespaceTerminating'),
        evicted: 0,
      },
      { name: '409 Conflict', answer: retry('Conflict'), evicted: 0 },
      { name: '429', answer: throttled(5), evicted: 0 },
      { name: '403 Forbidden', answer: failed(403, 'Forbidden'), evicted: 0 },
      // No answer: the call may have taken effect.
      { name: 'call timed out', answer: callFailed(), evicted: 1 },
      {
        name: 'call cancelled',
        answer: callFailed({ cancelled: true }),
        evicted: 1,
      },
    ];
    for (const c of cases) {
      it(`${c.name}: counted ${c.evicted ? 'evicted' : 'gone without eviction'}`, () => {
        const d = new Drain();
        d.observe(anObservation().pods(aPod('app/a')));
        assert.deepEqual(d.evicts(), ['app/a']);
        d.observe(anObservation().pods(aPod('app/a').terminating()));
        d.answer('app/a', c.answer);
        assert.deepEqual(d.states(), ['app/a Terminating'], 'waited for, not evicted again');
        assert.deepEqual(d.evicts(), []);
        d.observe(anObservation().pods());
        const counts = nodeCounts(d.s);
        assert.equal(counts.podsEvicted, c.evicted);
        assert.equal(counts.podsGoneWithoutEviction ?? 0, 1 - c.evicted);
      });
    }
  });
  it('pods deleted by someone else are counted and said apart from evictions (goneMessage)', () => {
    // Six pods; three evicted by the drain (201), three deleted by someone else before their call.
    const keys = ['app/a', 'app/b', 'app/c', 'app/d', 'app/e', 'app/f'];
    const d = new Drain();
    d.settings = { maxConcurrentPerNode: 3, retryBackoff: BACKOFF };
    d.observe(anObservation().pods(...keys.map((k) => aPod(k))));
    d.evicts();
    const inFlight = Object.values(d.s.pods)
      .filter((p) => p.state === 'Evicting')
      .map((p) => p.key);
    assert.equal(inFlight.length, 3);
    for (const k of inFlight) d.answer(k, evicted);
    d.observe(anObservation().pods()); // all six gone
    assert.deepEqual(nodeCounts(d.s), {
      podsTotal: 6,
      podsEvicted: 3,
      podsFailed: 0,
      podsGoneWithoutEviction: 3,
    });
    assert.equal(
      goneMessage(d.s),
      '3 pod(s) evicted, 3 gone without eviction (deleted by someone else, finished or already terminating)',
    );
    assert.equal(d.s.attempts, 3, 'three eviction calls');
  });
  it('a node deleted mid-drain keeps its pods counted: evicted, and gone without eviction with the node', () => {
    // Four pods: a evicted and gone, b evicted and still terminating, c and d never evicted.
    const d = new Drain();
    d.settings = { maxConcurrentPerNode: 2, retryBackoff: BACKOFF };
    d.observe(anObservation().pods(aPod('app/a'), aPod('app/b'), aPod('app/c'), aPod('app/d')));
    assert.deepEqual(d.evicts(), ['app/a', 'app/b']);
    d.answer('app/a', evicted).answer('app/b', evicted);
    d.observe(anObservation().pods(aPod('app/b').terminating(), aPod('app/c'), aPod('app/d')));
    d.observe(anObservation().node({ exists: false }));
    const dec = d.decide();
    assert.equal(dec.outcome?.phase, 'Deleted');
    assert.equal(
      dec.outcome?.message,
      'node node-1 was deleted during the drain: 2 pod(s) evicted, 2 never evicted went with the node',
    );
    assert.deepEqual(nodeCounts(d.s), {
      podsTotal: 4,
      podsEvicted: 2,
      podsFailed: 0,
      podsGoneWithoutEviction: 2,
    });
  });
  it('is all zero for a fresh state', () => {
    assert.deepEqual(nodeCounts(initialNodeState('n', DEADLINE, false)), {
      podsTotal: 0,
      podsEvicted: 0,
      podsFailed: 0,
    });
  });
});

describe('nodeCounts of an aborted node', () => {
  // Tables of an aborted node's final counts (src/drain/node-drain.ts, `nodeCounts`,
  // `terminatingEvicted`): a node that ends Aborted counts as evicted the pods this drain evicted
  // (201, or a call without an answer while the pod was seen terminating) that are still terminating;
  // not pods someone else terminated, not a running node's counts.
  // Node n1 holds web-0 (free) and db-0, db-1, db-2 behind PDB app/db, which allows no disruption.
  const BACKOFF = PDB_BACKOFF;

  const SETTINGS: NodeDrainSettings = {
    maxConcurrentPerNode: 4,
    retryBackoff: BACKOFF,
  };

  /** web-0, evictable; `terminating`: shown terminating (action Wait). */
  const web = (terminating = false): ObservedPod => ({
    ...pdbPod('web-0', ''),
    pdbs: [],
    ...(terminating
      ? { action: 'Wait', reason: 'Terminating', message: 'pod is terminating', deletionTimestampMs: NOW }
      : {}),
  });
  const dbs = ['db-0', 'db-1', 'db-2'].map((n) => pdbPod(n, 'app/db'));
  const PDB = [{ key: 'app/db', disruptionsAllowed: 0 }];

  /** The node after its first observation, with web-0's eviction call sent (in flight). */
  function evicting(): NodeDrainState {
    const s = initialNodeState('n1', NOW + 3600 * S, false);
    s.claimed = true;
    s.cordonedByPlan = true;
    s.observeSeq = 1;
    applyObservation(s, observed([web(), ...dbs], PDB), 1, NOW);
    assert.deepEqual(decideNode(s, NOW, SETTINGS).evict, ['uid-web-0']);
    return s;
  }

  const cancelled: EvictionCallFailure = {
    outcome: 'CallFailed',
    timedOut: false,
    cancelled: true,
    message: 'eviction of app/web-0 failed: cancelled',
  };
  const refused: EvictResult = {
    outcome: 'Retry',
    code: 403,
    reason: 'NamespaceTerminating',
    message: 'namespace app is being terminated',
  };

  interface Row {
    name: string;
    /** What happens to web-0 before the abort. */
    before: (s: NodeDrainState) => void;
    /** The node decides after the abort (and ends Aborted); false: it is still running. */
    abort?: boolean;
    terminating: number;
    podsEvicted: number;
    gone?: number;
  }

  const answered = (s: NodeDrainState, a: EvictResult | EvictionCallFailure) =>
    applyEvictionAnswer(s, 'uid-web-0', a, NOW + S, BACKOFF);
  /** An observation (seq 2) showing web-0 terminating while its call is in flight. */
  const seenTerminating = (s: NodeDrainState) => {
    s.observeSeq = 2;
    applyObservation(s, observed([web(true), ...dbs], PDB), 2, NOW + S);
  };

  const rows: Row[] = [
    {
      name: '201, still terminating at the abort: evicted',
      before: (s) => answered(s, { outcome: 'Evicted' }),
      terminating: 1,
      podsEvicted: 1,
    },
    {
      name: '201, then seen gone before the abort: evicted once, not twice',
      before: (s) => {
        answered(s, { outcome: 'Evicted' });
        s.observeSeq = 2;
        applyObservation(s, observed(dbs, PDB), 2, NOW + 2 * S);
      },
      terminating: 0,
      podsEvicted: 1,
    },
    {
      name: 'seen terminating while the call was in flight, the call cancelled by the abort: evicted (the call may have done it)',
      before: (s) => {
        seenTerminating(s);
        applyControl(s, 'abort');
        answered(s, cancelled);
      },
      terminating: 1,
      podsEvicted: 1,
    },
    {
      name: 'seen terminating while the call was in flight, the call refused (403): not this drain’s eviction',
      before: (s) => {
        seenTerminating(s);
        answered(s, refused);
      },
      terminating: 0,
      podsEvicted: 0,
    },
    {
      name: '201, still terminating, the node still running (no abort): running counts unchanged',
      before: (s) => answered(s, { outcome: 'Evicted' }),
      abort: false,
      terminating: 1,
      podsEvicted: 0,
    },
  ];

  describe('an aborted node counts its evicted pods still terminating as evicted', () => {
    for (const row of rows)
      it(row.name, () => {
        const s = evicting();
        row.before(s);
        assert.equal(terminatingEvicted(s), row.terminating, 'terminatingEvicted');
        if (row.abort !== false) {
          applyControl(s, 'abort');
          const d = decideNode(s, NOW + 3 * S, SETTINGS);
          assert.equal(d.outcome?.phase, NodePhase.Aborted, 'the node ends Aborted');
        }
        const counts = nodeCounts(s);
        assert.equal(counts.podsEvicted, row.podsEvicted, 'podsEvicted');
        assert.equal(counts.podsTotal, 4, 'podsTotal: the pods that left and those still on the node');
        assert.equal(counts.podsFailed, 0, 'podsFailed');
      });

    it('a pod found terminating before any call (someone else deleted it) is not counted', () => {
      const s = initialNodeState('n1', NOW + 3600 * S, false);
      s.claimed = true;
      s.observeSeq = 1;
      applyObservation(s, observed([web(true), ...dbs], PDB), 1, NOW);
      assert.equal(terminatingEvicted(s), 0);
      applyControl(s, 'abort');
      assert.equal(decideNode(s, NOW, SETTINGS).outcome?.phase, NodePhase.Aborted);
      assert.equal(nodeCounts(s).podsEvicted, 0);
    });

    it('a pod deleted at the deadline and still terminating counts in podsDeleted, not as evicted', () => {
      const s = evicting();
      answered(s, { outcome: 'Evicted' });
      const p = s.pods['uid-web-0']!;
      p.evicted = undefined;
      p.deleted = true;
      s.podsDeleted = 1;
      assert.equal(terminatingEvicted(s), 0);
    });
  });
});
