/**
 * Table tests of the node drain's pure reducers (src/drain/node-drain.ts): adopting observations,
 * eviction answers, the decision, blockers, counts. No Temporal, no I/O: a small harness plays the
 * node workflow's part (an observation gets `++observeSeq` when it starts, answers see `observeSeq`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EvictResult } from '../../src/contract/eviction.js';
import type { NodeObservation, ObservedPod } from '../../src/contract/observation.js';
import {
  goneMessage,
  applyControl,
  applyEvictionAnswer,
  applyObservation,
  applyUnchangedObservation,
  hasUnconfirmedEvictions,
  decideNode,
  initialNodeState,
  nextActionAt,
  nodeBlockers,
  nodeCounts,
  replacingUid,
  type EvictionCallFailure,
  type NodeDecision,
  type NodeDrainSettings,
  type NodeDrainState,
  type PodRecord,
} from '../../src/drain/node-drain.js';

const NOW = 1_700_000_000_000;
const S = 1000;
const DEADLINE = NOW + 3600 * S;
const BACKOFF = { initialSeconds: 5, maxSeconds: 120 };
const SETTINGS: NodeDrainSettings = { maxConcurrentPerNode: 4, retryBackoff: BACKOFF };
const uidOf = (key: string) => `uid-${key}`;

// ---- fixture builders ----

class PodBuilder {
  readonly item: ObservedPod;
  constructor(key: string) {
    const [namespace, name] = key.split('/') as [string, string];
    this.item = {
      key,
      namespace,
      name,
      uid: uidOf(key),
      action: 'Evict',
      reason: 'Evictable',
      message: '',
      pdbs: [],
    };
  }
  withPdb(...keys: string[]): this {
    this.item.pdbs.push(...keys);
    return this;
  }
  blocked(reason = 'NoController', message = 'pod has no controller'): this {
    Object.assign(this.item, { action: 'Block', reason, message });
    return this;
  }
  terminating(): this {
    Object.assign(this.item, {
      action: 'Wait',
      reason: 'Terminating',
      message: 'pod is terminating',
      deletionTimestampMs: NOW,
    });
    return this;
  }
  skipped(reason = 'DaemonSetPod'): this {
    Object.assign(this.item, { action: 'Skip', reason, message: 'left alone' });
    return this;
  }
}
const aPod = (key: string) => new PodBuilder(key);

type ChangedObservation = Extract<NodeObservation, { changed: true }>;
class ObservationBuilder {
  private nodeView: { exists: boolean; unschedulable: boolean; uid?: string } = {
    exists: true,
    unschedulable: true,
  };
  private items: ObservedPod[] = [];
  private budgets: { key: string; disruptionsAllowed: number }[] = [];
  node(v: Partial<{ exists: boolean; unschedulable: boolean; uid: string }>): this {
    this.nodeView = { ...this.nodeView, ...v };
    return this;
  }
  pods(...ps: PodBuilder[]): this {
    this.items.push(...ps.map((p) => ({ ...p.item, pdbs: [...p.item.pdbs] })));
    return this;
  }
  pdb(key: string, disruptionsAllowed: number): this {
    this.budgets.push({ key, disruptionsAllowed });
    return this;
  }
  build(): ChangedObservation {
    const exists = this.nodeView.exists;
    const pods = exists ? [...this.items].sort((a, b) => (a.key < b.key ? -1 : 1)) : [];
    return {
      changed: true,
      fingerprint: JSON.stringify([this.nodeView, pods, this.budgets]),
      node: { ...this.nodeView },
      pods,
      pdbs: exists ? [...this.budgets] : [],
    };
  }
}
const anObservation = () => new ObservationBuilder();

const evicted: EvictResult = { outcome: 'Evicted' };
const gone: EvictResult = { outcome: 'Gone' };
const pdbRefusal = (o: { pdb?: string; retryAfterSeconds?: number } = {}): EvictResult => ({
  outcome: 'TooManyRequests',
  cause: 'DisruptionBudget',
  message: 'Cannot evict pod as it would violate the pod disruption budget.',
  ...o,
});
const throttled = (retryAfterSeconds?: number): EvictResult => ({
  outcome: 'TooManyRequests',
  cause: 'Throttled',
  message: 'Too many requests, please try again later.',
  ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
});
const retry = (reason: 'Conflict' | 'NamespaceTerminating'): EvictResult => ({
  outcome: 'Retry',
  code: reason === 'Conflict' ? 409 : 403,
  reason,
  message: `${reason} answer`,
});
const failed = (code: number, reason: string): EvictResult => ({
  outcome: 'Failed',
  code,
  reason,
  message: `${reason} answer`,
});
const callFailed = (o: Partial<EvictionCallFailure> = {}): EvictionCallFailure => ({
  outcome: 'CallFailed',
  timedOut: true,
  message: 'eviction timed out',
  ...o,
});

/** Plays the node workflow's part around one {@link NodeDrainState}. */
class Drain {
  readonly s: NodeDrainState;
  now = NOW;
  settings: NodeDrainSettings = SETTINGS;
  constructor(o: { deadlineMs?: number; paused?: boolean } = {}) {
    this.s = initialNodeState('node-1', o.deadlineMs ?? DEADLINE, o.paused ?? false);
  }
  /** An observation that starts now and is applied at once. */
  observe(b: ObservationBuilder): this {
    return this.applyObserved(b, this.startObserve());
  }
  /** Starts an observation (its answer is applied later with {@link applyObserved}). */
  startObserve(): number {
    return ++this.s.observeSeq;
  }
  applyObserved(b: ObservationBuilder, seq: number): this {
    applyObservation(this.s, b.build(), seq, this.now);
    return this;
  }
  decide(quiesce = false): NodeDecision {
    return decideNode(this.s, this.now, this.settings, quiesce);
  }
  /** Decides and returns the pod keys to evict. */
  evicts(quiesce = false): string[] {
    return this.decide(quiesce).evict.map((u) => this.s.pods[u]!.key);
  }
  answer(key: string, a: EvictResult | EvictionCallFailure): this {
    applyEvictionAnswer(this.s, uidOf(key), a, this.now, BACKOFF);
    return this;
  }
  at(ms: number): this {
    this.now = ms;
    return this;
  }
  pod(key: string): PodRecord | undefined {
    return this.s.pods[uidOf(key)];
  }
  /** `key state[ reason]` of every tracked pod, in key order. */
  states(): string[] {
    return Object.values(this.s.pods)
      .sort((a, b) => (a.key < b.key ? -1 : 1))
      .map((p) => `${p.key} ${p.state}${p.reason ? ` ${p.reason}` : ''}`);
  }
}

// ---- applyObservation ----

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

// ---- applyEvictionAnswer ----

/** One pod `app/a` (behind PDB `app/p` allowing `allowed`, when given) whose eviction is in flight. */
function evicting(o: { allowed?: number; more?: PodBuilder[] } = {}): Drain {
  const obs = anObservation();
  if (o.allowed !== undefined) obs.pods(aPod('app/a').withPdb('app/p')).pdb('app/p', o.allowed);
  else obs.pods(aPod('app/a'));
  obs.pods(...(o.more ?? []));
  const d = new Drain().observe(obs);
  d.settings = { ...SETTINGS, maxConcurrentPerNode: 1 };
  assert.deepEqual(d.evicts(), ['app/a']);
  d.settings = SETTINGS;
  return d;
}
/** The same observation as {@link evicting} with `allowed` for `app/p` and `app/b` behind it too. */
const twoBehindPdb = (allowed: number, o: { aGone?: boolean } = {}) =>
  anObservation()
    .pods(...(o.aGone ? [] : [aPod('app/a').withPdb('app/p')]), aPod('app/b').withPdb('app/p'))
    .pdb('app/p', allowed);

describe('applyEvictionAnswer', () => {
  const cases: {
    name: string;
    run: () => Drain;
    /** `key state[ reason]` of `app/a` (absent: gone). */
    a?: string;
    notBeforeMs?: number;
    check?: (d: Drain) => void;
  }[] = [
    {
      name: 'Evicted: Terminating, refusal cleared',
      run: () => {
        const d = evicting()
          .answer('app/a', throttled(3))
          .at(NOW + 3 * S);
        assert.deepEqual(d.evicts(), ['app/a']);
        return d.answer('app/a', evicted);
      },
      a: 'app/a Terminating',
      check: (d) => {
        const p = d.pod('app/a')!;
        assert.equal(p.evicted, true);
        assert.equal(p.refusals, 0);
        assert.equal(p.blockedSinceMs, undefined);
      },
    },
    {
      name: 'Evicted: the disruption is spent until an observation started after the answer',
      run: () => {
        const d = new Drain().observe(twoBehindPdb(1));
        assert.deepEqual(d.evicts(), ['app/a']);
        const before = d.startObserve(); // started before the answer: may not count the eviction yet
        d.answer('app/a', evicted);
        assert.deepEqual(d.s.pdbs['app/p']!.spentAtSeq, [before]);
        d.applyObserved(twoBehindPdb(1), before);
        assert.deepEqual(d.evicts(), [], 'stale allowance 1 minus 1 spent');
        d.observe(twoBehindPdb(1)); // started after the answer: the spend is in its allowance
        assert.deepEqual(d.s.pdbs['app/p']!.spentAtSeq, []);
        assert.deepEqual(d.evicts(), ['app/b']);
        return d;
      },
      a: 'app/a Terminating',
    },
    {
      name: 'Gone (404): dropped and counted, as gone without eviction',
      run: () => evicting().answer('app/a', gone),
      check: (d) => {
        assert.equal(d.s.podsGone, 1);
        assert.deepEqual(nodeCounts(d.s), {
          podsTotal: 1,
          podsEvicted: 0,
          podsFailed: 0,
          podsGoneWithoutEviction: 1,
        });
      },
    },
    {
      name: '429 DisruptionBudget, known PDB: the budget is 0 until the probe bound; the pod itself is not cooled down',
      run: () => evicting({ allowed: 1 }).answer('app/a', pdbRefusal()),
      a: 'app/a Pending DisruptionBudget',
      notBeforeMs: NOW,
      check: (d) => {
        assert.deepEqual(d.s.pdbs['app/p'], {
          key: 'app/p',
          observedAllowed: 1,
          spentAtSeq: [],
          refusedAllowed: 1,
          refusedUntilMs: NOW + 5 * S,
          refusalRounds: 1,
        });
        assert.equal(d.pod('app/a')!.blockingPdb, 'app/p');
        assert.equal(d.s.tooManyRequests, 1);
        const dec = d.decide();
        assert.deepEqual(dec.evict, [], 'never a blind per-pod retry');
        assert.equal(dec.wakeAtMs, NOW + 5 * S);
        assert.deepEqual(d.at(NOW + 4999).evicts(), []);
        assert.deepEqual(d.at(NOW + 5 * S).evicts(), ['app/a'], 'the probe');
      },
    },
    {
      name: '429 DisruptionBudget: the refusal stays while observations show the same allowance',
      run: () => {
        const d = evicting({ allowed: 1, more: [aPod('app/b').withPdb('app/p')] }).answer(
          'app/a',
          pdbRefusal(),
        );
        d.at(NOW + S).observe(twoBehindPdb(1));
        assert.equal(d.s.pdbs['app/p']!.refusedUntilMs, NOW + 5 * S);
        assert.deepEqual(d.evicts(), []);
        return d;
      },
      a: 'app/a Pending DisruptionBudget',
    },
    {
      name: '429 DisruptionBudget: an observation with another allowance lifts the refusal',
      run: () => {
        const d = evicting({ allowed: 1, more: [aPod('app/b').withPdb('app/p')] }).answer(
          'app/a',
          pdbRefusal(),
        );
        d.at(NOW + S).observe(twoBehindPdb(2));
        const p = d.s.pdbs['app/p']!;
        assert.deepEqual([p.refusedAllowed, p.refusedUntilMs, p.refusalRounds], [undefined, undefined, 0]);
        assert.deepEqual(d.evicts(), ['app/a', 'app/b']);
        return d;
      },
      a: 'app/a Evicting DisruptionBudget',
    },
    {
      name: '429 DisruptionBudget: after the probe bound exactly one pod probes, and no second one before an observation',
      run: () => {
        const d = evicting({ allowed: 2, more: [aPod('app/b').withPdb('app/p')] }).answer(
          'app/a',
          pdbRefusal(),
        );
        assert.deepEqual(d.at(NOW + 5 * S).evicts(), ['app/a']);
        d.answer('app/a', evicted);
        assert.deepEqual(d.evicts(), [], 'the probe spent the one disruption it may take');
        d.observe(twoBehindPdb(2));
        assert.deepEqual(d.evicts(), ['app/b'], 'an observation after the probe frees the next probe');
        return d;
      },
      a: 'app/a Terminating',
    },
    {
      name: '429 DisruptionBudget twice without a change: the probe bound backs off (5 s, then 10 s)',
      run: () => {
        const d = evicting({ allowed: 1 }).answer('app/a', pdbRefusal());
        assert.deepEqual(d.at(NOW + 5 * S).evicts(), ['app/a']);
        d.answer('app/a', pdbRefusal());
        assert.equal(d.s.pdbs['app/p']!.refusalRounds, 2);
        assert.equal(d.s.pdbs['app/p']!.refusedUntilMs, NOW + 15 * S);
        return d;
      },
      a: 'app/a Pending DisruptionBudget',
    },
    {
      name: '429 DisruptionBudget with Retry-After 10 (PDB not processed yet): notBefore = now + 10 s',
      run: () => evicting({ allowed: 1 }).answer('app/a', pdbRefusal({ retryAfterSeconds: 10 })),
      a: 'app/a Pending DisruptionBudget',
      notBeforeMs: NOW + 10 * S,
    },
    {
      name: '429 DisruptionBudget naming a PDB this drain does not know: the backoff, never 0 s',
      run: () => evicting({ allowed: 1 }).answer('app/a', pdbRefusal({ pdb: 'other/unknown' })),
      a: 'app/a Pending DisruptionBudget',
      notBeforeMs: NOW + 5 * S,
      check: (d) => {
        assert.equal(d.pod('app/a')!.blockingPdb, 'other/unknown');
        assert.equal(d.s.pdbs['app/p']!.refusedUntilMs, undefined);
      },
    },
    {
      name: '429 DisruptionBudget for a pod without a PDB: the backoff',
      run: () => evicting().answer('app/a', pdbRefusal({ retryAfterSeconds: 0 })),
      a: 'app/a Pending DisruptionBudget',
      notBeforeMs: NOW + 5 * S,
    },
    {
      name: '429 Throttled with Retry-After 3: that',
      run: () => evicting().answer('app/a', throttled(3)),
      a: 'app/a Pending TooManyRequests',
      notBeforeMs: NOW + 3 * S,
      check: (d) => {
        assert.equal(d.s.tooManyRequests, 1);
        assert.match(d.s.lastError!, /Too many requests/);
      },
    },
    {
      name: '429 Throttled with Retry-After 0: the backoff, never 0 s',
      run: () => evicting().answer('app/a', throttled(0)),
      a: 'app/a Pending TooManyRequests',
      notBeforeMs: NOW + 5 * S,
    },
    {
      name: '429 Throttled without Retry-After, twice: 5 s, then 10 s',
      run: () => {
        const d = evicting().answer('app/a', throttled());
        assert.equal(d.pod('app/a')!.notBeforeMs, NOW + 5 * S);
        assert.deepEqual(d.at(NOW + 5 * S).evicts(), ['app/a']);
        return d.answer('app/a', throttled());
      },
      a: 'app/a Pending TooManyRequests',
      notBeforeMs: NOW + 15 * S,
      check: (d) => {
        assert.equal(d.pod('app/a')!.refusals, 2);
        assert.equal(d.pod('app/a')!.blockedSinceMs, NOW, 'since the first refusal');
      },
    },
    {
      name: 'Retry Conflict: retried after the backoff',
      run: () => evicting().answer('app/a', retry('Conflict')),
      a: 'app/a Pending Conflict',
      notBeforeMs: NOW + 5 * S,
      check: (d) => assert.equal(d.s.lastError, 'Conflict answer'),
    },
    {
      name: 'Retry NamespaceTerminating: retried after the backoff',
      run: () => evicting().answer('app/a', retry('NamespaceTerminating')),
      a: 'app/a Pending NamespaceTerminating',
      notBeforeMs: NOW + 5 * S,
    },
    {
      name: 'Failed MultiplePodDisruptionBudgets: rule-blocked, no retry until an observation changes it',
      run: () => {
        const d = evicting({ allowed: 1 }).answer('app/a', failed(500, 'MultiplePodDisruptionBudgets'));
        assert.equal(d.pod('app/a')!.ruleBlocked, true);
        const dec = d.at(NOW + 3600 * S - 1).decide();
        assert.deepEqual(dec.evict, []);
        assert.equal(dec.reason, 'PodsNotEvictable');
        assert.equal(nextActionAt(d.s, d.now), undefined);
        d.observe(anObservation().pods(aPod('app/a').withPdb('app/p')).pdb('app/p', 1));
        assert.deepEqual(d.evicts(), ['app/a']);
        return d;
      },
      a: 'app/a Evicting',
    },
    {
      name: 'Failed 403: Blocked, retried after the backoff',
      run: () => {
        const d = evicting().answer('app/a', failed(403, 'Forbidden'));
        assert.deepEqual(d.states(), ['app/a Blocked Forbidden']);
        assert.equal(d.pod('app/a')!.ruleBlocked, false);
        const dec = d.at(NOW + 4999).decide();
        assert.deepEqual(dec.evict, []);
        assert.equal(dec.wakeAtMs, NOW + 5 * S);
        assert.equal(dec.reason, 'PodsNotEvictable');
        assert.deepEqual(d.at(NOW + 5 * S).evicts(), ['app/a']);
        return d.answer('app/a', failed(403, 'Forbidden'));
      },
      a: 'app/a Blocked Forbidden',
      notBeforeMs: NOW + 15 * S,
      check: (d) => assert.equal(d.pod('app/a')!.attempts, 2),
    },
    {
      name: 'Failed 403 stays Blocked across an observation that still says Evict',
      run: () =>
        evicting()
          .answer('app/a', failed(403, 'Forbidden'))
          .observe(anObservation().pods(aPod('app/a'))),
      a: 'app/a Blocked Forbidden',
      notBeforeMs: NOW + 5 * S,
    },
    {
      name: 'CallFailed (timeout): not evicted again before an observation with a higher seq',
      run: () => {
        const d = evicting();
        const older = d.startObserve(); // started before the failure
        d.answer('app/a', callFailed());
        assert.equal(d.pod('app/a')!.checkAfterSeq, older + 1);
        assert.equal(d.s.lastError, 'eviction timed out');
        d.at(NOW + 3600 * S - 1);
        assert.deepEqual(d.evicts(), [], 'the backoff passed, but no fresh observation');
        d.applyObserved(anObservation().pods(aPod('app/a')), older);
        assert.deepEqual(d.evicts(), [], 'an observation started before the failure does not count');
        d.observe(anObservation().pods(aPod('app/a')));
        assert.deepEqual(d.evicts(), ['app/a']);
        return d;
      },
      a: 'app/a Evicting CallFailed',
    },
    {
      name: 'CallFailed: notBefore is the backoff too',
      run: () =>
        evicting()
          .answer('app/a', callFailed({ timedOut: false, message: 'boom' }))
          .observe(anObservation().pods(aPod('app/a'))),
      a: 'app/a Pending CallFailed',
      notBeforeMs: NOW + 5 * S,
      check: (d) => assert.deepEqual(d.evicts(), []),
    },
    {
      name: 'CallFailed cancelled: Pending, no lastError, no refusal',
      run: () =>
        evicting().answer('app/a', callFailed({ cancelled: true, timedOut: false, message: 'cancelled' })),
      a: 'app/a Pending',
      notBeforeMs: 0,
      check: (d) => {
        assert.equal(d.s.lastError, undefined);
        assert.equal(d.pod('app/a')!.refusals, 0);
      },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = c.run();
      const p = d.pod('app/a');
      if (c.a === undefined) assert.equal(p, undefined);
      else
        assert.equal(
          d.states().find((x) => x.startsWith('app/a ')),
          c.a,
        );
      if (c.notBeforeMs !== undefined) assert.equal(p!.notBeforeMs, c.notBeforeMs);
      c.check?.(d);
    });
  }

  const untracked: { name: string; answer: EvictResult | EvictionCallFailure; tooManyRequests: number }[] = [
    { name: 'Evicted', answer: evicted, tooManyRequests: 0 },
    { name: 'Gone', answer: gone, tooManyRequests: 0 },
    { name: '429', answer: throttled(5), tooManyRequests: 1 },
    { name: 'Failed', answer: failed(403, 'Forbidden'), tooManyRequests: 0 },
    { name: 'CallFailed', answer: callFailed(), tooManyRequests: 0 },
  ];
  for (const c of untracked) {
    it(`an answer (${c.name}) for an untracked pod changes only the counters`, () => {
      const d = new Drain().observe(anObservation().pods(aPod('app/b').withPdb('app/p')).pdb('app/p', 1));
      const before = structuredClone(d.s);
      d.answer('app/gone', c.answer);
      assert.deepEqual(d.s, { ...before, tooManyRequests: c.tooManyRequests });
    });
  }
});

// ---- decideNode ----

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

// ---- applyControl ----

describe('applyControl', () => {
  const cases: { actions: ('pause' | 'resume' | 'abort')[]; paused: boolean; aborted: boolean }[] = [
    { actions: ['pause'], paused: true, aborted: false },
    { actions: ['pause', 'resume'], paused: false, aborted: false },
    { actions: ['abort', 'resume'], paused: false, aborted: true },
    { actions: ['abort', 'pause'], paused: true, aborted: true },
  ];
  for (const c of cases) {
    it(c.actions.join(' → '), () => {
      const s = initialNodeState('n', DEADLINE, false);
      for (const a of c.actions) assert.equal(applyControl(s, a), s);
      assert.deepEqual([s.paused, s.aborted], [c.paused, c.aborted]);
    });
  }
  it('abort wins over pause in the decision', () => {
    const d = new Drain({ paused: true }).observe(anObservation().pods(aPod('app/a')));
    applyControl(d.s, 'abort');
    assert.equal(d.decide().outcome?.phase, 'Aborted');
  });
});

// ---- nodeBlockers, nextActionAt, nodeCounts ----

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
  it('goneMessage: a table of evicted, gone otherwise and deleted at the deadline', () => {
    const rows: Array<[number, number | undefined, number | undefined, string]> = [
      [6, undefined, undefined, 'all 6 pod(s) evicted'],
      [0, undefined, undefined, 'all 0 pod(s) evicted'],
      [6, undefined, 2, '4 pod(s) evicted, 2 deleted at the deadline'],
      [
        6,
        1,
        2,
        '3 pod(s) evicted, 1 gone without eviction (deleted by someone else, finished or already terminating), 2 deleted at the deadline',
      ],
    ];
    for (const [podsGone, goneWithoutEviction, deletedGone, want] of rows)
      assert.equal(
        goneMessage({
          podsGone,
          ...(goneWithoutEviction !== undefined ? { goneWithoutEviction } : {}),
          ...(deletedGone !== undefined ? { deletedGone } : {}),
        }),
        want,
      );
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
