/**
 * The pure parts of `npm run demo` (src/cli/demo.ts): the operator and worker ports from
 * DRAINFLOW_OPERATOR_PORT / DRAINFLOW_WORKER_PORT, and the rolling timeline node by node.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MaintenancePlanStatus, NodeStatus } from '../../src/api/plan.js';
import type { V1Node } from '../../src/k8s/client.js';
import {
  DEMO_PORTS,
  demoPorts,
  earlierDemo,
  schedulableNode,
  kernelPatchHook,
  nodeMoment,
  recordTimeline,
  type TimelineEntry,
} from '../../src/cli/demo.js';
import { MaintenancePlanSpecSchema } from '../../src/api/plan.js';

describe('demo ports', () => {
  const ok: [string, NodeJS.ProcessEnv, { operator: number; worker: number }][] = [
    ['unset: the demo defaults', {}, { ...DEMO_PORTS }],
    [
      'both set',
      { DRAINFLOW_OPERATOR_PORT: '20512', DRAINFLOW_WORKER_PORT: '20513' },
      { operator: 20512, worker: 20513 },
    ],
    ['only the operator port', { DRAINFLOW_OPERATOR_PORT: '9000' }, { operator: 9000, worker: 18081 }],
    ['only the worker port', { DRAINFLOW_WORKER_PORT: '9001' }, { operator: 18080, worker: 9001 }],
  ];
  for (const [what, env, want] of ok) it(what, () => assert.deepEqual(demoPorts(env), want));

  const bad: [string, NodeJS.ProcessEnv, RegExp][] = [
    [
      'not a number',
      { DRAINFLOW_OPERATOR_PORT: 'http' },
      /invalid setting --operator-port \/ DRAINFLOW_OPERATOR_PORT: must be a port number 0-65535, got "http"/,
    ],
    ['out of range', { DRAINFLOW_WORKER_PORT: '70000' }, /DRAINFLOW_WORKER_PORT: must be a port number/],
    ['empty', { DRAINFLOW_WORKER_PORT: '' }, /DRAINFLOW_WORKER_PORT: must not be empty/],
    [
      '0 (any port)',
      { DRAINFLOW_OPERATOR_PORT: '0' },
      /DRAINFLOW_OPERATOR_PORT: the demo needs a fixed port/,
    ],
    [
      'the same port twice',
      { DRAINFLOW_OPERATOR_PORT: '9000', DRAINFLOW_WORKER_PORT: '9000' },
      /both are 9000; the operator and the worker need a port each/,
    ],
  ];
  for (const [what, env, want] of bad)
    it(`refused: ${what}`, () => assert.throws(() => demoPorts(env), want));
});

describe('the rolling demo', () => {
  it("its hook is valid against the plan's schema", () => {
    const spec = MaintenancePlanSpecSchema.safeParse({
      nodeNames: ['demo-node-0'],
      uncordon: 'AfterEachNode',
      hooks: kernelPatchHook('drainflow-demo'),
    });
    assert.ok(spec.success, JSON.stringify(spec.error?.issues));
  });

  const JOB = 'drainflow-demo/drainflow-after-demo-node-0-1c0c4ffa';
  const moments: [string, NodeStatus, string][] = [
    ['pending', { name: 'a', phase: 'Pending', podsTotal: 0, podsEvicted: 0 }, 'Pending'],
    [
      'a reason equal to the phase is not repeated',
      {
        name: 'a',
        phase: 'Drained',
        reason: 'Drained',
        message: 'all 3 pod(s) evicted',
        podsTotal: 3,
        podsEvicted: 3,
      },
      'Drained — all 3 pod(s) evicted',
    ],
    [
      'a running hook, without the message that repeats it',
      {
        name: 'a',
        phase: 'Drained',
        reason: 'HookRunning',
        message: 'afterDrain hook running',
        podsTotal: 3,
        podsEvicted: 3,
        hook: { name: 'afterDrain', phase: 'Running', ref: JOB },
      },
      `Drained (HookRunning); afterDrain hook Running (Job ${JOB})`,
    ],
    [
      'handed back',
      {
        name: 'a',
        phase: 'Released',
        reason: 'HandedBack',
        message: 'drained; afterDrain hook succeeded; uncordoned',
        podsTotal: 3,
        podsEvicted: 3,
        hook: { name: 'afterDrain', phase: 'Succeeded', ref: 'wf-afterDrain' },
      },
      'Released (HandedBack); afterDrain hook Succeeded (workflow wf-afterDrain) — drained; afterDrain hook succeeded; uncordoned',
    ],
  ];
  for (const [what, n, want] of moments)
    it(`timeline text: ${what}`, () => assert.equal(nodeMoment(n), want));

  it('the timeline has one entry per change of a node, not per poll', () => {
    const timeline: TimelineEntry[] = [];
    const seen = new Map<string, string>();
    const st = (
      phase: NodeStatus['phase'],
      evicted: number,
      hook?: NodeStatus['hook'],
    ): MaintenancePlanStatus => ({
      phase: 'Running',
      nodes: [
        { name: 'a', phase, podsTotal: 2, podsEvicted: evicted, ...(hook ? { hook } : {}) },
        { name: 'b', phase: 'Pending', podsTotal: 0, podsEvicted: 0 },
      ],
    });
    recordTimeline(timeline, seen, st('Draining', 0), 1);
    recordTimeline(timeline, seen, st('Draining', 1), 2); // pods counted: not a new moment
    recordTimeline(timeline, seen, st('Drained', 2, { name: 'afterDrain', phase: 'Running' }), 3);
    recordTimeline(timeline, seen, st('Drained', 2, { name: 'afterDrain', phase: 'Succeeded' }), 4);
    assert.deepEqual(
      timeline.map((e) => `${e.seconds} ${e.node} ${e.text}`),
      [
        '1 a Draining',
        '1 b Pending',
        '3 a Drained; afterDrain hook Running',
        '4 a Drained; afterDrain hook Succeeded',
      ],
    );
  });
});

describe('an earlier demo found at start-up', () => {
  const running = { phase: 'Running', deleting: false };
  const rows: {
    what: string;
    plan: { phase?: string; deleting: boolean } | undefined;
    live: boolean;
    replace?: boolean;
    want: 'none' | 'remove' | 'refuse';
  }[] = [
    { what: 'none there', plan: undefined, live: true, want: 'none' },
    {
      what: 'a running plan whose drainflow still runs: left alone',
      plan: running,
      live: true,
      want: 'refuse',
    },
    {
      what: 'a plan not started yet whose drainflow runs',
      plan: { deleting: false },
      live: true,
      want: 'refuse',
    },
    {
      what: 'a paused plan whose drainflow runs',
      plan: { phase: 'Paused', deleting: false },
      live: true,
      want: 'refuse',
    },
    { what: '--replace removes it anyway', plan: running, live: true, replace: true, want: 'remove' },
    {
      what: 'no live drainflow: a demo stopped with Ctrl-C or killed',
      plan: running,
      live: false,
      want: 'remove',
    },
    {
      what: 'an ended plan (Completed) is a leftover',
      plan: { phase: 'Completed', deleting: false },
      live: true,
      want: 'remove',
    },
    {
      what: 'a Drained plan (--keep) is a leftover',
      plan: { phase: 'Drained', deleting: false },
      live: true,
      want: 'remove',
    },
    { what: 'a plan being deleted', plan: { phase: 'Running', deleting: true }, live: true, want: 'remove' },
  ];
  for (const r of rows)
    it(r.what, () => assert.equal(earlierDemo(r.plan, r.live, r.replace ?? false), r.want));
});

describe('a demo node the scheduler may use', () => {
  const ready = { conditions: [{ type: 'Ready', status: 'True' }] };
  const rows: { what: string; node: V1Node; want: boolean }[] = [
    { what: 'Ready, no taint', node: { status: ready }, want: true },
    {
      what: 'Ready but the not-ready taint not yet removed',
      node: {
        status: ready,
        spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] },
      },
      want: false,
    },
    {
      what: 'Ready, a taint of its own (not the controllers)',
      node: { status: ready, spec: { taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] } },
      want: true,
    },
    {
      what: 'not Ready',
      node: { status: { conditions: [{ type: 'Ready', status: 'False' }] } },
      want: false,
    },
    { what: 'no status yet', node: {}, want: false },
  ];
  for (const r of rows) it(r.what, () => assert.equal(schedulableNode(r.node), r.want));
});
