/**
 * What a spec flag can still do on a plan that has ended (src/api/ended-plan.ts), and the CLI's
 * refusal built on it (src/cli/plans.ts, endedRefusal): one row per phase/reason/uncordon a plan can
 * be in when a control or a kubectl patch sets a flag.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { flagHasEffect, type EndedPlanView, type SpecFlagName } from '../../src/api/ended-plan.js';
import { endedRefusal } from '../../src/cli/plans.js';
import type { ControlAction } from '../../src/contract/plan-messages.js';
import type { PlanPhase } from '../../src/api/reasons.js';

const plan = (phase?: PlanPhase, reason?: string, uncordon?: string): EndedPlanView => ({
  phase,
  reason,
  uncordon,
});

describe('flagHasEffect', () => {
  const table: Array<[string, SpecFlagName, EndedPlanView, boolean]> = [
    ['no phase yet: for the workflow to judge', 'paused', plan(), true],
    ['Running: pause counts', 'paused', plan('Running', 'Draining'), true],
    ['Drained (waits for a release): release counts', 'release', plan('Drained', 'AllNodesDrained'), true],
    ['Blocked: abort counts', 'abort', plan('Blocked', 'DeadlineExceeded'), true],
    [
      'Failed with its workflow still holding the nodes: release counts',
      'release',
      plan('Failed', 'NodeWorkflowFailed'),
      true,
    ],
    ['Completed: paused has no effect', 'paused', plan('Completed', 'Released'), false],
    ['Completed: release has no effect (released already)', 'release', plan('Completed', 'Released'), false],
    [
      'Completed with uncordon OnDelete (default): abort hands the nodes back now',
      'abort',
      plan('Completed', 'Released'),
      true,
    ],
    [
      'Completed with uncordon OnRelease: abort has no effect',
      'abort',
      plan('Completed', 'Released', 'OnRelease'),
      false,
    ],
    [
      'Completed with uncordon Never: abort has no effect',
      'abort',
      plan('Completed', 'Released', 'Never'),
      false,
    ],
    ['Aborted: abort has no effect', 'abort', plan('Aborted', 'Aborted'), false],
    ['Aborted: release has no effect', 'release', plan('Aborted', 'Aborted'), false],
    ['Failed/InvalidSpec: paused has no effect', 'paused', plan('Failed', 'InvalidSpec'), false],
    ['Failed/InvalidSpec: abort has no effect', 'abort', plan('Failed', 'InvalidSpec'), false],
    [
      'Failed/WorkflowTerminated: abort has the operator hand the nodes back',
      'abort',
      plan('Failed', 'WorkflowTerminated'),
      true,
    ],
    [
      'Failed/WorkflowTerminated: release has no effect',
      'release',
      plan('Failed', 'WorkflowTerminated'),
      false,
    ],
    ['Previewed: abort has no effect', 'abort', plan('Previewed', 'NoBlockers'), false],
  ];
  for (const [name, flag, view, effect] of table)
    it(name, () => assert.equal(flagHasEffect(flag, view), effect));
});

describe('endedRefusal (the CLI, with or without a worker)', () => {
  const st = (phase: PlanPhase, reason: string, uncordon?: string) => ({
    status: { phase, reason },
    ...(uncordon ? { spec: { uncordon } } : {}),
  });
  const table: Array<[string, ControlAction, ReturnType<typeof st>, string | undefined]> = [
    [
      'release of a Completed plan: refused',
      'release',
      st('Completed', 'Released', 'OnDelete'),
      'plan "p" has ended (plan phase Completed/Released); nothing to release',
    ],
    [
      'abort of a Completed OnDelete plan: not refused (hands the nodes back)',
      'abort',
      st('Completed', 'Released', 'OnDelete'),
      undefined,
    ],
    [
      'abort of an Aborted plan: refused',
      'abort',
      st('Aborted', 'Aborted'),
      'plan "p" has ended (plan phase Aborted/Aborted); nothing to abort',
    ],
    [
      'resume of a Failed plan whose workflow closed: refused',
      'resume',
      st('Failed', 'ResolveFailed'),
      'plan "p" has ended (plan phase Failed/ResolveFailed); nothing to resume',
    ],
    ['release of a Drained plan: not refused', 'release', st('Drained', 'AllNodesDrained'), undefined],
    ['pause of a Running plan: not refused', 'pause', st('Running', 'Draining'), undefined],
  ];
  for (const [name, action, p, words] of table)
    it(name, () => assert.equal(endedRefusal('p', action, p), words));
});
