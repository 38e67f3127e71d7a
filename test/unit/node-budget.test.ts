/**
 * Table tests of the node's side of the PDB budgets (src/drain/node/budget.ts): grants applied and
 * spent, the request to the plan (wants, holding, room; with a reporting set), and which request is
 * news to the plan (`budgetRequestToSend`). The plan's side is test/unit/pdb-budget.test.ts.
 * No Temporal, no I/O.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PdbBudgetRequest, PdbReport } from '../../src/contract/budget.js';
import { applyEvictionAnswer } from '../../src/drain/node/answers.js';
import {
  applyGrant,
  beliefAfterRequest,
  budgetRequestToSend,
  nodeBudgetRequest,
} from '../../src/drain/node/budget.js';
import { decideNode, nodeBlockers } from '../../src/drain/node/decide.js';
import { applyObservation } from '../../src/drain/node/observation.js';
import type { NodeDrainSettings, NodeDrainState } from '../../src/drain/node/state.js';
import { BACKOFF, budgetedNode, NOW, observed, pdbPod, rep, req, SETTINGS } from '../helpers/pdb-fixtures.js';

function coordinatedNode(allowed = 3): NodeDrainState {
  return budgetedNode(allowed, 0, { grantSeq: 0, grants: {} });
}

describe('the node side of the budget', () => {
  it('without a grant nothing behind a PDB is evicted; the request wants what the node could evict', () => {
    const s = coordinatedNode();
    assert.deepEqual(decideNode(s, NOW, SETTINGS).evict, []);
    assert.deepEqual(nodeBudgetRequest(s, NOW, SETTINGS), {
      node: 'n1',
      grantSeq: 0,
      holding: {},
      wants: { 'app/a': 2 },
      room: 4,
      pdbs: [
        { key: 'app/a', allowed: 3, resourceVersion: '7' },
        { key: 'app/b', allowed: 0, resourceVersion: '8' },
      ],
    });
  });

  it('a grant is spent once; what is in flight and answered 201 is held until an observation shows it', () => {
    const s = coordinatedNode();
    applyGrant(s, { seq: 1, grants: { 'app/a': 1 } });
    applyGrant(s, { seq: 1, grants: { 'app/a': 1 } }); // repeated: ignored
    assert.deepEqual(decideNode(s, NOW, SETTINGS).evict, ['uid-a1']);
    assert.deepEqual(decideNode(s, NOW, SETTINGS).evict, [], 'the grant is spent');
    let r = nodeBudgetRequest(s, NOW, SETTINGS)!;
    assert.deepEqual([r.grantSeq, r.holding, r.wants], [1, { 'app/a': 1 }, { 'app/a': 1 }]);
    applyEvictionAnswer(s, 'uid-a1', { outcome: 'Evicted' }, NOW, BACKOFF);
    r = nodeBudgetRequest(s, NOW, SETTINGS)!;
    assert.deepEqual(r.holding, { 'app/a': 1 }, 'answered 201, not yet observed');
  });

  it('a node with a reporting set spends a grant its own (stale) view does not show; without a set or after a 429 its view still bounds it', () => {
    const table: [string, { reports?: string[]; refused?: boolean }, string[]][] = [
      ['reporting set: the grant is spent', { reports: ['app/a'] }, ['uid-b1']],
      ['no reporting set yet: its own view (0) bounds it', {}, []],
      ['refused by the PDB (429): its refusal rule bounds it', { reports: [], refused: true }, []],
    ];
    for (const [what, c, want] of table) {
      // app/b allows 0 in the node's own view; the plan, with a fresher report, granted one.
      const s = budgetedNode(0, 0, { grantSeq: 0, grants: {}, ...(c.reports ? { reports: c.reports } : {}) });
      if (c.refused) {
        s.pdbs['app/b']!.refusedAllowed = 0;
        s.pdbs['app/b']!.refusedUntilMs = NOW + 60_000;
      }
      applyGrant(s, { seq: 1, grants: { 'app/b': 1 } });
      assert.deepEqual(decideNode(s, NOW, SETTINGS).evict, want, what);
      if (want.length) assert.equal(s.budget?.grants['app/b'], 0, `${what}: the grant is used up`);
    }
  });

  it('grants the node cannot use are given back (the pod went into a cooldown)', () => {
    const s = coordinatedNode();
    applyGrant(s, { seq: 1, grants: { 'app/a': 2 } });
    assert.deepEqual(decideNode(s, NOW, { ...SETTINGS, maxConcurrentPerNode: 1 }).evict, ['uid-a1']);
    applyEvictionAnswer(
      s,
      'uid-a1',
      { outcome: 'TooManyRequests', cause: 'Throttled', retryAfterSeconds: 5, message: 'slow down' },
      NOW,
      BACKOFF,
    );
    const r = nodeBudgetRequest(s, NOW, SETTINGS)!;
    assert.deepEqual(r.holding, { 'app/a': 1 }, 'one grant left for a2; a1 cools down');
  });

  /** A coordinated node granted one disruption of app/a, whose call for a1 was refused (429) at NOW. */
  function refusedNode(settings: NodeDrainSettings = SETTINGS): NodeDrainState {
    const s = coordinatedNode();
    applyGrant(s, { seq: 1, grants: { 'app/a': 1 } });
    decideNode(s, NOW, settings);
    applyEvictionAnswer(
      s,
      'uid-a1',
      { outcome: 'TooManyRequests', cause: 'DisruptionBudget', pdb: 'app/a', message: 'no' },
      NOW,
      BACKOFF,
    );
    return s;
  }

  it('a refused PDB is reported refused until its probe bound, then as allowing one pod', () => {
    const s = refusedNode();
    const until = s.pdbs['app/a']!.refusedUntilMs!;
    assert.deepEqual(nodeBudgetRequest(s, NOW, SETTINGS)!.pdbs[0], {
      key: 'app/a',
      allowed: 0,
      resourceVersion: '7',
      refused: true,
    });
    assert.deepEqual(nodeBudgetRequest(s, until, SETTINGS)!.pdbs[0], {
      key: 'app/a',
      allowed: 1,
      resourceVersion: '7',
    });
  });

  describe('a refusal and a newer version of the PDB with the same allowance', () => {
    // The node saw app/a at version 7 allowing 3 and was refused; its next observation shows
    // version 9, still allowing 3 (a status write: observedGeneration, or a lagging view caught up).
    const cases: [string, { allowed: number; refused?: boolean }][] = [
      ['the refusal ends, the report is what the node sees', { allowed: 3 }],
    ];
    for (const [name, want] of cases)
      it(name, () => {
        const settings: NodeDrainSettings = SETTINGS;
        const s = refusedNode(settings);
        s.observeSeq = 2;
        applyObservation(
          s,
          observed(
            [pdbPod('a1', 'app/a'), pdbPod('a2', 'app/a'), pdbPod('b1', 'app/b')],
            [
              { key: 'app/a', disruptionsAllowed: 3, resourceVersion: '9' },
              { key: 'app/b', disruptionsAllowed: 0, resourceVersion: '8' },
            ],
          ),
          2,
          NOW + 500,
        );
        // Before the probe bound (1 s after the refusal).
        assert.deepEqual(nodeBudgetRequest(s, NOW + 500, settings)!.pdbs[0], {
          key: 'app/a',
          resourceVersion: '9',
          ...want,
        });
      });
  });

  describe('blockers of a node waiting for grants (its own view of app/a allows 3)', () => {
    const cases: [string, { grant: number }, string[]][] = [
      ['no grant: a1 and a2 wait for app/a', { grant: 0 }, ['app/a-a1', 'app/a-a2']],
      ['one grant: the pod it is for is not blocked', { grant: 1 }, []],
    ];
    for (const [name, c, want] of cases)
      it(name, () => {
        const s = coordinatedNode();
        if (c.grant) applyGrant(s, { seq: 1, grants: { 'app/a': c.grant } });
        const got = nodeBlockers(s, NOW).filter((b) => b.pdb === 'app/a');
        assert.deepEqual(
          got.map((b) => `${b.pdb}-${b.pod.split('/')[1]}`),
          want,
        );
        for (const b of got) assert.equal(b.reason, 'DisruptionBudget');
      });
  });

  it('paused: wants nothing and gives every grant back', () => {
    const s = coordinatedNode();
    applyGrant(s, { seq: 1, grants: { 'app/a': 2 } });
    s.paused = true;
    const r = nodeBudgetRequest(s, NOW, SETTINGS)!;
    assert.deepEqual([r.holding, r.wants], [{}, {}]);
  });

  it('an uncoordinated node makes no request and evicts on its own budget', () => {
    const s = coordinatedNode();
    delete s.budget;
    assert.equal(nodeBudgetRequest(s, NOW, SETTINGS), undefined);
    assert.deepEqual(decideNode(s, NOW, SETTINGS).evict, ['uid-a1', 'uid-a2']);
  });
});

function reportingNode(allowedA: number, reports: string[] | undefined): NodeDrainState {
  return budgetedNode(allowedA, 1, { grantSeq: 0, grants: {}, ...(reports ? { reports } : {}) });
}

describe('nodeBudgetRequest with a reporting set', () => {
  it('wants what the node could evict, whatever its own view of the allowance; sends `tracked`', () => {
    const r = nodeBudgetRequest(reportingNode(0, []), NOW, SETTINGS)!;
    assert.deepEqual([r.wants, r.tracked], [{ 'app/a': 2, 'app/b': 1 }, ['app/a', 'app/b']]);
  });

  it('without one (a plan that names no reporters) wants stay bounded by its own view, no `tracked`', () => {
    const r = nodeBudgetRequest(reportingNode(0, undefined), NOW, SETTINGS)!;
    assert.deepEqual([r.wants, r.tracked], [{ 'app/b': 1 }, undefined]);
  });

  it('a grant names the set; a grant without one keeps it', () => {
    const s = reportingNode(1, []);
    applyGrant(s, { seq: 1, grants: {}, reports: ['app/a'] });
    applyGrant(s, { seq: 2, grants: { 'app/a': 1 } });
    assert.deepEqual(s.budget?.reports, ['app/a']);
  });
});

describe('budgetRequestToSend', () => {
  const base = req('n1', {
    holding: { 'app/a': 1 },
    wants: { 'app/b': 1 },
    room: 3,
    tracked: ['app/a', 'app/b'],
    pdbs: [rep('app/a', 1, '7'), rep('app/b', 0, '8')],
  });
  const belief = beliefAfterRequest(base, ['app/a']);
  const withPdbs = (...pdbs: PdbReport[]) => ({ ...base, pdbs });
  const cases: [string, PdbBudgetRequest, string[] | undefined, PdbReport[] | 'none'][] = [
    ['nothing changed', base, ['app/a'], 'none'],
    [
      'a new version of a PDB it does not report',
      withPdbs(rep('app/a', 1, '7'), rep('app/b', 1, '9')),
      ['app/a'],
      'none',
    ],
    [
      'a new version of a PDB it reports, same allowance',
      withPdbs(rep('app/a', 1, '10'), rep('app/b', 0, '8')),
      ['app/a'],
      [rep('app/a', 1, '10')],
    ],
    [
      'a refusal of a PDB it does not report',
      withPdbs(rep('app/a', 1, '7'), rep('app/b', 0, '8', true)),
      ['app/a'],
      [rep('app/b', 0, '8', true)],
    ],
    ['named the reporter of another PDB, its view unchanged', base, ['app/a', 'app/b'], 'none'],
    [
      'holds less: only the changed reports ride along',
      { ...withPdbs(rep('app/a', 0, '9'), rep('app/b', 0, '8')), holding: {} },
      ['app/a'],
      [rep('app/a', 0, '9')],
    ],
    ['tracks one PDB less', { ...withPdbs(rep('app/a', 1, '7')), tracked: ['app/a'] }, ['app/a'], []],
  ];
  for (const [what, r, reports, want] of cases)
    it(`${what} → ${want === 'none' ? 'not sent' : `sent with ${want.length} report(s)`}`, () => {
      const out = budgetRequestToSend(belief, r, reports);
      if (want === 'none') assert.equal(out, undefined);
      else assert.deepEqual(out?.pdbs, want);
    });

  it('without a reporting set the whole request goes when it is news (old rule)', () => {
    const oldBelief = beliefAfterRequest({ ...base, tracked: undefined! });
    const r = { ...withPdbs(rep('app/a', 1, '7'), rep('app/b', 1, '9')), tracked: undefined! };
    assert.deepEqual(budgetRequestToSend(oldBelief, r, undefined), r, 'wanting, and a PDB changed');
  });

  it('a reporter in a new run (no belief) sends its baseline; a non-reporter with nothing to say does not', () => {
    const idle = req('n1', { tracked: ['app/a'], pdbs: [rep('app/a', 1, '7')] });
    assert.deepEqual(budgetRequestToSend(undefined, idle, ['app/a'])?.pdbs, [rep('app/a', 1, '7')]);
    assert.equal(budgetRequestToSend(undefined, idle, []), undefined);
  });
});
