/**
 * Tables of an aborted node's final counts (src/drain/node-drain.ts, `nodeCounts`,
 * `terminatingEvicted`): a node that ends Aborted counts as evicted the pods this drain evicted
 * (201, or a call without an answer while the pod was seen terminating) that are still terminating;
 * not pods someone else terminated, not a running node's counts.
 * Node n1 holds web-0 (free) and db-0, db-1, db-2 behind PDB app/db, which allows no disruption.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EvictResult } from '../../src/contract/eviction.js';
import type { ObservedPod } from '../../src/contract/observation.js';
import { NodePhase } from '../../src/api/reasons.js';
import {
  applyControl,
  applyEvictionAnswer,
  applyObservation,
  decideNode,
  initialNodeState,
  nodeCounts,
  terminatingEvicted,
  type EvictionCallFailure,
  type NodeDrainSettings,
  type NodeDrainState,
} from '../../src/drain/node-drain.js';
import { BACKOFF, NOW, observed, pdbPod } from '../helpers/pdb-fixtures.js';

const S = 1000;

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
