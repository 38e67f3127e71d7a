/**
 * Table test of the plan's status rendering (src/drain/plan-status.ts): the conditions rendered from
 * the workflow's structured state, lastTransitionTime kept from the previous conditions while a
 * status holds, the ClaimCycle condition once a cycle was seen. No Temporal, no I/O.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Condition } from '../../src/api/plan.js';
import { pendingNode } from '../../src/drain/plan-drain.js';
import { renderPlanStatus, type PlanStatusInput } from '../../src/drain/plan-status.js';
import type { PlanState } from '../../src/drain/projection.js';

const T0 = Date.parse('2026-12-01T00:00:00Z');
const T1 = T0 + 60_000;

const state = (over: Partial<PlanState> = {}): PlanState => ({
  phase: 'Running',
  reason: 'Draining',
  message: 'draining 1 of 1 node(s)',
  observedGeneration: 2,
  nodes: [pendingNode('n1')],
  conditions: [],
  ...over,
});

const cond = (conditions: Condition[] | undefined, type: string) => conditions?.find((c) => c.type === type);

describe('renderPlanStatus', () => {
  const rows: {
    name: string;
    input: PlanStatusInput;
    want: { type: string; status: string; reason: string; at: number }[];
  }[] = [
    {
      name: 'a first status: every condition changes now',
      input: { state: state(), nowMs: T0 },
      want: [
        { type: 'Progressing', status: 'True', reason: 'Draining', at: T0 },
        { type: 'Paused', status: 'False', reason: 'NotPaused', at: T0 },
      ],
    },
    {
      name: 'a status that holds keeps its lastTransitionTime; one that changes takes the time of the write',
      input: {
        state: state({
          phase: 'Paused',
          reason: 'PausedByUser',
          message: 'no new evictions until resumed',
          conditions: renderPlanStatus({ state: state(), nowMs: T0 }).conditions!,
        }),
        nowMs: T1,
      },
      want: [
        { type: 'Progressing', status: 'True', reason: 'Paused', at: T0 },
        { type: 'Paused', status: 'True', reason: 'PausedByUser', at: T1 },
      ],
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      const status = renderPlanStatus(row.input);
      for (const w of row.want) {
        const c = cond(status.conditions, w.type);
        assert.deepEqual(
          [c?.status, c?.reason, c?.lastTransitionTime, c?.observedGeneration],
          [w.status, w.reason, new Date(w.at).toISOString(), 2],
          w.type,
        );
      }
      assert.equal(status.phase, row.input.state.phase);
      assert.equal(status.message, row.input.state.message);
    });

  it('adds the ClaimCycle condition once a cycle was seen, and only then', () => {
    assert.equal(cond(renderPlanStatus({ state: state(), nowMs: T0 }).conditions, 'ClaimCycle'), undefined);
    const withCycle = renderPlanStatus({
      state: state(),
      claimCycle: { active: true, message: 'plans p → q → p wait for each other', warned: [] },
      nowMs: T0,
    });
    assert.equal(cond(withCycle.conditions, 'ClaimCycle')?.status, 'True');
  });
});
