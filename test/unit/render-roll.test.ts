/**
 * The rolling-maintenance lines of `drainflow status` / `watch` (src/cli/render-roll.ts and
 * src/cli/render.ts): a node's hook (name, phase, started, Job or workflow, message), how to
 * release a node waiting for its per-node release or blocked by a failed hook, the words of
 * `drainflow release P --node N`; and, checked here too, that the node deadline, the deadline
 * action and the next window start are printed, and what a plan whose nodes have not started says.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MaintenancePlanStatus, NodeStatus } from '../../src/api/plan.js';
import { renderPlan } from '../../src/cli/render.js';
import { handBackWords, hookLine, releaseHint, releaseNodeWords } from '../../src/cli/render-roll.js';

const NOW = Date.parse('2026-12-01T20:00:00Z');
const STARTED = '2026-12-01T19:59:48.000Z';
const JOB = 'drainflow-system/drainflow-after-n1-0a1b2c3d';
const node = (over: Partial<NodeStatus>): NodeStatus => ({
  name: 'n1',
  phase: 'Drained',
  podsTotal: 2,
  podsEvicted: 2,
  ...over,
});

describe('the hook line of a node', () => {
  const cases: [string, NodeStatus['hook'], string | undefined][] = [
    ['no hook', undefined, undefined],
    [
      'a Job running: for how long, since when, which Job',
      { name: 'afterDrain', phase: 'Running', started: STARTED, ref: JOB },
      `afterDrain hook Running for 12 s (started ${STARTED}; Job ${JOB})`,
    ],
    [
      'a child workflow that succeeded',
      { name: 'beforeDrain', phase: 'Succeeded', started: STARTED, ref: 'node-wf-beforeDrain' },
      `beforeDrain hook Succeeded (started ${STARTED}; workflow node-wf-beforeDrain)`,
    ],
    [
      'a failed hook with its message',
      { name: 'afterDrain', phase: 'Failed', started: STARTED, ref: JOB, message: 'health check failed' },
      `afterDrain hook Failed (started ${STARTED}; Job ${JOB}): health check failed`,
    ],
    [
      'no start time recorded',
      { name: 'afterDrain', phase: 'Running', ref: JOB },
      `afterDrain hook Running (Job ${JOB})`,
    ],
    ['nothing but name and phase', { name: 'afterDrain', phase: 'Running' }, 'afterDrain hook Running'],
  ];
  for (const [what, hook, want] of cases)
    it(what, () => assert.equal(hookLine(hook ? { hook } : {}, NOW), want));
});

describe('how to release a waiting node', () => {
  const how = 'drainflow release p --node n1, or kubectl annotate node n1 drainflow.dev/release=true';
  const cases: [string, NodeStatus, string | undefined, string | undefined][] = [
    [
      'drained, waiting for its per-node release',
      node({ reason: 'AwaitingRelease' }),
      'AfterEachNode',
      `waiting for its per-node release: ${how}`,
    ],
    [
      'blocked by a failed beforeDrain hook: handed back undrained',
      node({
        phase: 'Blocked',
        reason: 'HookFailed',
        podsEvicted: 0,
        hook: { name: 'beforeDrain', phase: 'Failed' },
      }),
      'AfterEachNode',
      `fix the node, then hand it back undrained (it ends Skipped): ${how}; or abort the plan`,
    ],
    [
      'blocked by a failed afterDrain hook',
      node({ phase: 'Blocked', reason: 'HookFailed', hook: { name: 'afterDrain', phase: 'Failed' } }),
      'AfterEachNode',
      `fix the node, then hand it back: ${how}; or abort the plan`,
    ],
    [
      'a failed hook without AfterEachNode: a per-node release is refused, so no hint',
      node({ phase: 'Blocked', reason: 'HookFailed', hook: { name: 'afterDrain', phase: 'Failed' } }),
      'OnRelease',
      undefined,
    ],
    ['a plan whose spec is not known', node({ reason: 'AwaitingRelease' }), undefined, undefined],
    ['a node still draining', node({ phase: 'Draining', podsEvicted: 1 }), 'AfterEachNode', undefined],
    ['a node handed back', node({ phase: 'Released', reason: 'HandedBack' }), 'AfterEachNode', undefined],
  ];
  for (const [what, n, uncordon, want] of cases)
    it(what, () => assert.equal(releaseHint('p', n, uncordon), want));
});

describe('what `drainflow release P --node N` says', () => {
  const cases: [string, NodeStatus | undefined, RegExp][] = [
    [
      'after a failed beforeDrain hook: handed back undrained, Skipped',
      node({ phase: 'Blocked', reason: 'HookFailed', hook: { name: 'beforeDrain', phase: 'Failed' } }),
      /node phase Blocked\); its beforeDrain hook failed, so it is handed back undrained now \(phase Skipped\)/,
    ],
    [
      'after a failed afterDrain hook: handed back now',
      node({ phase: 'Blocked', reason: 'HookFailed', hook: { name: 'afterDrain', phase: 'Failed' } }),
      /its afterDrain hook failed: it is handed back \(uncordoned\) now/,
    ],
    [
      'drained and waiting: handed back now',
      node({ reason: 'AwaitingRelease' }),
      /it is drained: it is handed back \(uncordoned\) now/,
    ],
    [
      'its afterDrain hook runs: the hook hands it back',
      node({ reason: 'HookRunning', hook: { name: 'afterDrain', phase: 'Running' } }),
      /its afterDrain hook runs: its success hands the node back/,
    ],
    [
      'still draining: once drained',
      node({ phase: 'Draining', podsEvicted: 0 }),
      /node phase Draining\); it is handed back \(uncordoned\) once drained/,
    ],
    ['already handed back undrained', node({ phase: 'Skipped' }), /it has been handed back undrained/],
    [
      'no node in the answer',
      undefined,
      /node phase unknown\); it is handed back \(uncordoned\) once drained/,
    ],
  ];
  for (const [what, n, want] of cases)
    it(what, () => {
      const text = releaseNodeWords('p', 'n1', n);
      assert.match(text, /^release: node n1 of plan p accepted by the workflow/);
      assert.match(text, want);
      assert.doesNotMatch(n?.hook?.name === 'beforeDrain' ? text : '', /once drained/);
    });
});

describe('what `drainflow release P` and `drainflow abort P` say becomes of the nodes', () => {
  const cases: { action: 'release' | 'abort'; uncordon?: string; says: RegExp }[] = [
    {
      action: 'release',
      uncordon: 'OnRelease',
      says: /the drained nodes are uncordoned \(uncordon OnRelease\)/,
    },
    {
      action: 'release',
      uncordon: 'OnDelete',
      says: /stay cordoned until the plan is deleted \(uncordon OnDelete\)/,
    },
    { action: 'release', says: /stay cordoned until the plan is deleted \(uncordon OnDelete\)/ },
    { action: 'release', uncordon: 'Never', says: /stay cordoned \(uncordon Never\)/ },
    {
      action: 'release',
      uncordon: 'AfterEachNode',
      says: /every node is handed back \(uncordoned\) once drained/,
    },
    {
      action: 'abort',
      uncordon: 'OnDelete',
      says: /the nodes this plan cordoned are uncordoned \(uncordon OnDelete\)/,
    },
    { action: 'abort', uncordon: 'OnRelease', says: /the nodes this plan cordoned are uncordoned/ },
    { action: 'abort', uncordon: 'Never', says: /stay cordoned \(uncordon Never\)/ },
  ];
  for (const c of cases)
    it(`${c.action} with uncordon ${c.uncordon ?? 'unset'}`, () => {
      const words = handBackWords(c.action, c.uncordon);
      assert.match(words, /^; /);
      assert.match(words, c.says);
    });
});

describe('renderPlan of a rolling maintenance', () => {
  const plan = (status: MaintenancePlanStatus, uncordon = 'AfterEachNode') => ({
    metadata: { name: 'p', uid: 'u' },
    spec: { uncordon: uncordon as 'AfterEachNode' },
    status,
  });
  const running = (
    nodes: NodeStatus[],
    over: Partial<MaintenancePlanStatus> = {},
  ): MaintenancePlanStatus => ({
    phase: 'Running',
    reason: 'Draining',
    message: 'draining 2 node(s)',
    nodes,
    evictionProgress: { total: 2, evicted: 2, pending: 0, failed: 0, attempts: 2, tooManyRequests: 0 },
    ...over,
  });

  it('shows the hook of each node under it', () => {
    const text = renderPlan(
      plan(
        running([
          node({
            reason: 'HookRunning',
            message: 'afterDrain hook running',
            hook: { name: 'afterDrain', phase: 'Running', started: STARTED, ref: JOB },
          }),
          node({ name: 'n2', phase: 'Pending', podsTotal: 0, podsEvicted: 0 }),
        ]),
      ),
      NOW,
    );
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('  node n1 '));
    assert.equal(lines[at + 1], `      HookRunning: afterDrain hook running`);
    assert.equal(lines[at + 2], `      afterDrain hook Running for 12 s (started ${STARTED}; Job ${JOB})`);
    assert.match(text, /node n2 +Pending[^\n]*\n {6}not started yet: nodes start in plan order/);
  });

  it('says how to release a node waiting for its per-node release, by name, once', () => {
    const text = renderPlan(
      plan(
        running([
          node({
            reason: 'AwaitingRelease',
            message: 'drained; waiting for a per-node release (drainflow release PLAN --node NODE, …)',
          }),
        ]),
      ),
      NOW,
    );
    assert.match(
      text,
      /waiting for its per-node release: drainflow release p --node n1, or kubectl annotate/,
    );
    assert.doesNotMatch(text, /PLAN --node NODE/, 'the generic message is replaced by the named hint');
  });

  it('shows the message of a node handed back, with no release hint', () => {
    const text = renderPlan(
      plan(
        running([
          node({
            phase: 'Released',
            reason: 'HandedBack',
            message: 'drained; afterDrain hook succeeded; uncordoned',
            hook: { name: 'afterDrain', phase: 'Succeeded', started: STARTED, ref: JOB },
          }),
        ]),
      ),
      NOW,
    );
    assert.match(text, /HandedBack: drained; afterDrain hook succeeded; uncordoned/);
    assert.match(text, /afterDrain hook Succeeded/);
    assert.doesNotMatch(text, /release p --node/);
  });

  it('no release hint once the plan is in a final phase', () => {
    const text = renderPlan(
      plan(running([node({ reason: 'AwaitingRelease' })], { phase: 'Blocked', reason: 'DeadlineExceeded' })),
      NOW,
    );
    assert.doesNotMatch(text, /release p --node/);
  });

  it("prints the node's deadline, the deadline action and the next window start", () => {
    const text = renderPlan(
      plan(
        running([node({ phase: 'Draining', podsEvicted: 1, deadline: '2026-12-01T20:05:00.000Z' })], {
          deadline: '2026-12-01T21:00:00.000Z',
          deadlineAction: {
            policy: 'SkipNode',
            at: '2026-12-01T20:05:00.000Z',
            nodes: ['n1'],
            message: 'at its deadline a node not drained is handed back',
          },
          window: {
            open: true,
            currentEnd: '2026-12-01T20:30:00.000Z',
            nextStart: '2026-12-02T19:00:00.000Z',
          },
        }),
      ),
      NOW,
    );
    assert.match(text, /node n1 +Draining .*deadline in 300 s \(2026-12-01T20:05:00.000Z\)/);
    assert.match(text, /deadline in 3600 s \(2026-12-01T21:00:00.000Z\)/);
    assert.match(text, /at the deadline \(onDeadline SkipNode, the first in 300 s\): at its deadline/);
    assert.match(text, /next opens 2026-12-02T19:00:00.000Z/);
  });

  it('a running plan whose nodes have not started says so instead of 0/0 pods', () => {
    const text = renderPlan(
      plan(
        running(
          [
            node({ phase: 'Pending', podsTotal: 0, podsEvicted: 0 }),
            node({ name: 'n2', phase: 'Pending', podsTotal: 0, podsEvicted: 0 }),
          ],
          {
            evictionProgress: {
              total: 0,
              evicted: 0,
              pending: 0,
              failed: 0,
              attempts: 0,
              tooManyRequests: 0,
            },
          },
        ),
      ),
      NOW,
    );
    assert.match(text, /pods: none counted yet: no node is claimed yet/);
    assert.doesNotMatch(text, /0\/0 evicted/);
  });
});
