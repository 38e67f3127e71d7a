/**
 * src/api/reasons.ts and docs/reasons.md list the same words: every phase, condition type and
 * reason, each reason with the groups it belongs to. Reasons are CamelCase.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import * as reasons from '../../src/api/reasons.js';
import {
  ConditionType,
  DRAIN_ENDED_NODE_PHASES,
  FINAL_NODE_PHASES,
  FINAL_PLAN_PHASES,
  HookPhase,
  NodeConditionType,
  NodePhase,
  PlanPhase,
} from '../../src/api/reasons.js';
import { NodePhaseSchema, PlanPhaseSchema } from '../../src/api/plan.js';

/**
 * Every group of reasons of src/api/reasons.ts (each `…Reason` constant, and the kinds of a PDB
 * block, which are the DisruptionBlocked condition's reasons), by name: what `docs/reasons.md` lists.
 */
const REASON_GROUPS = Object.fromEntries(
  Object.entries(reasons).filter(([name]) => name.endsWith('Reason') || name === 'DisruptionBlockKind'),
) as Record<string, Record<string, string>>;

/** Every reason drainflow writes, each once. */
const ALL_REASONS = new Set(Object.values(REASON_GROUPS).flatMap((g) => Object.values(g) as string[]));

const DOC = readFileSync(new URL('../../docs/reasons.md', import.meta.url), 'utf8');

/** The table rows under the `## <title…>` heading: first column (unquoted) → the other cells. */
function section(title: string): Map<string, string[]> {
  const parts = DOC.split(/^## /m);
  const part = parts.find((p) => p.startsWith(title));
  assert.ok(part, `docs/reasons.md has a section "## ${title}"`);
  const rows = new Map<string, string[]>();
  for (const line of part.split('\n')) {
    const m = /^\|\s*`(\w+)`\s*\|(.*)\|$/.exec(line.trim());
    if (!m) continue;
    assert.ok(!rows.has(m[1]!), `"${m[1]}" is listed once in "## ${title}"`);
    rows.set(
      m[1]!,
      m[2]!.split('|').map((c) => c.trim()),
    );
  }
  return rows;
}

const sorted = (xs: Iterable<string>) => [...xs].sort();

describe('src/api/reasons.ts and docs/reasons.md', () => {
  for (const [title, group] of [
    ['Plan phases', PlanPhase],
    ['Node phases', NodePhase],
    ['Hook phases', HookPhase],
    ['Condition types', ConditionType],
    ['Node lifecycle conditions', NodeConditionType],
  ] as const) {
    it(`"${title}" lists exactly the constants`, () => {
      assert.deepEqual(sorted(section(title).keys()), sorted(Object.values(group)));
    });
  }

  it('"Reasons" lists every reason once, with exactly the groups it belongs to', () => {
    const rows = section('Reasons');
    assert.deepEqual(sorted(rows.keys()), sorted(ALL_REASONS));
    for (const [word, cells] of rows) {
      const documented = cells[0]!.split(',').map((g) => g.trim());
      const actual = Object.entries(REASON_GROUPS)
        .filter(([, g]) => (Object.values(g) as string[]).includes(word))
        .map(([name]) => name);
      assert.deepEqual(sorted(documented), sorted(actual), `groups of ${word}`);
      assert.ok(cells[1] && cells[1].length > 0, `${word} has a meaning`);
    }
  });

  it('the legend names every group of reasons', () => {
    const legend = new Set([...DOC.matchAll(/^\|\s*`(\w+)`\s*\|/gm)].map((m) => m[1]!));
    for (const name of Object.keys(REASON_GROUPS)) assert.ok(legend.has(name), `${name} in the legend`);
  });
});

describe('the words themselves', () => {
  it('every key of a group equals its value, and every word is CamelCase', () => {
    for (const group of [
      PlanPhase,
      NodePhase,
      HookPhase,
      ConditionType,
      NodeConditionType,
      ...Object.values(REASON_GROUPS),
    ]) {
      for (const [key, value] of Object.entries(group)) {
        assert.equal(value, key);
        assert.match(value, /^[A-Z][A-Za-z0-9]*$/, `${value} is CamelCase`);
      }
    }
  });

  it('the zod enums of the status are the phase constants', () => {
    assert.deepEqual(sorted(PlanPhaseSchema.options), sorted(Object.values(PlanPhase)));
    assert.deepEqual(sorted(NodePhaseSchema.options), sorted(Object.values(NodePhase)));
  });

  it('the final phases', () => {
    assert.deepEqual(sorted(FINAL_PLAN_PHASES), [
      'Aborted',
      'Blocked',
      'Completed',
      'Drained',
      'Failed',
      'Previewed',
    ]);
    assert.deepEqual(sorted(DRAIN_ENDED_NODE_PHASES), [
      'Aborted',
      'Deleted',
      'Drained',
      'Failed',
      'Released',
      'Skipped',
    ]);
    assert.deepEqual(sorted(FINAL_NODE_PHASES), [...sorted(DRAIN_ENDED_NODE_PHASES), 'Previewed'].sort());
  });
});
