/**
 * The operator's reconcile decision (src/operator/decide.ts), table-tested: one row per situation a
 * plan can be in, with the actions and the memory the controller takes and keeps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSpec, type MaintenancePlanSpecInput } from '../../src/api/plan.js';
import type { MaintenancePlanStatus } from '../../src/api/plan.js';
import { closedWorkflowStatus } from '../../src/operator/closed-workflow.js';
import { runningPlansQuery } from '../../src/operator/orphans.js';
import { expectsRunningWorkflow } from '../../src/api/closed-workflow.js';
import type { PlanPhase } from '../../src/api/reasons.js';
import { MaintenancePlanStatusSchema } from '../../src/api/plan.js';
import {
  awaitingWorkerStatus,
  closedWorkflowAction,
  decide,
  deletionWaitEvent,
  mayAbortOnForget,
  orphanVerdict,
  type OrphanCandidate,
  specChangeIgnored,
  missingNodeCount,
  needsWorkflow,
  planSignals,
  temporalReach,
  type Action,
  type Decision,
  type Flags,
  type Memory,
  type Observation,
  type PlanView,
  type SignalName,
  type WorkflowState,
} from '../../src/operator/decide.js';

const WF = 'maintenanceplan-p-u1';

function view(over: Partial<PlanView> = {}): PlanView {
  return {
    name: 'p',
    uid: 'u1',
    generation: 1,
    deleting: false,
    hasFinalizer: true,
    observedGeneration: 0,
    nodesTotal: 0,
    statusNodes: 0,
    nodeNames: 1,
    ...over,
  };
}

function obs(
  plan: Partial<PlanView>,
  opts: {
    spec?: MaintenancePlanSpecInput | 'invalid';
    memory?: Memory;
    workflow?: WorkflowState;
    resync?: boolean;
    temporalNamespace?: string;
  } = {},
): Observation {
  const o: Observation = { plan: view(plan), workflowId: WF };
  if (opts.spec === 'invalid') o.invalid = 'spec.nodeNames[0]: must be a node name';
  else o.spec = parseSpec(opts.spec ?? { nodeNames: ['a'] });
  if (opts.memory) o.memory = opts.memory;
  if (opts.workflow) o.workflow = opts.workflow;
  if (opts.resync) o.resync = true;
  if (opts.temporalNamespace) o.temporalNamespace = opts.temporalNamespace;
  return o;
}

/** The relayed flags; spec.drainTimeoutSeconds as the fixtures' specs default it (3600). */
const flags = (paused = false, release = false, abort = false, drainTimeoutSeconds = 3600): Flags => ({
  paused,
  release,
  abort,
  drainTimeoutSeconds,
});
const mem = (over: Partial<Memory> = {}): Memory => ({ name: 'p', generation: 1, started: true, ...over });
const running: WorkflowState = { state: 'running' };
const absent: WorkflowState = { state: 'absent' };
const closed: WorkflowState = { state: 'closed', status: 'COMPLETED' };
const terminated: WorkflowState = { state: 'closed', status: 'TERMINATED' };

/** The actions without their log lines, as compact strings. */
function steps(d: Decision): string[] {
  return d.actions
    .filter((a): a is Exclude<Action, { type: 'log' }> => a.type !== 'log')
    .map((a) => {
      switch (a.type) {
        case 'cleanup':
          return `cleanup(${a.running ? 'running' : 'closed'}${a.sendAbort ? ', abort' : ''}${a.taskQueue ? `, queue ${a.taskQueue}` : ''})`;
        case 'ensureFinalizer':
          return a.stopIfGone ? 'finalizer' : 'finalizer(keep going)';
        case 'signal':
          return a.signal;
        case 'markInvalid':
          return 'markInvalid';
        case 'warnEvent':
          return `event ${a.reason}`;
        case 'normalEvent':
          return `normal ${a.reason}`;
        case 'writeNodeCount':
          return `nodesTotal=${a.nodesTotal}`;
        case 'closedWorkflow':
          return `closed ${a.reason}${a.handBack ? ', hand back' : ''}${a.warn ? ', warn' : ''}`;
        case 'markAwaitingWorker':
          return `awaitingWorker${a.taskQueue ? `(${a.taskQueue})` : ''}`;
        default:
          return a.type;
      }
    });
}

function logs(d: Decision): string[] {
  return d.actions.flatMap((a) => (a.type === 'log' && a.level !== 'debug' ? [a.msg] : []));
}

describe('decide', () => {
  const rows: Array<{
    name: string;
    obs: Observation;
    steps: string[];
    before?: Memory;
    after?: Memory;
    log?: RegExp;
  }> = [
    // ---- deletion
    {
      name: 'deleted without the finalizer: nothing',
      obs: obs({ deleting: true, hasFinalizer: false }),
      steps: [],
    },
    {
      name: 'deleted, cleaned up already: nothing',
      obs: obs({ deleting: true }, { memory: mem({ cleanedUp: true }) }),
      steps: [],
    },
    {
      name: 'deleted while the workflow runs: abort, then wait and hand back',
      obs: obs({ deleting: true }, { memory: mem(), workflow: running }),
      steps: ['cleanup(running, abort)'],
      before: mem(),
    },
    {
      name: 'deleted while running on a known task queue: the wait checks that queue for a worker',
      obs: obs({ deleting: true }, { memory: mem(), workflow: { state: 'running', taskQueue: 'q1' } }),
      steps: ['cleanup(running, abort, queue q1)'],
      before: mem(),
    },
    {
      name: 'deleted while running, abort sent already: only wait',
      obs: obs({ deleting: true }, { memory: mem({ abortSent: true }), workflow: running }),
      steps: ['cleanup(running)'],
      before: mem({ abortSent: true }),
    },
    {
      name: 'deleted, first sight, running: remembered as started',
      obs: obs({ deleting: true, generation: 3 }, { workflow: running }),
      steps: ['cleanup(running, abort)'],
      before: { name: 'p', generation: 3, started: true },
    },
    {
      name: 'deleted, workflow closed: hand back at once',
      obs: obs({ deleting: true }, { memory: mem(), workflow: closed }),
      steps: ['cleanup(closed)'],
      before: mem(),
    },
    {
      name: 'deleted, no workflow: hand back at once',
      obs: obs({ deleting: true }, { workflow: absent }),
      steps: ['cleanup(closed)'],
      before: { name: 'p', generation: 1, started: false },
    },
    // ---- no spec change
    {
      name: 'status-only update: nothing (a debug line)',
      obs: obs({ observedGeneration: 1, phase: 'Running' }, { memory: mem({ relayed: flags() }) }),
      steps: [],
    },
    {
      name: 'status-only update of a plan that failed before resolving its nodes: fill in the count',
      obs: obs(
        { phase: 'Failed', reason: 'NodeNotFound', nodeNames: 3 },
        { memory: mem({ relayed: flags() }) },
      ),
      steps: ['nodesTotal=3'],
    },
    {
      name: 'a failed plan whose count is there: nothing',
      obs: obs({ phase: 'Failed', nodesTotal: 3, nodeNames: 3 }, { memory: mem() }),
      steps: [],
    },
    {
      name: 'a selector plan that matched no node: nothing (0 is its count)',
      obs: obs(
        { phase: 'Failed', reason: 'NoNodesMatched', nodeNames: 0 },
        { spec: { nodeSelector: { matchLabels: { a: 'b' } } }, memory: mem() },
      ),
      steps: [],
    },
    // ---- first sight, workflow exists (operator restarted)
    {
      name: 'restart, workflow running and caught up: adopt, no signal',
      obs: obs({ observedGeneration: 1, phase: 'Running' }, { workflow: running }),
      steps: ['finalizer(keep going)'],
      before: { name: 'p', generation: -1, started: true },
      after: { name: 'p', generation: 1, started: true, relayed: flags() },
      log: /workflow exists already/,
    },
    {
      name: 'restart, workflow running behind this generation: assert every flag',
      obs: obs(
        { generation: 2, observedGeneration: 1, phase: 'Running' },
        { spec: { nodeNames: ['a'], paused: true, release: true }, workflow: running },
      ),
      steps: ['finalizer(keep going)', 'pause', 'release', 'drainTimeout'],
      before: { name: 'p', generation: -1, started: true },
      after: { name: 'p', generation: 2, started: true, relayed: flags(true, true) },
    },
    {
      name: 'restart, workflow closed behind: adopt, no signal',
      obs: obs({ generation: 2, observedGeneration: 1 }, { workflow: closed }),
      steps: ['finalizer(keep going)'],
      before: { name: 'p', generation: -1, started: true },
      after: { name: 'p', generation: 2, started: true, relayed: flags() },
    },
    {
      name: 'restart, workflow exists, spec invalid: adopt, nothing relayed',
      obs: obs({ generation: 2, phase: 'Running' }, { spec: 'invalid', workflow: running }),
      steps: ['finalizer(keep going)'],
      before: { name: 'p', generation: -1, started: true },
      after: { name: 'p', generation: 2, started: true },
    },
    {
      name: 'restart, a failed plan without its count: adopt and fill in',
      obs: obs({ phase: 'Failed', observedGeneration: 1, nodeNames: 2 }, { workflow: closed }),
      steps: ['finalizer(keep going)', 'nodesTotal=2'],
      before: { name: 'p', generation: -1, started: true },
      after: { name: 'p', generation: 1, started: true, relayed: flags() },
    },
    // ---- no workflow yet
    {
      name: 'restart, workflow running, no status yet (no worker ran it): adopt, assert the flags, mark Pending on its task queue',
      obs: obs({}, { workflow: { state: 'running', taskQueue: 'q2' } }),
      steps: ['finalizer(keep going)', 'resume', 'drainTimeout', 'awaitingWorker(q2)'],
      before: { name: 'p', generation: -1, started: true },
      after: { name: 'p', generation: 1, started: true, relayed: flags() },
    },
    {
      name: 'restart, workflow terminated before any status: Failed, not marked Pending',
      obs: obs({}, { workflow: terminated }),
      steps: ['finalizer(keep going)', 'closed WorkflowTerminated, warn'],
      before: { name: 'p', generation: -1, started: true },
      after: {
        name: 'p',
        generation: 1,
        started: true,
        relayed: flags(),
        closedProjected: 'WorkflowTerminated',
      },
    },
    {
      name: 'restart, workflow cancelled before any status (describe() spells it CANCELLED): Failed',
      obs: obs({}, { workflow: { state: 'closed', status: 'CANCELLED' } }),
      steps: ['finalizer(keep going)', 'closed WorkflowCanceled, warn'],
      before: { name: 'p', generation: -1, started: true },
      after: {
        name: 'p',
        generation: 1,
        started: true,
        relayed: flags(),
        closedProjected: 'WorkflowCanceled',
      },
    },
    {
      name: 'new plan: finalizer, then start, then Pending/AwaitingWorker',
      obs: obs({}, { workflow: absent }),
      steps: ['finalizer', 'startWorkflow', 'awaitingWorker'],
      before: { name: 'p', generation: -1, started: false },
      after: { name: 'p', generation: 1, started: true, relayed: flags() },
    },
    {
      name: 'new plan created paused: the start carries the flags',
      obs: obs({}, { spec: { nodeNames: ['a'], paused: true }, workflow: absent }),
      steps: ['finalizer', 'startWorkflow', 'awaitingWorker'],
      before: { name: 'p', generation: -1, started: false },
      after: { name: 'p', generation: 1, started: true, relayed: flags(true) },
    },
    {
      name: 'new plan, invalid spec: Failed/InvalidSpec, no workflow',
      obs: obs({}, { spec: 'invalid', workflow: absent }),
      steps: ['markInvalid'],
      before: { name: 'p', generation: -1, started: false },
      after: { name: 'p', generation: 1, started: false },
    },
    {
      name: 'new plan whose first window opens after its deadline: Failed/InvalidSpec, no workflow',
      obs: {
        ...obs({}, { workflow: absent }),
        startProblem: 'spec.windows: the first maintenance window opens at …',
      },
      steps: ['markInvalid'],
      before: { name: 'p', generation: -1, started: false },
      after: { name: 'p', generation: 1, started: false },
    },
    {
      name: 'the same problem once its workflow exists (first sight after a restart): adopted, not marked',
      obs: { ...obs({ phase: 'Running' }, { workflow: running }), startProblem: 'spec.windows: …' },
      steps: ['finalizer(keep going)', 'resume', 'drainTimeout'],
      before: { name: 'p', generation: -1, started: true },
      after: { name: 'p', generation: 1, started: true, relayed: flags() },
    },
    {
      name: 'a start that failed before: retried from memory, without asking Temporal',
      obs: obs({}, { memory: { name: 'p', generation: -1, started: false } }),
      steps: ['finalizer', 'startWorkflow', 'awaitingWorker'],
      before: { name: 'p', generation: -1, started: false },
      after: { name: 'p', generation: 1, started: true, relayed: flags() },
    },
    {
      name: 'a start retried after the workflow wrote its status: no Pending mark',
      obs: obs({ phase: 'Running' }, { memory: { name: 'p', generation: -1, started: false } }),
      steps: ['finalizer', 'startWorkflow'],
      before: { name: 'p', generation: -1, started: false },
      after: { name: 'p', generation: 1, started: true, relayed: flags() },
    },
    {
      name: 'the status records a workflow Temporal no longer knows: never re-run, Failed/WorkflowNotFound',
      obs: obs({ statusWorkflowId: WF }, { workflow: absent }),
      steps: ['finalizer', 'closed WorkflowNotFound, warn'],
      before: { name: 'p', generation: -1, started: false },
      after: {
        name: 'p',
        generation: 1,
        started: true,
        relayed: flags(),
        closedProjected: 'WorkflowNotFound',
      },
      log: /not starting it again/,
    },
    // ---- Temporal lost the plan's workflow (its database, its namespace)
    {
      name: 'first sight after a restart, Running, Temporal lost its workflow: Failed/WorkflowNotFound, one Warning',
      obs: obs(
        { statusWorkflowId: WF, statusWorkflowNamespace: 'default', phase: 'Running', observedGeneration: 1 },
        { workflow: absent, temporalNamespace: 'default' },
      ),
      steps: ['finalizer', 'closed WorkflowNotFound, warn'],
      before: { name: 'p', generation: -1, started: false },
      after: {
        name: 'p',
        generation: 1,
        started: true,
        relayed: flags(),
        closedProjected: 'WorkflowNotFound',
      },
    },
    {
      name: 'resync, Running, Temporal lost the workflow the status records: Failed/WorkflowNotFound, one Warning',
      obs: obs(
        { statusWorkflowId: WF, phase: 'Running', observedGeneration: 1 },
        { memory: mem({ relayed: flags() }), workflow: absent, resync: true },
      ),
      steps: ['closed WorkflowNotFound, warn'],
      before: mem({ relayed: flags() }),
      after: mem({ relayed: flags(), closedProjected: 'WorkflowNotFound' }),
    },
    {
      name: 'resync, Drained (holding its nodes for a release), workflow lost: Failed/WorkflowNotFound',
      obs: obs(
        { statusWorkflowId: WF, phase: 'Drained', observedGeneration: 1 },
        { memory: mem({ relayed: flags() }), workflow: absent, resync: true },
      ),
      steps: ['closed WorkflowNotFound, warn'],
      before: mem({ relayed: flags() }),
      after: mem({ relayed: flags(), closedProjected: 'WorkflowNotFound' }),
    },
    {
      name: 'resync, Pending/AwaitingWorker, the workflow it started is gone before a worker ran it: started again',
      obs: obs(
        { phase: 'Pending', reason: 'AwaitingWorker' },
        { memory: mem({ relayed: flags() }), workflow: absent, resync: true },
      ),
      steps: ['startWorkflow'],
      before: mem({ relayed: flags() }),
      after: mem({ relayed: flags() }),
      log: /no worker ever ran it; starting it again/,
    },
    {
      name: 'resync, Pending/Starting written by a worker (no workflow recorded yet), workflow gone: not started again',
      obs: obs(
        { phase: 'Pending', reason: 'Starting' },
        { memory: mem({ relayed: flags() }), workflow: absent, resync: true },
      ),
      steps: [],
    },
    {
      name: 'resync, the status records the workflow in another Temporal namespace: nothing (not this installation)',
      obs: obs(
        { statusWorkflowId: WF, statusWorkflowNamespace: 'other', phase: 'Running', observedGeneration: 1 },
        { memory: mem({ relayed: flags() }), workflow: absent, resync: true, temporalNamespace: 'default' },
      ),
      steps: [],
    },
    {
      name: 'resync, the status records another workflow ID (an older plan of that name): nothing',
      obs: obs(
        { statusWorkflowId: 'maintenanceplan-p-u0', phase: 'Running', observedGeneration: 1 },
        { memory: mem({ relayed: flags() }), workflow: absent, resync: true },
      ),
      steps: [],
    },
    {
      name: 'spec.abort on a Running plan whose workflow Temporal lost: hand back at once, Aborted/WorkflowNotFound',
      obs: obs(
        { generation: 2, statusWorkflowId: WF, phase: 'Running', observedGeneration: 1 },
        {
          spec: { nodeNames: ['a'], abort: true },
          memory: mem({ relayed: flags() }),
          workflow: absent,
        },
      ),
      steps: ['closed WorkflowNotFound, hand back, warn'],
      before: mem({ relayed: flags() }),
      after: mem({ generation: 2, relayed: flags(false, false, true), closedProjected: 'WorkflowNotFound' }),
    },
    {
      name: 'Failed/WorkflowNotFound (projected by an earlier operator), spec.abort: hand back, no second Warning',
      obs: obs(
        { statusWorkflowId: WF, phase: 'Failed', reason: 'WorkflowNotFound' },
        { spec: { nodeNames: ['a'], abort: true }, workflow: absent },
      ),
      steps: ['finalizer', 'closed WorkflowNotFound, hand back'],
      before: { name: 'p', generation: -1, started: false },
      after: {
        name: 'p',
        generation: 1,
        started: true,
        relayed: flags(false, false, true),
        closedProjected: 'WorkflowNotFound',
      },
    },
    {
      name: 'deleted, Temporal lost its workflow: the operator hands the nodes back itself and removes the finalizer',
      obs: obs(
        { deleting: true, statusWorkflowId: WF, phase: 'Failed', reason: 'WorkflowNotFound' },
        { memory: mem({ relayed: flags(), closedProjected: 'WorkflowNotFound' }), workflow: absent },
      ),
      steps: ['cleanup(closed)'],
      before: mem({ relayed: flags(), closedProjected: 'WorkflowNotFound' }),
    },
    // ---- spec change of a plan with a workflow
    {
      name: 'drainTimeoutSeconds raised: drainTimeout (the workflow extends its deadline), nothing else',
      obs: obs(
        { generation: 2, phase: 'Blocked', reason: 'DeadlineExceeded' },
        { spec: { nodeNames: ['a'], drainTimeoutSeconds: 7200 }, memory: mem({ relayed: flags() }) },
      ),
      steps: ['drainTimeout'],
      before: mem({ relayed: flags() }),
      after: mem({ generation: 2, relayed: flags(false, false, false, 7200) }),
    },
    {
      name: 'paused: pause',
      obs: obs(
        { generation: 2 },
        { spec: { nodeNames: ['a'], paused: true }, memory: mem({ relayed: flags() }) },
      ),
      steps: ['pause'],
      before: mem({ relayed: flags() }),
      after: mem({ generation: 2, relayed: flags(true) }),
    },
    {
      name: 'resumed: resume',
      obs: obs({ generation: 3 }, { memory: mem({ generation: 2, relayed: flags(true) }) }),
      steps: ['resume'],
      before: mem({ generation: 2, relayed: flags(true) }),
      after: mem({ generation: 3, relayed: flags() }),
    },
    {
      name: 'release and abort at once: release, then abort',
      obs: obs(
        { generation: 2 },
        {
          spec: { nodeNames: ['a'], release: true, abort: true },
          memory: mem({ relayed: flags() }),
          workflow: running,
        },
      ),
      steps: ['release', 'abort'],
      before: mem({ relayed: flags() }),
      after: mem({ generation: 2, relayed: flags(false, true, true) }),
    },
    {
      name: 'abort reset to false: no signal, a warning (an abort cannot be undone)',
      obs: obs({ generation: 3 }, { memory: mem({ generation: 2, relayed: flags(false, false, true) }) }),
      steps: [],
      before: mem({ generation: 2, relayed: flags(false, false, true) }),
      after: mem({ generation: 3, relayed: flags() }),
      log: /an abort cannot be undone/,
    },
    {
      name: 'a flag toggled and back (no change): the pause state restated',
      obs: obs({ generation: 4 }, { memory: mem({ generation: 3, relayed: flags() }) }),
      steps: ['resume'],
      before: mem({ generation: 3, relayed: flags() }),
      after: mem({ generation: 4, relayed: flags() }),
    },
    {
      name: 'spec changed to an invalid one: a Warning Event, nothing relayed',
      obs: obs({ generation: 2 }, { spec: 'invalid', memory: mem({ relayed: flags() }) }),
      steps: ['event InvalidSpec'],
      before: mem({ relayed: flags() }),
      after: mem({ generation: 2, relayed: flags() }),
      log: /spec changed to an invalid one/,
    },
    // ---- a workflow that closed behind the plan's back (terminated, failed, timed out, cancelled)
    {
      name: 'resync, workflow running: nothing',
      obs: obs(
        { observedGeneration: 1, phase: 'Running' },
        { memory: mem({ relayed: flags() }), workflow: running, resync: true },
      ),
      steps: [],
    },
    ...(
      [
        ['TERMINATED', 'WorkflowTerminated'],
        ['FAILED', 'WorkflowFailed'],
        ['TIMED_OUT', 'WorkflowTimedOut'],
        ['CANCELED', 'WorkflowCanceled'],
      ] as const
    ).map(([status, reason]) => ({
      name: `resync, workflow ${status} while Running: Failed/${reason}, a Warning Event, once`,
      obs: obs(
        { observedGeneration: 1, phase: 'Running' as const },
        { memory: mem({ relayed: flags() }), workflow: { state: 'closed' as const, status }, resync: true },
      ),
      steps: [`closed ${reason}, warn`],
      before: mem({ relayed: flags() }),
      after: mem({ relayed: flags(), closedProjected: reason }),
      log: /the workflow closed while the plan expected it to run/,
    })),
    {
      name: 'resync, workflow terminated while Drained (waiting for a release): Failed too',
      obs: obs(
        { observedGeneration: 1, phase: 'Drained' },
        { memory: mem({ relayed: flags() }), workflow: terminated, resync: true },
      ),
      steps: ['closed WorkflowTerminated, warn'],
      before: mem({ relayed: flags() }),
      after: mem({ relayed: flags(), closedProjected: 'WorkflowTerminated' }),
    },
    {
      name: 'resync, workflow terminated while Failed/NodeWorkflowFailed (a node failed; the workflow held the claims): Failed/WorkflowTerminated',
      obs: obs(
        { observedGeneration: 1, phase: 'Failed', reason: 'NodeWorkflowFailed' },
        { memory: mem({ relayed: flags() }), workflow: terminated, resync: true },
      ),
      steps: ['closed WorkflowTerminated, warn'],
      before: mem({ relayed: flags() }),
      after: mem({ relayed: flags(), closedProjected: 'WorkflowTerminated' }),
    },
    {
      name: 'spec.abort of a Failed/NodeWorkflowFailed plan whose workflow was then terminated: hand back',
      obs: obs(
        { generation: 2, observedGeneration: 1, phase: 'Failed', reason: 'NodeWorkflowFailed' },
        { spec: { nodeNames: ['a'], abort: true }, memory: mem({ relayed: flags() }), workflow: terminated },
      ),
      steps: ['closed WorkflowTerminated, hand back, warn'],
      before: mem({ relayed: flags() }),
      after: mem({
        generation: 2,
        relayed: flags(false, false, true),
        closedProjected: 'WorkflowTerminated',
      }),
    },
    {
      name: 'resync, workflow COMPLETED though the cache says Running: nothing (its last status write is on its way)',
      obs: obs(
        { observedGeneration: 1, phase: 'Running' },
        { memory: mem({ relayed: flags() }), workflow: closed, resync: true },
      ),
      steps: [],
    },
    {
      name: 'resync, workflow unknown to this Temporal: nothing (an operator on another Temporal fails no plan)',
      obs: obs(
        { observedGeneration: 1, phase: 'Running' },
        { memory: mem({ relayed: flags() }), workflow: absent, resync: true },
      ),
      steps: [],
    },
    {
      name: 'resync of a plan in a phase its workflow closes in: Temporal not asked',
      obs: obs(
        { observedGeneration: 1, phase: 'Completed' },
        { memory: mem({ relayed: flags() }), resync: true },
      ),
      steps: [],
    },
    {
      name: 'resync of a plan projected already: Temporal not asked',
      obs: obs(
        { observedGeneration: 1, phase: 'Running' },
        { memory: mem({ relayed: flags(), closedProjected: 'WorkflowTerminated' }), resync: true },
      ),
      steps: [],
    },
    {
      name: 'restart, workflow terminated while Running: adopt and mark Failed',
      obs: obs({ observedGeneration: 1, phase: 'Running' }, { workflow: terminated }),
      steps: ['finalizer(keep going)', 'closed WorkflowTerminated, warn'],
      before: { name: 'p', generation: -1, started: true },
      after: {
        name: 'p',
        generation: 1,
        started: true,
        relayed: flags(),
        closedProjected: 'WorkflowTerminated',
      },
    },
    {
      name: 'restart, workflow terminated, spec.abort set: adopt, hand back, mark Aborted',
      obs: obs(
        { generation: 2, observedGeneration: 1, phase: 'Running' },
        { spec: { nodeNames: ['a'], abort: true }, workflow: terminated },
      ),
      steps: ['finalizer(keep going)', 'closed WorkflowTerminated, hand back, warn'],
      before: { name: 'p', generation: -1, started: true },
      after: {
        name: 'p',
        generation: 2,
        started: true,
        relayed: flags(false, false, true),
        closedProjected: 'WorkflowTerminated',
      },
    },
    {
      name: 'restart, Failed/WorkflowTerminated before, spec.abort set: hand back, no second Warning',
      obs: obs(
        { generation: 2, observedGeneration: 1, phase: 'Failed', reason: 'WorkflowTerminated' },
        { spec: { nodeNames: ['a'], abort: true }, workflow: terminated },
      ),
      steps: ['finalizer(keep going)', 'closed WorkflowTerminated, hand back'],
      before: { name: 'p', generation: -1, started: true },
      after: {
        name: 'p',
        generation: 2,
        started: true,
        relayed: flags(false, false, true),
        closedProjected: 'WorkflowTerminated',
      },
    },
    {
      name: 'spec.abort set, workflow found terminated: hand back and mark Aborted, no signal',
      obs: obs(
        { generation: 2, phase: 'Running' },
        { spec: { nodeNames: ['a'], abort: true }, memory: mem({ relayed: flags() }), workflow: terminated },
      ),
      steps: ['closed WorkflowTerminated, hand back, warn'],
      before: mem({ relayed: flags() }),
      after: mem({
        generation: 2,
        relayed: flags(false, false, true),
        closedProjected: 'WorkflowTerminated',
      }),
    },
    {
      name: 'spec.abort on a plan marked Failed/WorkflowTerminated: hand back without asking Temporal',
      obs: obs(
        { generation: 2, phase: 'Failed', reason: 'WorkflowTerminated' },
        {
          spec: { nodeNames: ['a'], abort: true },
          memory: mem({ relayed: flags(), closedProjected: 'WorkflowTerminated' }),
        },
      ),
      steps: ['closed WorkflowTerminated, hand back'],
      before: mem({ relayed: flags(), closedProjected: 'WorkflowTerminated' }),
      after: mem({
        generation: 2,
        relayed: flags(false, false, true),
        closedProjected: 'WorkflowTerminated',
      }),
    },
    {
      name: 'spec.paused on a plan marked Failed/WorkflowTerminated: not relayed (nobody to signal), noted (it has ended)',
      obs: obs(
        { generation: 2, phase: 'Failed', reason: 'WorkflowTerminated' },
        {
          spec: { nodeNames: ['a'], paused: true },
          memory: mem({ relayed: flags(), closedProjected: 'WorkflowTerminated' }),
        },
      ),
      steps: ['normal SpecChangeIgnored'],
      before: mem({ relayed: flags(), closedProjected: 'WorkflowTerminated' }),
      after: mem({ generation: 2, relayed: flags(true), closedProjected: 'WorkflowTerminated' }),
      log: /spec change not relayed/,
    },
    {
      name: 'spec.abort on a plan Failed for another reason (NodeNotFound): the abort signal as before, noted (it has ended)',
      obs: obs(
        { generation: 2, phase: 'Failed', reason: 'NodeNotFound' },
        { spec: { nodeNames: ['a'], abort: true }, memory: mem({ relayed: flags() }) },
      ),
      steps: ['abort', 'normal SpecChangeIgnored'],
      before: mem({ relayed: flags() }),
      after: mem({ generation: 2, relayed: flags(false, false, true) }),
    },
    {
      name: 'spec.paused on a Completed plan: the signal as before, and one Normal SpecChangeIgnored',
      obs: obs(
        { generation: 3, observedGeneration: 2, phase: 'Completed', reason: 'Released' },
        {
          spec: { nodeNames: ['a'], paused: true, release: true },
          memory: mem({ generation: 2, relayed: flags(false, true) }),
        },
      ),
      steps: ['pause', 'normal SpecChangeIgnored'],
      before: mem({ generation: 2, relayed: flags(false, true) }),
      after: mem({ generation: 3, relayed: flags(true, true) }),
    },
    {
      name: 'the same generation at a resync: nothing again',
      obs: obs(
        { generation: 3, observedGeneration: 2, phase: 'Completed', reason: 'Released' },
        {
          spec: { nodeNames: ['a'], paused: true, release: true },
          memory: mem({ generation: 3, relayed: flags(true, true) }),
          resync: true,
        },
      ),
      steps: [],
    },
    {
      name: 'spec.abort on a Completed OnDelete plan: relayed (it hands the nodes back), not noted',
      obs: obs(
        { generation: 3, phase: 'Completed', reason: 'Released' },
        {
          spec: { nodeNames: ['a'], abort: true, release: true },
          memory: mem({ generation: 2, relayed: flags(false, true) }),
        },
      ),
      steps: ['abort'],
      before: mem({ generation: 2, relayed: flags(false, true) }),
      after: mem({ generation: 3, relayed: flags(false, true, true) }),
    },
    {
      name: 'spec.paused on a Running plan: relayed, not noted',
      obs: obs(
        { generation: 2, phase: 'Running', reason: 'Draining' },
        { spec: { nodeNames: ['a'], paused: true }, memory: mem({ relayed: flags() }) },
      ),
      steps: ['pause'],
      before: mem({ relayed: flags() }),
      after: mem({ generation: 2, relayed: flags(true) }),
    },
    {
      name: 'status records a workflow Temporal no longer knows, Failed/WorkflowTerminated, spec.abort: hand back',
      obs: obs(
        { statusWorkflowId: WF, phase: 'Failed', reason: 'WorkflowTerminated' },
        { spec: { nodeNames: ['a'], abort: true }, workflow: absent },
      ),
      steps: ['finalizer', 'closed WorkflowTerminated, hand back'],
      before: { name: 'p', generation: -1, started: false },
      after: {
        name: 'p',
        generation: 1,
        started: true,
        relayed: flags(false, false, true),
        closedProjected: 'WorkflowTerminated',
      },
    },
  ];

  for (const row of rows) {
    it(row.name, () => {
      const d = decide(row.obs);
      assert.deepEqual(steps(d), row.steps, 'actions');
      assert.deepEqual(d.before, row.before, 'memory before acting');
      assert.deepEqual(d.after, row.after, 'memory after acting');
      if (row.log)
        assert.ok(
          logs(d).some((l) => row.log!.test(l)),
          `log ${row.log}: ${logs(d).join(' | ')}`,
        );
      // Asking Temporal is decided by needsWorkflow; every row that needs it has it.
      assert.equal(row.obs.workflow !== undefined, needsWorkflow(row.obs), 'needsWorkflow');
    });
  }

  it('a status-only update logs only the no-op line (the operator e2e test relies on it)', () => {
    const d = decide(obs({ observedGeneration: 1 }, { memory: mem({ relayed: flags() }) }));
    assert.deepEqual(
      d.actions.map((a) => (a.type === 'log' ? a.msg : a.type)),
      ['no spec change; nothing to do'],
    );
  });

  it('refuses to decide without the workflow state it needs', () => {
    assert.throws(() => decide(obs({})), /the workflow state was not observed/);
    assert.throws(() => decide(obs({ deleting: true })), /the workflow state was not observed/);
  });

  it('the workflow is never started for a plan being deleted or with an invalid spec', () => {
    for (const o of rows.map((r) => r.obs)) {
      const started = steps(decide(o)).includes('startWorkflow');
      if (o.plan.deleting || !o.spec) assert.equal(started, false);
    }
  });
});

describe('expectsRunningWorkflow', () => {
  it('a Failed plan expects its workflow to run unless the reason is one its workflow closes with', () => {
    const rows: [PlanPhase | undefined, string | undefined, boolean][] = [
      [undefined, undefined, true],
      ['Running', 'Draining', true],
      ['Drained', 'AllNodesDrained', true],
      ['Failed', 'NodeWorkflowFailed', true],
      ['Failed', 'ActivityFailed', true],
      ['Failed', 'NodeNotFound', false],
      ['Failed', 'ResolveFailed', false],
      ['Failed', 'InvalidSpec', false],
      ['Failed', 'TooManyNodes', false],
      ['Failed', 'WorkflowTerminated', false],
      ['Failed', undefined, false],
      ['Aborted', 'Aborted', false],
      ['Completed', 'Released', false],
      ['Previewed', 'NoBlockers', false],
    ];
    for (const [phase, reason, want] of rows)
      assert.equal(expectsRunningWorkflow(phase, reason), want, `${phase}/${reason}`);
  });
});

describe('closedWorkflowAction', () => {
  it('projects only the close statuses a plan did not write itself', () => {
    for (const status of ['COMPLETED', 'CONTINUED_AS_NEW', 'RUNNING', 'UNSPECIFIED'])
      assert.equal(
        closedWorkflowAction(obs({ phase: 'Running' }, { workflow: { state: 'closed', status } })),
        undefined,
        status,
      );
  });
});

describe('closedWorkflowStatus', () => {
  const now = '2026-12-01T23:00:00.000Z';
  const earlier = '2026-12-01T22:00:00.000Z';
  const running: MaintenancePlanStatus = {
    phase: 'Running',
    reason: 'Draining',
    message: 'draining 1 node(s)',
    observedGeneration: 1,
    startedAt: earlier,
    nodesTotal: 1,
    nodes: [{ name: 'n1', phase: 'Draining' }] as MaintenancePlanStatus['nodes'],
    workflow: { namespace: 'default', workflowId: WF },
    deadlineAction: { policy: 'Stop', message: 'at … evictions stop' },
    window: { open: true } as MaintenancePlanStatus['window'],
    estimatedCompletion: '2026-12-01T23:10:00.000Z',
    conditions: [
      {
        type: 'Blocked',
        status: 'True',
        reason: 'DisruptionBudget',
        message: 'node n1: …',
        lastTransitionTime: earlier,
      },
      {
        type: 'Progressing',
        status: 'True',
        reason: 'Draining',
        message: 'draining',
        lastTransitionTime: earlier,
      },
    ],
  };
  const cond = (s: MaintenancePlanStatus, type: string) => s.conditions?.find((c) => c.type === type);

  it('Running → Failed with the reason, what happened and what to do; nodes and workflow kept', () => {
    const s = closedWorkflowStatus({
      planName: 'p',
      workflowId: WF,
      reason: 'WorkflowTerminated',
      status: running,
      generation: 1,
      nowIso: now,
    });
    assert.equal(s.phase, 'Failed');
    assert.equal(s.reason, 'WorkflowTerminated');
    assert.match(
      s.message!,
      /^Temporal workflow maintenanceplan-p-u1 was terminated \(close status TERMINATED\) while the plan was Running: .*stay cordoned and claimed\. Set spec\.abort: true \(drainflow abort p\) .* or delete the plan$/,
    );
    assert.deepEqual(
      [
        cond(s, 'Progressing')?.status,
        cond(s, 'Progressing')?.reason,
        cond(s, 'Progressing')?.lastTransitionTime,
      ],
      ['False', 'WorkflowTerminated', now],
    );
    // Blocked stays True (its transition time too), now saying why and what to do.
    assert.deepEqual(
      [cond(s, 'Blocked')?.status, cond(s, 'Blocked')?.reason, cond(s, 'Blocked')?.lastTransitionTime],
      ['True', 'WorkflowTerminated', earlier],
    );
    assert.equal(cond(s, 'Blocked')?.message, s.message);
    assert.equal(s.completedAt, now);
    assert.equal(s.deadlineAction, undefined);
    assert.equal(s.window, undefined);
    assert.equal(s.estimatedCompletion, undefined, 'a closed workflow drains nothing more');
    assert.deepEqual([s.nodes, s.workflow, s.startedAt], [running.nodes, running.workflow, earlier]);
  });

  it('each close status in its own words', () => {
    for (const [reason, words] of [
      ['WorkflowFailed', 'failed (close status FAILED)'],
      ['WorkflowTimedOut', 'timed out (close status TIMED_OUT)'],
      ['WorkflowCanceled', 'was cancelled (close status CANCELED)'],
      [
        'WorkflowNotFound',
        'is not known to Temporal any more (Temporal answered NotFound: its history was lost',
      ],
    ] as const) {
      const s = closedWorkflowStatus({
        planName: 'p',
        workflowId: WF,
        reason,
        status: running,
        generation: 1,
        nowIso: now,
      });
      assert.ok(s.message!.includes(words), s.message);
    }
  });

  it('handed back on spec.abort: Aborted, the nodes named, Blocked False, Drained False/Aborted', () => {
    const failed = closedWorkflowStatus({
      planName: 'p',
      workflowId: WF,
      reason: 'WorkflowTerminated',
      status: running,
      generation: 1,
      nowIso: earlier,
    });
    const s = closedWorkflowStatus({
      planName: 'p',
      workflowId: WF,
      reason: 'WorkflowTerminated',
      status: failed,
      generation: 2,
      handedBack: ['n1 (uncordoned)'],
      nowIso: now,
    });
    assert.equal(s.phase, 'Aborted');
    assert.equal(s.reason, 'WorkflowTerminated');
    assert.equal(
      s.message,
      `Temporal workflow ${WF} was terminated (close status TERMINATED); on spec.abort the operator handed back 1 node(s): n1 (uncordoned)`,
    );
    assert.deepEqual([cond(s, 'Blocked')?.status, cond(s, 'Blocked')?.reason], ['False', 'NotBlocked']);
    assert.deepEqual([cond(s, 'Drained')?.status, cond(s, 'Drained')?.reason], ['False', 'Aborted']);
    assert.equal(s.observedGeneration, 2);
    assert.equal(s.completedAt, earlier, 'completedAt kept from the Failed status');
    const none = closedWorkflowStatus({
      planName: 'p',
      workflowId: WF,
      reason: 'WorkflowTerminated',
      status: failed,
      generation: 2,
      handedBack: [],
      nowIso: now,
    });
    assert.match(none.message!, /no node carried its claim any more$/);
  });
});

describe('planSignals', () => {
  const table: Array<[Flags | undefined, Flags, SignalName[], boolean]> = [
    [undefined, flags(), ['resume', 'drainTimeout'], false],
    [undefined, flags(true, true, true), ['pause', 'release', 'abort', 'drainTimeout'], false],
    [flags(), flags(true), ['pause'], false],
    [flags(true), flags(), ['resume'], false],
    [flags(), flags(false, true), ['release'], false],
    [flags(false, true), flags(), [], false],
    [flags(), flags(false, false, true), ['abort'], false],
    [flags(false, false, true), flags(), [], true],
    [flags(true, false, false), flags(true, false, false), ['pause'], false],
    [flags(), flags(), ['resume'], false],
    // spec.drainTimeoutSeconds: relayed when raised (the CRD refuses lowering), asserted when unknown.
    [
      { ...flags(), drainTimeoutSeconds: 600 },
      { ...flags(), drainTimeoutSeconds: 2400 },
      ['drainTimeout'],
      false,
    ],
    [{ ...flags(), drainTimeoutSeconds: 600 }, { ...flags(), drainTimeoutSeconds: 600 }, ['resume'], false],
    [undefined, { ...flags(true), drainTimeoutSeconds: 600 }, ['pause', 'drainTimeout'], false],
    [
      { ...flags(), drainTimeoutSeconds: 600 },
      { ...flags(true), drainTimeoutSeconds: 900 },
      ['pause', 'drainTimeout'],
      false,
    ],
  ];
  for (const [before, now, signals, abortReset] of table) {
    it(`${JSON.stringify(before)} → ${JSON.stringify(now)}: ${signals.join(', ') || 'none'}`, () => {
      assert.deepEqual(planSignals(before, now), { signals, abortReset });
    });
  }
});

describe('missingNodeCount and mayAbortOnForget', () => {
  const table: Array<[Partial<PlanView>, number | undefined]> = [
    [{ phase: 'Failed', nodeNames: 2 }, 2],
    [{ phase: 'Aborted', nodeNames: 1 }, 1],
    [{ phase: 'Failed', nodeNames: 2, nodesTotal: 2 }, undefined],
    [{ phase: 'Failed', nodeNames: 2, statusNodes: 2 }, undefined],
    [{ phase: 'Failed', nodeNames: 0 }, undefined],
    [{ phase: 'Running', nodeNames: 2 }, undefined],
    [{ phase: 'Completed', nodeNames: 2 }, undefined],
    [{ nodeNames: 2 }, undefined],
  ];
  for (const [plan, count] of table) {
    it(`${JSON.stringify(plan)} → ${count}`, () => assert.equal(missingNodeCount(view(plan)), count));
  }
  it('aborts on forget only a started workflow not cleaned up nor aborted', () => {
    assert.equal(mayAbortOnForget(undefined), false);
    assert.equal(mayAbortOnForget(mem({ started: false })), false);
    assert.equal(mayAbortOnForget(mem()), true);
    assert.equal(mayAbortOnForget(mem({ abortSent: true })), false);
    assert.equal(mayAbortOnForget(mem({ cleanedUp: true })), false);
  });
});

describe('awaitingWorkerStatus', () => {
  const st = awaitingWorkerStatus(WF, 'maint', '2024-05-01T12:00:00.000Z');

  it('Pending/AwaitingWorker naming the workflow and the task queue a worker must poll', () => {
    assert.equal(st.phase, 'Pending');
    assert.equal(st.reason, 'AwaitingWorker');
    assert.equal(
      st.message,
      `workflow ${WF} is started; waiting for a drainflow worker on task queue "maint" to run it (drainflow run --worker --task-queue maint)`,
    );
  });

  it('condition Progressing True with the same reason; no observedGeneration (the workflow saw none)', () => {
    assert.deepEqual(st.conditions, [
      {
        type: 'Progressing',
        status: 'True',
        lastTransitionTime: '2024-05-01T12:00:00.000Z',
        reason: 'AwaitingWorker',
        message: st.message,
      },
    ]);
    assert.equal(st.observedGeneration, undefined);
    assert.equal(st.workflow, undefined, 'status.workflow is the workflow\'s to write (it means "it ran")');
  });

  it('is a status the CRD schema accepts', () => {
    assert.deepEqual(MaintenancePlanStatusSchema.parse(st), st);
  });
});

describe('temporalReach', () => {
  const table: Array<[string, boolean, string | undefined, boolean, string | undefined, RegExp?]> = [
    ['answered, was up: nothing', false, undefined, false, undefined],
    [
      'failed, was up: one Warning naming the address and the error',
      false,
      '14 UNAVAILABLE: connection refused',
      true,
      'Warning TemporalUnavailable',
      new RegExp(
        `^cannot reach Temporal at 127\\.0\\.0\\.1:7233 to look at workflow ${WF}: 14 UNAVAILABLE: connection refused; `,
      ),
    ],
    ['failed again in the same outage: no second Event', true, 'deadline exceeded', true, undefined],
    [
      'answered after an outage: one Normal',
      true,
      undefined,
      false,
      'Normal TemporalAvailable',
      /^reached Temporal at 127\.0\.0\.1:7233 again/,
    ],
  ];
  for (const [name, wasDown, error, down, event, message] of table) {
    it(name, () => {
      const r = temporalReach(wasDown, error, '127.0.0.1:7233', WF);
      assert.equal(r.down, down);
      assert.equal(r.event ? `${r.event.type} ${r.event.reason}` : undefined, event);
      if (message) assert.match(r.event!.message, message);
    });
  }

  it('an outage of many failed resyncs gives one Warning and one Normal', () => {
    let down = false;
    const events: string[] = [];
    for (const error of [undefined, 'e', 'e', 'e', undefined, undefined, 'e', undefined]) {
      const r = temporalReach(down, error, 'a:1', WF);
      down = r.down;
      if (r.event) events.push(r.event.reason);
    }
    assert.deepEqual(events, [
      'TemporalUnavailable',
      'TemporalAvailable',
      'TemporalUnavailable',
      'TemporalAvailable',
    ]);
  });
});

describe('deletionWaitEvent', () => {
  const poller = (ageMs: number) => ({ identity: 'w1@host', ageMs });
  const table: Array<[string, boolean, Parameters<typeof deletionWaitEvent>[1], RegExp | undefined]> = [
    [
      'no poller at all: one Warning naming the workflow, the queue and the command',
      false,
      { pollers: [] },
      new RegExp(
        `^plan deleted: its finalizer stays until workflow ${WF} has run the abort and handed the nodes back, and no worker is polling task queue "q1": start one \\(drainflow run --worker --task-queue q1\\)`,
      ),
    ],
    [
      'a poller whose last poll is too old (a stopped worker): Warning, with the last poll',
      false,
      { pollers: [poller(95_000)] },
      /no worker is polling task queue "q1"; the last poll began 95 s ago, by w1@host: start one/,
    ],
    [
      'a poller reporting shutdown: Warning',
      false,
      { pollers: [poller(5_000)], workers: new Map([['w1@host', { status: 'WORKER_STATUS_SHUTDOWN' }]]) },
      /no worker is polling task queue "q1"/,
    ],
    ['a live worker polls (busy with other work): nothing', false, { pollers: [poller(5_000)] }, undefined],
    [
      'a live worker with a running heartbeat: nothing',
      false,
      {
        pollers: [poller(1_000)],
        workers: new Map([['w1@host', { status: 'WORKER_STATUS_RUNNING', heartbeatAgeMs: 10_000 }]]),
      },
      undefined,
    ],
    ['Temporal did not answer: nothing (asked again at the next retry)', false, undefined, undefined],
    ['recorded already for this deletion: not again', true, { pollers: [] }, undefined],
  ];
  for (const [name, noted, workers, message] of table) {
    it(name, () => {
      const ev = deletionWaitEvent(noted, workers, WF, 'q1');
      if (!message) return assert.equal(ev, undefined);
      assert.equal(ev?.type, 'Warning');
      assert.equal(ev?.reason, 'AwaitingWorker');
      assert.match(ev!.message, message);
    });
  }
});

describe('specChangeIgnored', () => {
  const p = (phase: PlanPhase | undefined, reason?: string) => ({
    name: 'p',
    ...(phase ? { phase } : {}),
    ...(reason ? { reason } : {}),
  });
  const table: Array<
    [string, ReturnType<typeof p>, Flags | undefined, Flags, string | undefined, string | undefined]
  > = [
    [
      'paused on a Completed plan',
      p('Completed', 'Released'),
      flags(false, true),
      flags(true, true),
      'OnDelete',
      'plan p has ended (Completed/Released): spec.paused has no effect',
    ],
    [
      'paused and release on an Aborted plan: both named',
      p('Aborted', 'Aborted'),
      flags(false, false, true),
      flags(true, true, true),
      undefined,
      'plan p has ended (Aborted/Aborted): spec.paused and spec.release have no effect',
    ],
    [
      'abort of a Completed plan with uncordon OnRelease (its workflow closed)',
      p('Completed', 'Released'),
      flags(false, true),
      flags(false, true, true),
      'OnRelease',
      'plan p has ended (Completed/Released): spec.abort has no effect',
    ],
    [
      'abort of a Completed OnDelete plan: it hands the nodes back',
      p('Completed', 'Released'),
      flags(false, true),
      flags(false, true, true),
      'OnDelete',
      undefined,
    ],
    [
      'paused on a Drained plan: not ended',
      p('Drained', 'AllNodesDrained'),
      flags(),
      flags(true),
      undefined,
      undefined,
    ],
    ['no phase yet: not ended', p(undefined), flags(), flags(true), undefined, undefined],
    [
      'nothing changed (toggled back): nothing',
      p('Completed', 'Released'),
      flags(),
      flags(),
      undefined,
      undefined,
    ],
    [
      'what the workflow was told is unknown (operator restarted): nothing',
      p('Completed', 'Released'),
      undefined,
      flags(true),
      undefined,
      undefined,
    ],
  ];
  for (const [name, plan, before, now, uncordon, message] of table)
    it(name, () => {
      const ev = specChangeIgnored(plan, before, now, uncordon);
      assert.equal(ev?.message, message);
      if (ev) assert.equal(ev.reason, 'SpecChangeIgnored');
    });
});

describe('orphanVerdict', () => {
  const U1 = '11111111-1111-4111-8111-111111111111';
  const U2 = '22222222-2222-4222-8222-222222222222';
  const cand = (over: Partial<OrphanCandidate> = {}): OrphanCandidate => ({
    name: 'p',
    uid: U1,
    workflowRunning: true,
    nodes: ['n1'],
    ...over,
  });
  const rows: Array<{ name: string; c: OrphanCandidate; now: { uid: string } | undefined; want: string }> = [
    { name: 'the plan exists (same UID): kept', c: cand(), now: { uid: U1 }, want: 'keep' },
    {
      name: 'the plan exists and is being deleted (same UID): kept, its finalizer cleanup owns it',
      c: cand(),
      now: { uid: U1 },
      want: 'keep',
    },
    {
      name: 'no plan of that name (finalizer removed by hand): terminate, hand back',
      c: cand(),
      now: undefined,
      want: 'end terminate n1: plan p (uid 1111…) no longer exists (deleted without',
    },
    {
      name: 'a plan of that name with another UID (restored from a backup): terminate, hand back',
      c: cand(),
      now: { uid: U2 },
      want: 'end terminate n1: plan p (uid 1111…) no longer exists: the plan of that name now is another one (uid 2222…',
    },
    {
      name: 'workflow running, no node claimed yet (gone while Pending): terminate, nothing to hand back',
      c: cand({ nodes: [] }),
      now: undefined,
      want: 'end terminate -: plan p (uid 1111…) no longer exists',
    },
    {
      name: 'claims only, the workflow closed already: hand back, nothing to terminate',
      c: cand({ workflowRunning: false, nodes: ['n1', 'n2'] }),
      now: undefined,
      want: 'end - n1,n2: plan p (uid 1111…) no longer exists',
    },
    {
      name: 'an old claim without the UID annotation, a plan of that name exists: kept (claims count by name)',
      c: cand({ uid: undefined, workflowRunning: false }),
      now: { uid: U2 },
      want: 'keep',
    },
    {
      name: 'an old claim without the UID annotation, no plan of that name: hand back',
      c: cand({ uid: undefined, workflowRunning: false }),
      now: undefined,
      want: "end - n1: plan p no longer exists (deleted without drainflow's cleanup)",
    },
  ];
  const short = (t: string) => t.replace(/([0-9a-f]{4})[0-9a-f]{4}-[0-9a-f-]{27}/g, '$1…');
  for (const row of rows)
    it(row.name, () => {
      const v = orphanVerdict(row.c, row.now);
      const got =
        v.verdict === 'keep'
          ? 'keep'
          : `end ${v.terminate ? 'terminate' : '-'} ${v.handBack.join(',') || '-'}: ${short(v.why)}`;
      assert.ok(got.startsWith(row.want), `${got}\n  !startsWith ${row.want}`);
    });
});

describe('runningPlansQuery (the orphan sweep)', () => {
  it('lists the running plan workflows of one task queue', () => {
    assert.equal(
      runningPlansQuery('q"1', 'drainPlanWorkflow'),
      'WorkflowType = "drainPlanWorkflow" AND WorkflowId STARTS_WITH "maintenanceplan-" AND TaskQueue = "q\\"1" AND ExecutionStatus = "Running"',
    );
  });
});
