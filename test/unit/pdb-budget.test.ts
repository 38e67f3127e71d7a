/**
 * Table tests of the plan's PDB budget (src/drain/pdb-budget.ts; the node's side is
 * test/unit/node-budget.test.ts). No Temporal, no I/O.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withRequestedPdbs } from '../../src/activities/node-pods.js';
import type { PdbReport } from '../../src/contract/budget.js';
import {
  allocateBudget,
  applyBudgetRequest,
  budgetAvailable,
  emptyLedger,
  forgetBudgetNode,
  newerResourceVersion,
  type PdbBudgetLedger,
} from '../../src/drain/pdb-budget.js';
import { rep, req } from '../helpers/pdb-fixtures.js';

describe('newerResourceVersion (KEP-5504 order)', () => {
  const cases: [string | undefined, string | undefined, boolean][] = [
    ['10', '9', true], // by length first: not a string comparison
    ['9', '10', false],
    ['123', '123', false],
    ['124', '123', true],
    [undefined, '5', true], // nothing to compare: the latest report wins
    ['5', undefined, true],
    ['abc', 'abd', true], // not canonical: newer when different
    ['abc', 'abc', false],
    ['007', '7', true],
  ];
  for (const [a, b, want] of cases)
    it(`${String(a)} vs ${String(b)} → ${want}`, () => assert.equal(newerResourceVersion(a, b), want));
});

describe('the plan ledger', () => {
  const withPdb = (allowed: number, rv = '10'): PdbBudgetLedger =>
    applyBudgetRequest(emptyLedger(), req('n1', { pdbs: [{ key: 'app/a', allowed, resourceVersion: rv }] }));

  it('two nodes wanting more than a PDB allows: the earlier requester is served first, never beyond the allowance', () => {
    const l = withPdb(2);
    applyBudgetRequest(l, req('n1', { wants: { 'app/a': 2 } }));
    applyBudgetRequest(
      l,
      req('n2', { wants: { 'app/a': 2 }, pdbs: [{ key: 'app/a', allowed: 2, resourceVersion: '10' }] }),
    );
    assert.deepEqual(allocateBudget(l), [{ node: 'n1', grant: { seq: 1, grants: { 'app/a': 2 } } }]);
    assert.equal(budgetAvailable(l, 'app/a'), 0);
    assert.deepEqual(allocateBudget(l), [], 'nothing more to hand out, nothing granted twice');
  });

  it('what a node holds counts until it reports otherwise; a grant after its last request counts as issued', () => {
    const l = withPdb(3);
    applyBudgetRequest(l, req('n1', { wants: { 'app/a': 1 }, holding: { 'app/a': 1 } }));
    assert.deepEqual(allocateBudget(l)[0]?.grant, { seq: 1, grants: { 'app/a': 1 } });
    assert.equal(budgetAvailable(l, 'app/a'), 1, '3 - 1 held - 1 issued');
    // The node applied grant 1 and now holds 2 (its own view): nothing double counted.
    applyBudgetRequest(l, req('n1', { grantSeq: 1, holding: { 'app/a': 2 } }));
    assert.equal(budgetAvailable(l, 'app/a'), 1);
    // A request that had not seen grant 1 yet keeps it issued.
    applyBudgetRequest(l, req('n2', { wants: { 'app/a': 5 } }));
    assert.deepEqual(allocateBudget(l), [{ node: 'n2', grant: { seq: 1, grants: { 'app/a': 1 } } }]);
  });

  it("the next grant is numbered past the node's grantSeq, even when the ledger numbered lower (a grant sent by a refused workflow task)", () => {
    const l = withPdb(3);
    // The node applied grant 4 that the ledger never recorded: a grant numbered 1 would be ignored.
    applyBudgetRequest(l, req('n2', { grantSeq: 4, wants: { 'app/a': 1 } }));
    assert.deepEqual(allocateBudget(l), [{ node: 'n2', grant: { seq: 5, grants: { 'app/a': 1 } } }]);
    // A later request that has not seen grant 5 keeps it issued and the numbering goes on.
    applyBudgetRequest(l, req('n2', { grantSeq: 4, wants: { 'app/a': 2 } }));
    assert.deepEqual(allocateBudget(l), [{ node: 'n2', grant: { seq: 6, grants: { 'app/a': 1 } } }]);
  });

  it('a report of an older resourceVersion does not raise the allowance; a newer one does', () => {
    const l = withPdb(0, '20');
    applyBudgetRequest(l, req('n2', { pdbs: [{ key: 'app/a', allowed: 3, resourceVersion: '19' }] }));
    assert.equal(l.pdbs['app/a']?.allowed, 0);
    applyBudgetRequest(l, req('n2', { pdbs: [{ key: 'app/a', allowed: 3, resourceVersion: '100' }] }));
    assert.equal(l.pdbs['app/a']?.allowed, 3);
  });

  it('a refusal zeroes the PDB until a newer version, or the refused node reports the same version unrefused', () => {
    const l = withPdb(2, '30');
    applyBudgetRequest(
      l,
      req('n1', { pdbs: [{ key: 'app/a', allowed: 0, resourceVersion: '30', refused: true }] }),
    );
    assert.equal(budgetAvailable(l, 'app/a'), 0);
    applyBudgetRequest(l, req('n2', { pdbs: [{ key: 'app/a', allowed: 2, resourceVersion: '29' }] }));
    assert.equal(budgetAvailable(l, 'app/a'), 0, 'an older report does not lift it');
    applyBudgetRequest(l, req('n1', { pdbs: [{ key: 'app/a', allowed: 1, resourceVersion: '30' }] }));
    assert.equal(budgetAvailable(l, 'app/a'), 1, 'the probe: one pod may try');
  });

  describe("a refusal at an older version than the plan's (the refused node's view lags)", () => {
    // n2 saw app/a at version 25 and was refused (429); the plan already had version 30 from n1.
    const refusedLedger = (): PdbBudgetLedger => {
      const l = withPdb(1, '30');
      applyBudgetRequest(l, req('n2', { pdbs: [rep('app/a', 0, '25', true)] }));
      return l;
    };
    const cases: [string, { from: string; report: PdbReport }, number][] = [
      [
        "the refused node's probe report, at its old version",
        { from: 'n2', report: rep('app/a', 1, '25') },
        1,
      ],
      [
        "the refused node reporting a version between its own and the plan's",
        { from: 'n2', report: rep('app/a', 2, '28') },
        2,
      ],
      ['another node reporting the old version unrefused', { from: 'n3', report: rep('app/a', 1, '25') }, 0],
      [
        'the refused node still refused (its probe bound has not passed)',
        { from: 'n2', report: rep('app/a', 0, '25', true) },
        0,
      ],
      ['anyone reporting a newer version', { from: 'n3', report: rep('app/a', 3, '31') }, 3],
    ];
    for (const [name, c, allowed] of cases)
      it(`${name}: the PDB allows ${allowed}`, () => {
        const l = refusedLedger();
        assert.deepEqual(l.pdbs['app/a'], {
          allowed: 0,
          resourceVersion: '30',
          refused: true,
          refusedBy: 'n2',
        });
        applyBudgetRequest(l, req(c.from, { pdbs: [c.report] }));
        assert.equal(l.pdbs['app/a']!.allowed, allowed);
        assert.equal(l.pdbs['app/a']!.refused, allowed === 0 ? true : undefined);
        // The plan's version never goes back: a lagging report does not replace it.
        assert.equal(l.pdbs['app/a']!.resourceVersion, c.report.resourceVersion === '31' ? '31' : '30');
      });
  });

  it("a node's room is spread over the PDBs with the most left, not spent on the first by name", () => {
    const l = emptyLedger();
    const pdbs = ['app/a', 'app/b', 'app/c'].map((key) => ({ key, allowed: 2, resourceVersion: '5' }));
    for (const node of ['n1', 'n2', 'n3'])
      applyBudgetRequest(l, req(node, { wants: { 'app/a': 3, 'app/b': 3, 'app/c': 3 }, room: 2, pdbs }));
    const grants = allocateBudget(l).map((g) => [g.node, g.grant.grants]);
    assert.deepEqual(grants, [
      ['n1', { 'app/a': 1, 'app/b': 1 }],
      ['n2', { 'app/c': 1, 'app/a': 1 }],
      ['n3', { 'app/b': 1, 'app/c': 1 }],
    ]);
    // Room is what the node can still start: grants issued since its request count against it.
    applyBudgetRequest(l, req('n4', { wants: { 'app/a': 1 }, room: 1, pdbs }));
    assert.deepEqual(allocateBudget(l), [], 'every PDB is spent');
  });

  it('a node whose drain ended is forgotten: what it held is free again', () => {
    const l = withPdb(2);
    applyBudgetRequest(l, req('n1', { holding: { 'app/a': 2 } }));
    applyBudgetRequest(l, req('n2', { wants: { 'app/a': 1 } }));
    assert.deepEqual(allocateBudget(l), []);
    forgetBudgetNode(l, 'n1');
    assert.deepEqual(allocateBudget(l), [{ node: 'n2', grant: { seq: 1, grants: { 'app/a': 1 } } }]);
    forgetBudgetNode(l, 'n2');
    assert.deepEqual(l.nodes, {});
    // The freshest report stays: a node reporting an older version later gets nothing from it.
    applyBudgetRequest(
      l,
      req('n3', { wants: { 'app/a': 5 }, pdbs: [{ key: 'app/a', allowed: 5, resourceVersion: '9' }] }),
    );
    assert.deepEqual(
      allocateBudget(l),
      [{ node: 'n3', grant: { seq: 1, grants: { 'app/a': 2 } } }],
      'allowed 2 (version 10), not 5',
    );
  });
});

// ---- the node's side ----

describe('withRequestedPdbs (PDBs an observation keeps reporting)', () => {
  const inNs = (ns: string) =>
    ns === 'app'
      ? [
          {
            metadata: { name: 'a', generation: 1, resourceVersion: '41' },
            status: { observedGeneration: 1, disruptionsAllowed: 0 },
          },
          {
            metadata: { name: 'b', generation: 2, resourceVersion: '42' },
            status: { observedGeneration: 1, disruptionsAllowed: 3 },
          },
        ]
      : [];
  it('adds the requested PDBs that exist, once, sorted by key', () => {
    const have = [{ key: 'app/c', disruptionsAllowed: 1 }];
    assert.deepEqual(withRequestedPdbs(have, ['app/c', 'app/b', 'app/a', 'app/gone', 'other/x'], inNs), [
      { key: 'app/a', disruptionsAllowed: 0, resourceVersion: '41' },
      // generation not yet observed by the disruption controller: allows nothing (as the eviction subresource sees it)
      { key: 'app/b', disruptionsAllowed: 0, resourceVersion: '42' },
      { key: 'app/c', disruptionsAllowed: 1 },
    ]);
  });
  it('nothing requested: the same list', () => {
    const have = [{ key: 'app/c', disruptionsAllowed: 1 }];
    assert.equal(withRequestedPdbs(have, undefined, inNs), have);
  });
});
