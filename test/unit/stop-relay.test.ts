/** Which stops a replica relays before it leads (src/operator/stop-relay.ts `pendingStops`). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MaintenancePlan } from '../../src/api/plan.js';
import { pendingStops } from '../../src/operator/stop-relay.js';

/** A plan of generation `generation` whose running workflow reported `observed`. */
function plan(o: {
  generation?: number;
  observed?: number;
  paused?: boolean;
  abort?: boolean;
  phase?: string;
  workflow?: boolean;
  deleting?: boolean;
}): MaintenancePlan {
  return {
    apiVersion: 'maintenance.drainflow.dev/v1alpha1',
    kind: 'MaintenancePlan',
    metadata: {
      name: 'p',
      uid: 'uid-p',
      generation: o.generation ?? 2,
      ...(o.deleting ? { deletionTimestamp: '2026-12-05T01:47:02Z' } : {}),
    },
    spec: {
      nodeNames: ['n1'],
      ...(o.paused !== undefined ? { paused: o.paused } : {}),
      ...(o.abort !== undefined ? { abort: o.abort } : {}),
    },
    status: {
      phase: o.phase ?? 'Running',
      observedGeneration: o.observed ?? 1,
      ...(o.workflow === false ? {} : { workflow: { workflowId: 'maintenanceplan-p-uid-p' } }),
    },
  } as unknown as MaintenancePlan;
}

describe('pendingStops', () => {
  const cases: { name: string; plan: MaintenancePlan; stops: string[] }[] = [
    { name: 'paused while no operator led: pause', plan: plan({ paused: true }), stops: ['pause'] },
    { name: 'aborted while no operator led: abort', plan: plan({ abort: true }), stops: ['abort'] },
    { name: 'both, pause first', plan: plan({ paused: true, abort: true }), stops: ['pause', 'abort'] },
    { name: 'a resume waits for the leader', plan: plan({ paused: false }), stops: [] },
    {
      name: 'the workflow has seen this generation: nothing',
      plan: plan({ paused: true, generation: 2, observed: 2 }),
      stops: [],
    },
    { name: 'a final phase: nothing', plan: plan({ paused: true, phase: 'Drained' }), stops: [] },
    { name: 'a failed plan: nothing', plan: plan({ abort: true, phase: 'Failed' }), stops: [] },
    {
      name: 'no workflow started yet (nothing evicts): nothing',
      plan: plan({ paused: true, workflow: false }),
      stops: [],
    },
    {
      name: 'deleted while no operator led: abort (deleting a plan aborts it)',
      plan: plan({ deleting: true }),
      stops: ['abort'],
    },
    {
      name: 'deleted, the workflow has seen every generation: abort all the same',
      plan: plan({ deleting: true, generation: 2, observed: 2 }),
      stops: ['abort'],
    },
    {
      name: 'deleted and paused: only the abort',
      plan: plan({ deleting: true, paused: true }),
      stops: ['abort'],
    },
    {
      name: 'deleted in a final phase (Drained: nothing evicts; the leader hands back): nothing',
      plan: plan({ deleting: true, phase: 'Drained' }),
      stops: [],
    },
    {
      name: 'deleted before its workflow started: nothing',
      plan: plan({ deleting: true, workflow: false }),
      stops: [],
    },
    {
      name: 'a Paused plan the workflow has not seen the generation of: pause (a repeat is a no-op)',
      plan: plan({ paused: true, phase: 'Paused' }),
      stops: ['pause'],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.deepEqual(pendingStops(c.plan), c.stops);
    });
});
