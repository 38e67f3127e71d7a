/**
 * Table tests of the node drain's answer reducers (src/drain/node/answers.ts): what each Eviction
 * API answer (201, 404, 429 by cause, 409/403, other refusals, no answer) does to the pod and its
 * PDB. No Temporal, no I/O.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EvictResult } from '../../src/contract/eviction.js';
import { nextActionAt } from '../../src/drain/node/decide.js';
import { nodeCounts } from '../../src/drain/node/report.js';
import type { EvictionCallFailure } from '../../src/drain/node/state.js';
import {
  anObservation,
  aPod,
  callFailed,
  Drain,
  evicted,
  evicting,
  failed,
  gone,
  NOW,
  pdbRefusal,
  retry,
  S,
  throttled,
  twoBehindPdb,
} from '../helpers/node-drain-fixtures.js';

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
