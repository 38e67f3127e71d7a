/**
 * Table tests of one reporting node per PDB (src/drain/pdb-budget.ts: assignReporters,
 * allocateBudget with reporters; the node's side, nodeBudgetRequest with a reporting set and
 * budgetRequestToSend, is test/unit/node-budget.test.ts). No Temporal, no I/O.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  allocateBudget,
  applyBudgetRequest,
  assignReporters,
  budgetAvailable,
  emptyLedger,
  forgetBudgetNode,
} from '../../src/drain/pdb-budget.js';
import { rep, req } from '../helpers/pdb-fixtures.js';

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
