/**
 * Wording of bad input and of waiting nodes: a zod issue names the value given (src/api/issue-words.ts,
 * used by `drainflow preflight` and the operator's InvalidSpec), and a Pending node of a paused plan
 * says the pause holds it (src/cli/render.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MaintenancePlanSpecSchema } from '../../src/api/plan.js';
import { fieldPath, issueWords } from '../../src/api/issue-words.js';
import { pendingWords, renderPlan } from '../../src/cli/render.js';
import { specFromFlags } from '../../src/cli/preflight.js';

/** The words of the issues of parsing `spec`. */
function words(spec: unknown): string {
  const r = MaintenancePlanSpecSchema.safeParse(spec);
  assert.ok(!r.success, 'parsed');
  return issueWords(r.error, spec);
}

describe('fieldPath writes zod paths as the API server writes field paths', () => {
  it('list indexes in brackets, names joined by dots', () => {
    const rows: [PropertyKey[], string][] = [
      [['maxUnavailableNodes'], 'maxUnavailableNodes'],
      [['nodeNames', 1], 'nodeNames[1]'],
      [['windows', 0, 'timeZone'], 'windows[0].timeZone'],
      [['podOrder', 2, 'match', 'namespaces', 0], 'podOrder[2].match.namespaces[0]'],
      [[], ''],
    ];
    for (const [path, want] of rows) assert.equal(fieldPath(path), want, JSON.stringify(path));
  });
});

describe('issue words name the value', () => {
  const rows: [string, unknown, string][] = [
    [
      'the second node name of a list',
      { nodeNames: ['ok', 'Node_1'] },
      `spec.nodeNames[1]: must be a node name: a DNS subdomain of lowercase letters, digits, '-' and '.' that starts and ends with a letter or digit, at most 253 characters (got "Node_1")`,
    ],
    [
      'a number out of range',
      { nodeNames: ['a'], maxUnavailableNodes: 0 },
      'spec.maxUnavailableNodes: Too small: expected number to be >=1 (got 0)',
    ],
    [
      'an object value is not printed',
      { nodeNames: ['a'], podSelection: { podSelector: 'x' } },
      'spec.podSelection.podSelector: Invalid input: expected object, received string (got "x")',
    ],
    [
      'a missing value: nothing to show',
      { nodeNames: ['a'], hooks: { afterDrain: {} } },
      'spec.hooks.afterDrain: exactly one of job and workflow must be set',
    ],
  ];
  for (const [what, spec, want] of rows) it(what, () => assert.equal(words(spec), want));

  it('drainflow preflight --nodes with a bad name says which', () =>
    assert.throws(
      () => specFromFlags({ nodes: 'good,Bad_Name' }),
      /spec\.nodeNames\[1\]: must be a node name: .* \(got "Bad_Name"\)/,
    ));
});

describe('a Pending node of a paused plan', () => {
  const plan = (phase: string, reason: string) =>
    renderPlan(
      {
        metadata: { name: 'p' },
        spec: { nodeNames: ['n1', 'n2'] },
        status: {
          phase,
          reason,
          nodes: [
            { name: 'n1', phase: 'Paused', reason, podsTotal: 2, podsEvicted: 1 },
            { name: 'n2', phase: 'Pending', podsTotal: 0, podsEvicted: 0 },
          ],
        },
      } as never,
      Date.parse('2026-12-02T00:00:00Z'),
    );
  it('paused by the user: no node starts until resume', () =>
    assert.match(
      plan('Paused', 'PausedByUser'),
      /node n2 +Pending[^\n]*\n {6}not started yet: the plan is paused, no node starts; nodes start in plan order after drainflow resume/,
    ));
  it('outside the windows: no node starts until the next window', () =>
    assert.match(
      plan('Paused', 'OutsideMaintenanceWindow'),
      /node n2 +Pending[^\n]*\n {6}not started yet: outside the maintenance windows no node starts; nodes start in plan order when the next window opens/,
    ));
  it('running: the order and maxUnavailableNodes', () =>
    assert.equal(
      pendingWords({ phase: 'Running', reason: 'Draining' } as never),
      'not started yet: nodes start in plan order, at most maxUnavailableNodes at a time',
    ));
});
