/**
 * The orphan sweep: workflows and node claims of MaintenancePlans that no longer exist, ended and
 * handed back by the operator that holds the Lease, once when it starts leading and every
 * `--orphan-sweep-seconds` (src/operator/controller.ts).
 *
 * How orphans arise: a plan deleted without drainflow's cleanup (its finalizer removed by hand or
 * the deletion forced while the operator was down), or a plan replaced by a copy with a new UID
 * (restored from a backup; deleted and created again while the operator was down). Its workflow
 * keeps running and its nodes stay cordoned and claimed; a new plan for such a node waits for the
 * claim (NodeHeldByOtherPlan) forever.
 *
 * What is looked at: the running plan workflows on the operator's own task queue (one visibility
 * list: workflow type `drainPlanWorkflow`, ID prefix `maintenanceplan-`, the plan's name and UID
 * read back from the ID), and every Node's claim annotations (one paged node list). Each plan so
 * named is read from the API server and judged by {@link orphanVerdict} (pure, table-tested).
 * Only the task queue's workflows are listed so that another installation sharing the Temporal
 * namespace (another cluster) is left alone; a claim on one of this cluster's nodes proves the plan
 * was this cluster's, so the workflow of an orphan claim is described by its ID whatever its queue.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { NodeActivities } from '../activities/nodes.js';
import { EventReason } from '../api/reasons.js';
import type { EventRecorder } from '../k8s/events.js';
import {
  NODE_CLAIM_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  allNodes,
  copiedClaim,
} from '../k8s/node-claim.js';
import type { PlanApi } from '../k8s/plans.js';
import { parseWorkflowId, planWorkflowId, queryLiteral } from '../contract/names.js';
import { orphanVerdict, type OrphanCandidate } from './decide.js';
import { isRunning, stopPlanChildren } from './stop-children.js';

/**
 * The visibility query of the running plan workflows on `taskQueue` (workflow type
 * `drainPlanWorkflow`, ID prefix `maintenanceplan-`). Double quotes and backslashes are escaped.
 */
export function runningPlansQuery(taskQueue: string, workflowType: string): string {
  return `WorkflowType = ${queryLiteral(workflowType)} AND WorkflowId STARTS_WITH "maintenanceplan-" AND TaskQueue = ${queryLiteral(taskQueue)} AND ExecutionStatus = "Running"`;
}

/** What {@link sweepOrphans} needs. */
export interface OrphanSweepDeps {
  client: Client;
  core: CoreV1Api;
  plans: PlanApi;
  /** `releaseNode`, run in this process (the operator's hand-back without a workflow). */
  activities: Pick<NodeActivities, 'releaseNode'>;
  events: EventRecorder;
  /** The operator's task queue: only its plan workflows are listed. */
  taskQueue: string;
  /** The plan workflow type (PLAN_WORKFLOW_TYPE). */
  workflowType: string;
  log: Logger;
}

/** One orphan ended by {@link sweepOrphans}. */
export interface EndedOrphan {
  name: string;
  uid?: string;
  why: string;
  /** The plan workflow was terminated. */
  terminated: boolean;
  /** Node and hook workflows it had left running, stopped. */
  children: string[];
  /** Nodes handed back, each `name (uncordoned)` or `name (claim removed, …)`. */
  handedBack: string[];
}

/**
 * One sweep: gathers the {@link OrphanCandidate}s, reads each plan from the API server, and ends
 * the orphans ({@link orphanVerdict}): terminates the plan workflow (reason: why), stops the node
 * and hook workflows it left running (src/operator/stop-children.ts), hands each claimed node back
 * (`releaseNode`: claim removed under the node's resourceVersion, uncordoned unless the node was
 * unschedulable before the plan) and records a Warning Event OrphanHandedBack on it.
 * Stops between candidates when `stop` aborts.
 * @returns the orphans ended.
 * @throws the first Temporal or API error (the next sweep tries again; what was ended stays ended).
 */
export async function sweepOrphans(deps: OrphanSweepDeps, stop: AbortSignal): Promise<EndedOrphan[]> {
  const { client, core, plans } = deps;
  const candidates = new Map<string, OrphanCandidate>();
  const nodeUids = new Map<string, string>();
  const candidate = (name: string, uid: string | undefined): OrphanCandidate => {
    const key = `${name}/${uid ?? ''}`;
    let c = candidates.get(key);
    if (!c) {
      c = { name, ...(uid !== undefined ? { uid } : {}), workflowRunning: false, nodes: [] };
      candidates.set(key, c);
    }
    return c;
  };
  for await (const wf of client.workflow.list({
    query: runningPlansQuery(deps.taskQueue, deps.workflowType),
  })) {
    const ids = parseWorkflowId(wf.workflowId);
    if (ids && ids.node === undefined) candidate(ids.plan.name, ids.plan.uid).workflowRunning = true;
  }
  for await (const n of allNodes(core)) {
    const ann = n.metadata?.annotations ?? {};
    const holder = ann[NODE_CLAIM_ANNOTATION];
    const node = n.metadata?.name;
    // A claim copied onto a Node created again under the name is no claim (src/k8s/node-claim.ts).
    if (!holder || !node || copiedClaim(n)) continue;
    candidate(holder, ann[NODE_CLAIM_UID_ANNOTATION] || undefined).nodes.push(node);
    nodeUids.set(node, n.metadata?.uid ?? '');
  }

  const ended: EndedOrphan[] = [];
  for (const c of candidates.values()) {
    if (stop.aborted) break;
    const plan = await plans.get(c.name);
    const now = plan ? { uid: plan.metadata.uid } : undefined;
    if (orphanVerdict(c, now).verdict === 'keep') continue;
    // A claim whose workflow is not on this task queue's list: is it running elsewhere?
    if (c.uid !== undefined && !c.workflowRunning)
      c.workflowRunning = await isRunning(client, planWorkflowId({ name: c.name, uid: c.uid }));
    const v = orphanVerdict({ ...c, nodes: [...c.nodes].sort() }, now);
    if (v.verdict === 'keep') continue;
    ended.push(await endOrphan(deps, c, v, nodeUids));
  }
  return ended;
}

/** Ends one orphan as {@link sweepOrphans} says. */
async function endOrphan(
  deps: OrphanSweepDeps,
  c: OrphanCandidate,
  v: { why: string; terminate: boolean; handBack: string[] },
  nodeUids: ReadonlyMap<string, string>,
): Promise<EndedOrphan> {
  const { client, log } = deps;
  const workflowId = c.uid !== undefined ? planWorkflowId({ name: c.name, uid: c.uid }) : undefined;
  const plog = log.child({ plan: c.name, uid: c.uid, workflowId });
  const reason = `stopped by the drainflow operator: ${v.why}`;
  let terminated = false;
  if (v.terminate && workflowId) {
    try {
      await client.workflow.getHandle(workflowId).terminate(reason);
      terminated = true;
      plog.warn({ why: v.why }, 'orphan plan workflow terminated');
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  const children: string[] = [];
  if (workflowId) {
    const stopped = await stopPlanChildren(client, workflowId, reason, plog);
    children.push(...stopped.cancelled, ...stopped.terminated);
  }
  const handedBack: string[] = [];
  const ref = { name: c.name, uid: c.uid ?? '' };
  for (const node of v.handBack) {
    const res = await deps.activities.releaseNode({ plan: ref, node, uncordon: true });
    if (res.left === 'gone' || res.left === 'notClaimed' || res.left === 'replaced') continue;
    const how = res.uncordoned
      ? 'uncordoned'
      : res.left === 'wasUnschedulable'
        ? 'claim removed, left cordoned: unschedulable before the plan'
        : 'claim removed';
    handedBack.push(`${node} (${how})`);
    const wfWords = workflowId
      ? terminated
        ? `; its workflow ${workflowId} was terminated`
        : `; its workflow ${workflowId} was not running`
      : '';
    await deps.events.recordOnNode(
      { name: node, uid: nodeUids.get(node) ?? '' },
      'Warning',
      EventReason.OrphanHandedBack,
      `${v.why}${wfWords}; node handed back (${how})`,
    );
  }
  plog.warn({ why: v.why, terminated, children, handedBack }, 'orphan plan ended and its nodes handed back');
  return {
    name: c.name,
    ...(c.uid !== undefined ? { uid: c.uid } : {}),
    why: v.why,
    terminated,
    children,
    handedBack,
  };
}
