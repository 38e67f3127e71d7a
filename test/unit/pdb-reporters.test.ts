/**
 * Table tests of one reporting node per PDB (src/drain/pdb-budget.ts: assignReporters,
 * allocateBudget with reporters; src/drain/node-drain.ts: nodeBudgetRequest with a reporting set,
 * budgetRequestToSend). No Temporal, no I/O.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  allocateBudget,
  applyBudgetRequest,
  assignReporters,
  budgetAvailable,
  emptyLedger,
  forgetBudgetNode,
} from '../../src/drain/pdb-budget.js';
import type { PdbBudgetRequest, PdbReport } from '../../src/contract/budget.js';
import {
  applyGrant,
  beliefAfterRequest,
  budgetRequestToSend,
  nodeBudgetRequest,
  type NodeDrainState,
} from '../../src/drain/node-drain.js';
import { NOW, SETTINGS, budgetedNode, rep, req } from '../helpers/pdb-fixtures.js';

describe('assignReporters', () => {
  it('names the latest requester that tracks a PDB, keeps it while it tracks it, then hands it on', () => {
    const l = emptyLedger();
    applyBudgetRequest(l, req('n1', { tracked: ['app/a', 'app/b'], pdbs: [rep('app/a', 1, '5')] }));
    applyBudgetRequest(l, req('n2', { tracked: ['app/a'] }));
    assert.deepEqual(
      [...assignReporters(l)],
      [
        ['n2', ['app/a']],
        ['n1', ['app/b']],
      ],
    );
    applyBudgetRequest(l, req('n3', { tracked: ['app/a'] }));
    assert.equal(assignReporters(l).get('n2')?.join(), 'app/a', 'a later node does not take over');
    applyBudgetRequest(l, req('n2', { tracked: [] })); // its last pod behind app/a left
    assert.equal(assignReporters(l).get('n3')?.join(), 'app/a');
    forgetBudgetNode(l, 'n3');
    assert.equal(assignReporters(l).get('n1')?.join(), 'app/a,app/b', 'the node that ended is replaced');
  });

  it('never names a node that sends no `tracked` (it does not know the protocol)', () => {
    const l = emptyLedger();
    applyBudgetRequest(l, req('old', { pdbs: [rep('app/a', 1, '5')] }));
    assert.deepEqual([...assignReporters(l)], []);
  });
});

describe('allocateBudget: reporting sets', () => {
  it('tells a node its set with its grant, and at once (no disruptions) when it gained a PDB', () => {
    const l = emptyLedger();
    applyBudgetRequest(
      l,
      req('n1', { tracked: ['app/a'], wants: { 'app/a': 1 }, room: 4, pdbs: [rep('app/a', 1, '5')] }),
    );
    applyBudgetRequest(
      l,
      req('n2', { tracked: ['app/b'], wants: { 'app/b': 1 }, pdbs: [rep('app/b', 0, '6')] }),
    );
    assert.deepEqual(allocateBudget(l), [
      { node: 'n1', grant: { seq: 1, grants: { 'app/a': 1 }, reports: ['app/a'] } },
      { node: 'n2', grant: { seq: 1, grants: {}, reports: ['app/b'] } },
    ]);
    assert.deepEqual(allocateBudget(l), [], 'nothing new: no grant');
    assert.equal(budgetAvailable(l, 'app/b'), 0, 'a grant of no disruptions holds nothing');
  });

  it('a node that only lost PDBs to report hears of it with its next grant, not in a grant of its own', () => {
    const l = emptyLedger();
    applyBudgetRequest(l, req('n1', { tracked: ['app/a'], pdbs: [rep('app/a', 0, '5')] }));
    allocateBudget(l); // n1 reports app/a
    applyBudgetRequest(l, req('n2', { tracked: ['app/a'], pdbs: [] }));
    applyBudgetRequest(l, req('n1', { tracked: [] }));
    const out = allocateBudget(l);
    assert.deepEqual(out, [{ node: 'n2', grant: { seq: 1, grants: {}, reports: ['app/a'] } }]);
  });

  it('a request with only the changed reports leaves the others as they were', () => {
    const l = emptyLedger();
    applyBudgetRequest(
      l,
      req('n1', { tracked: ['app/a', 'app/b'], pdbs: [rep('app/a', 2, '5'), rep('app/b', 1, '6')] }),
    );
    applyBudgetRequest(l, req('n1', { tracked: ['app/a', 'app/b'], pdbs: [rep('app/b', 3, '9')] }));
    assert.deepEqual(l.pdbs, {
      'app/a': { allowed: 2, resourceVersion: '5' },
      'app/b': { allowed: 3, resourceVersion: '9' },
    });
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
