/**
 * `drainPlanWorkflow`: one run per MaintenancePlan (ID {@link planWorkflowId}). Resolves the nodes,
 * cordons all of them first when spec.cordon is AllAtStart, drains them as child workflows (`drainNodeWorkflow`, at most spec.maxUnavailableNodes at once),
 * projects its state into the plan's status, and hands the nodes back per spec.uncordon.
 *
 * Lifecycle: Pending → Running (⇄ Paused) → Drained | Blocked | Failed | Aborted; from Drained or
 * Blocked the workflow stays open, waiting for `release` (→ Completed) or `abort` (sent by the
 * operator when the plan is deleted), so nodes are handed back exactly once by the workflow that
 * took them.
 *
 * Deterministic: only pure modules, activity types and `@temporalio/workflow` are imported.
 */
import {
  ParentClosePolicy,
  condition,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { DrainActivities } from '../../activities/types.js';
import type { MaintenancePlanStatus } from '../../api/plan.js';
import { FINAL_PLAN_PHASES as FINAL_PHASES, type PlanPhase } from '../../api/reasons.js';
import { statusEquals } from '../../drain/conditions.js';
import { planConditions, projectStatus, type PlanState } from '../../drain/projection.js';
import type { DrainPlanInput, DrainPlanResult } from '../messages.js';
import {
  SA_NODES,
  SA_PHASE,
  SA_PLAN,
  nodeWorkflowId,
  temporalUiUrl,
  type PlanRef,
} from '../../contract/names.js';
import {
  abortSignal,
  controlUpdate,
  pauseSignal,
  progressQuery,
  releaseSignal,
  resumeSignal,
  type ControlAction,
  type ControlArgs,
} from '../../contract/plan-messages.js';
import { nodeControlSignal, nodeProgressSignal } from '../../contract/node-messages.js';
import type { NodeProgress, NodeState } from '../../contract/progress.js';
import { drainNodeWorkflow } from '../node.js';

/** Minimum time between two status writes, ms: bursts of changes are coalesced into one write. */
const STATUS_WRITE_INTERVAL_MS = 1000;
/** `cordonNode` activities in flight at once while spec.cordon is AllAtStart. */
const CORDON_CONCURRENCY = 10;

const k8s = proxyActivities<DrainActivities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
});

/**
 * Temporal limits one search attribute value to 2 KiB by default
 * (`limit.searchAttributeValueSize`; a larger value fails every workflow task with
 * BadSearchAttributes). The node list is cut to fit; status.nodes always has all of them.
 */
const SEARCH_ATTRIBUTE_VALUE_BYTES = 1900;

/** The longest prefix of `nodes` whose JSON encoding fits {@link SEARCH_ATTRIBUTE_VALUE_BYTES}. */
export function searchableNodes(nodes: readonly string[]): string[] {
  const out: string[] = [];
  let size = 2; // []
  for (const n of nodes) {
    size += n.length + 3; // quotes and comma
    if (size > SEARCH_ATTRIBUTE_VALUE_BYTES) break;
    out.push(n);
  }
  return out;
}

/** Drains the nodes of one MaintenancePlan. See the module comment. */
export async function drainPlanV1(input: DrainPlanInput): Promise<DrainPlanResult> {
  const { spec } = input;
  const plan: PlanRef = { name: input.plan.name, uid: input.plan.uid };
  const info = workflowInfo();
  const state: PlanState = {
    phase: 'Pending',
    reason: 'Starting',
    message: 'resolving nodes',
    observedGeneration: input.plan.generation,
    workflow: {
      namespace: info.namespace,
      workflowId: info.workflowId,
      runId: info.firstExecutionRunId,
      ...(input.temporalUiUrl
        ? {
            url: temporalUiUrl(
              input.temporalUiUrl,
              info.namespace,
              info.workflowId,
              info.firstExecutionRunId,
            ),
          }
        : {}),
    },
    nodes: [],
    conditions: [],
  };
  let paused = spec.paused;
  let aborted = spec.abort;
  let released = spec.release;
  const children = new Map<string, ChildWorkflowHandle<typeof drainNodeWorkflow>>();
  const claimed = new Map<string, { cordonedByPlan: boolean }>();

  // ---- status projection: publish after each change, coalesced, skipped when unchanged ----
  let dirty = true;
  let closing = false;
  let published: MaintenancePlanStatus | undefined;
  const project = (): MaintenancePlanStatus => {
    state.conditions = planConditions(state, Date.now());
    return projectStatus(state);
  };
  const publisher = (async () => {
    for (;;) {
      await condition(() => dirty || closing);
      if (!dirty) return;
      dirty = false;
      const status = project();
      if (!published || !statusEquals(status, published)) {
        const { exists } = await k8s.publishStatus.executeWithOptions({ summary: `status ${state.phase}` }, [
          { plan, status },
        ]);
        published = status;
        if (!exists) return; // the plan is gone; nothing to write to any more
      }
      if (!closing) await sleep(STATUS_WRITE_INTERVAL_MS);
    }
  })();

  let lastEventPhase: PlanPhase | undefined;
  const blockerEvents = new Set<string>();
  const setPhase = (phase: PlanPhase, reason: string, message: string) => {
    const changedPhase = phase !== state.phase || reason !== state.reason;
    state.phase = phase;
    state.reason = reason;
    state.message = message;
    if (FINAL_PHASES.has(phase) && phase !== 'Blocked') state.completedAtMs ??= Date.now();
    if (phase === 'Blocked' && reason === 'DeadlineExceeded') state.completedAtMs ??= Date.now();
    dirty = true;
    if (changedPhase) {
      upsertSearchAttributes([{ key: SA_PHASE, value: phase }]);
      if (lastEventPhase !== phase) {
        lastEventPhase = phase;
        const warn = phase === 'Blocked' || phase === 'Failed';
        void k8s.recordEvent
          .executeWithOptions({ summary: `event ${reason}` }, [
            { plan, type: warn ? 'Warning' : 'Normal', reason, message },
          ])
          .catch(() => undefined);
      }
    }
  };

  // ---- messages ----
  const forward = (action: 'pause' | 'resume' | 'abort') => {
    for (const h of children.values()) void h.signal(nodeControlSignal, { action }).catch(() => undefined);
  };
  const noteGeneration = (args?: ControlArgs) => {
    if (args?.generation !== undefined && args.generation > state.observedGeneration) {
      state.observedGeneration = args.generation;
      dirty = true;
    }
  };
  const control = (action: ControlAction, args?: ControlArgs) => {
    noteGeneration(args);
    switch (action) {
      case 'pause':
        if (!paused && !FINAL_PHASES.has(state.phase)) {
          paused = true;
          forward('pause');
          if (state.phase === 'Running' || state.phase === 'Pending')
            setPhase('Paused', 'PausedByUser', 'no new evictions until resumed');
        }
        break;
      case 'resume':
        if (paused) {
          paused = false;
          forward('resume');
          if (state.phase === 'Paused') setPhase('Running', 'Draining', 'draining nodes');
        }
        break;
      case 'abort':
        if (!aborted) {
          aborted = true;
          forward('abort');
        }
        break;
      case 'release':
        released = true;
        break;
    }
    dirty = true;
  };
  setHandler(pauseSignal, (a) => control('pause', a));
  setHandler(resumeSignal, (a) => control('resume', a));
  setHandler(abortSignal, (a) => control('abort', a));
  setHandler(releaseSignal, (a) => control('release', a));
  setHandler(progressQuery, () => projectStatus({ ...state, conditions: planConditions(state, Date.now()) }));
  setHandler(
    controlUpdate,
    async ({ action, generation }) => {
      control(action, generation !== undefined ? { generation } : undefined);
      await condition(() => !dirty || closing);
      return projectStatus({ ...state, conditions: planConditions(state, Date.now()) });
    },
    {
      validator: ({ action }) => {
        if (!['pause', 'resume', 'abort', 'release'].includes(action))
          throw new Error(`unknown action ${String(action)}`);
      },
    },
  );
  setHandler(nodeProgressSignal, (p: NodeProgress) => {
    const n = state.nodes.find((x) => x.name === p.node);
    if (!n) return;
    Object.assign(n, {
      phase: p.phase,
      reason: p.reason,
      message: p.message,
      podsTotal: p.podsTotal,
      podsEvicted: p.podsEvicted,
      podsFailed: p.podsFailed,
      blockedBy: p.blockedBy,
      attempts: p.attempts,
      tooManyRequests: p.tooManyRequests,
      nextActionAtMs: p.nextActionAtMs,
      lastError: p.lastError,
    } satisfies Partial<NodeState>);
    if (p.claimed) claimed.set(p.node, { cordonedByPlan: p.cordonedByPlan ?? false });
    // A node held by another plan is news once: a Warning Event names the holder (kubectl describe).
    // patched: runs begun before this Event existed replay without it.
    const heldKey = `${p.node}|NodeHeldByOtherPlan`;
    if (p.reason === 'NodeHeldByOtherPlan' && !blockerEvents.has(heldKey) && patched('held-node-event')) {
      blockerEvents.add(heldKey);
      void k8s.recordEvent
        .executeWithOptions({ summary: 'event NodeHeldByOtherPlan' }, [
          {
            plan,
            type: 'Warning',
            reason: 'NodeHeldByOtherPlan',
            message: p.message ?? `node ${p.node} is held by another plan`,
          },
        ])
        .catch(() => undefined);
    }
    for (const b of p.blockedBy) {
      const key = `${b.pod}|${b.reason}`;
      if (b.reason === 'DisruptionBudget' || blockerEvents.has(key)) continue; // PDB waits are normal, not news
      blockerEvents.add(key);
      void k8s.recordEvent
        .executeWithOptions({ summary: `event ${b.reason}` }, [
          { plan, type: 'Warning', reason: b.reason, message: `node ${p.node}: pod ${b.pod}: ${b.message}` },
        ])
        .catch(() => undefined);
    }
    dirty = true;
  });

  const close = async (result: DrainPlanResult): Promise<DrainPlanResult> => {
    dirty = true;
    closing = true;
    await publisher;
    await condition(() => true); // let in-flight handlers settle
    return result;
  };

  /**
   * Claims and cordons `nodes` ({@link CORDON_CONCURRENCY} `cordonNode` activities at a time), records
   * each claim for the hand-back, and marks the node Cordoned, or Waiting/NodeHeldByOtherPlan when
   * another plan holds it (its child workflow keeps trying). Stops between batches when `stop()`.
   */
  const cordonAll = async (nodes: readonly string[], stop: () => boolean) => {
    setPhase('Running', 'Cordoning', `cordoning ${nodes.length} node(s) before the first eviction`);
    for (let i = 0; i < nodes.length && !stop(); i += CORDON_CONCURRENCY) {
      const batch = nodes.slice(i, i + CORDON_CONCURRENCY);
      const results = await Promise.all(
        batch.map((node) =>
          k8s.cordonNode.executeWithOptions({ summary: `cordon ${node}` }, [{ plan, node }]),
        ),
      );
      batch.forEach((node, j) => {
        const res = results[j]!;
        const n = state.nodes.find((x) => x.name === node)!;
        if (res.outcome === 'Cordoned') {
          claimed.set(node, { cordonedByPlan: !res.wasUnschedulable });
          n.phase = 'Cordoned';
        } else if (res.outcome === 'HeldByOtherPlan') {
          n.phase = 'Waiting';
          n.reason = 'NodeHeldByOtherPlan';
          n.message = `node ${node} is held by plan ${res.heldBy}`;
        }
      });
      dirty = true;
    }
  };

  // ---- 1. resolve the nodes (once) ----
  upsertSearchAttributes([
    { key: SA_PLAN, value: plan.name },
    { key: SA_PHASE, value: state.phase },
  ]);
  const resolved = await k8s.resolveNodes.executeWithOptions({ summary: 'resolve nodes' }, [
    {
      ...(spec.nodeNames ? { nodeNames: spec.nodeNames } : {}),
      ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
    },
  ]);
  if (resolved.missing.length > 0) {
    const msg = `node(s) not found: ${resolved.missing.join(', ')}`;
    setPhase('Failed', 'NodeNotFound', msg);
    return close({ phase: 'Failed', reason: 'NodeNotFound', message: msg });
  }
  if (resolved.nodes.length === 0) {
    const msg = 'spec.nodeSelector matches no node';
    setPhase('Failed', 'NoNodesMatched', msg);
    return close({ phase: 'Failed', reason: 'NoNodesMatched', message: msg });
  }
  upsertSearchAttributes([{ key: SA_NODES, value: searchableNodes(resolved.nodes) }]);
  state.nodes = resolved.nodes.map((name) => ({
    name,
    phase: 'Pending',
    podsTotal: 0,
    podsEvicted: 0,
    podsFailed: 0,
    blockedBy: [],
    attempts: 0,
    tooManyRequests: 0,
  }));
  state.startedAtMs = Date.now();
  state.deadlineMs = state.startedAtMs + spec.drainTimeoutSeconds * 1000;
  if (paused) setPhase('Paused', 'PausedByUser', 'no new evictions until resumed');
  else setPhase('Running', 'Draining', `draining ${resolved.nodes.length} node(s)`);

  // ---- 2. drain, at most maxUnavailableNodes at once ----
  let deadlineHit = false;
  void sleep(state.deadlineMs - Date.now()).then(() => {
    deadlineHit = true;
  });
  // spec.cordon AllAtStart: claim and cordon every node before the first eviction, so evicted pods
  // are rescheduled only onto nodes outside the plan. (Runs started before the field existed have
  // no spec.cordon and never take this branch, so their replay is unchanged without a patch.)
  if (spec.cordon === 'AllAtStart') {
    await condition(() => aborted || deadlineHit || !paused);
    await cordonAll(resolved.nodes, () => aborted || deadlineHit);
    if (!aborted && !deadlineHit && !paused)
      setPhase('Running', 'Draining', `draining ${resolved.nodes.length} node(s)`);
  }
  let running = 0;
  const started = new Set<string>();
  const nodeFailed = (node: string, err: unknown) => {
    const n = state.nodes.find((x) => x.name === node)!;
    n.phase = 'Failed';
    n.reason = 'NodeWorkflowFailed';
    n.message = err instanceof Error ? err.message : String(err);
    running--;
    children.delete(node);
    dirty = true;
  };
  /**
   * Tracks a started child until it ends. `startedPaused` is the pause flag it was started with; with
   * `catchUp`, an abort or a pause/resume that arrived while it was starting is sent to it now.
   */
  const follow = (
    node: string,
    handle: ChildWorkflowHandle<typeof drainNodeWorkflow>,
    startedPaused: boolean,
    catchUp: boolean,
  ) => {
    children.set(node, handle);
    if (catchUp && (aborted || paused !== startedPaused)) {
      const action = aborted ? 'abort' : paused ? 'pause' : 'resume';
      void handle.signal(nodeControlSignal, { action }).catch(() => undefined);
    }
    void handle.result().then(
      (r) => {
        if (r.claimed) claimed.set(node, { cordonedByPlan: r.cordonedByPlan ?? false });
        running--;
        children.delete(node);
      },
      (err: unknown) => nodeFailed(node, err),
    );
  };
  // Children are started without waiting for each start to be confirmed, so every free slot is
  // filled in one workflow task (sequential starts left about half of maxUnavailableNodes idle in
  // the 200-node benchmark). patched: runs begun with sequential starts replay them.
  const parallelStarts = patched('parallel-child-start');
  for (const node of resolved.nodes) {
    await condition(() => aborted || deadlineHit || (running < spec.maxUnavailableNodes && !paused));
    if (aborted || deadlineHit) break;
    running++;
    started.add(node);
    const startedPaused = paused;
    const starting = startChild(drainNodeWorkflow, {
      workflowId: nodeWorkflowId(info.workflowId, node),
      args: [
        {
          plan,
          node,
          spec,
          deadlineMs: state.deadlineMs,
          parentWorkflowId: info.workflowId,
          paused: startedPaused,
        },
      ],
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      staticSummary: `drain node ${node}`,
    });
    if (parallelStarts) {
      void starting.then(
        (handle) => follow(node, handle, startedPaused, true),
        (err: unknown) => nodeFailed(node, err),
      );
    } else {
      follow(node, await starting, startedPaused, false);
    }
  }
  await condition(() => running === 0);

  // ---- 3. outcome ----
  const nodes = state.nodes;
  const handBack = async (uncordon: boolean) => {
    for (const [node, c] of [...claimed.entries()].sort()) {
      const { uncordoned } = await k8s.releaseNode.executeWithOptions({ summary: `hand back ${node}` }, [
        { plan, node, uncordon },
      ]);
      const n = nodes.find((x) => x.name === node);
      if (n && uncordoned && c.cordonedByPlan) n.phase = 'Released';
      claimed.delete(node);
      dirty = true;
    }
  };
  if (aborted) {
    await handBack(spec.uncordon !== 'Never');
    setPhase('Aborted', 'Aborted', 'aborted: no more evictions; nodes handed back per spec.uncordon');
    return close({ phase: 'Aborted', reason: 'Aborted', message: state.message });
  }
  for (const n of nodes) {
    if (!started.has(n.name)) {
      n.phase = 'Blocked';
      n.reason = 'DeadlineExceeded';
      n.message = 'deadline passed before the node was started';
    }
  }
  const byReason = (r: string) => nodes.filter((n) => n.reason === r).map((n) => n.name);
  const describeBlockers = () =>
    nodes
      .flatMap((n) => n.blockedBy.map((b) => `${b.pod}${b.pdb ? ` (PDB ${b.pdb})` : ''}: ${b.reason}`))
      .slice(0, 10)
      .join('; ');
  if (nodes.every((n) => n.phase === 'Drained')) {
    setPhase('Drained', 'AllNodesDrained', `${nodes.length} node(s) drained`);
  } else if (nodes.some((n) => n.phase === 'Failed')) {
    const failed = nodes.filter((n) => n.phase === 'Failed');
    setPhase(
      'Failed',
      failed[0]!.reason ?? 'NodeFailed',
      failed.map((n) => `${n.name}: ${n.message ?? ''}`).join('; '),
    );
  } else if (deadlineHit || byReason('DeadlineExceeded').length > 0) {
    setPhase(
      'Blocked',
      'DeadlineExceeded',
      `deadline passed; still blocking: ${describeBlockers() || 'nodes not drained'}`,
    );
  } else {
    setPhase('Blocked', 'PodsNotEvictable', `pods that cannot be evicted: ${describeBlockers()}`);
  }

  // ---- 4. hand back: wait for release or abort (the operator aborts when the plan is deleted) ----
  for (;;) {
    await condition(() => released || aborted);
    if (aborted) {
      await handBack(spec.uncordon !== 'Never');
      setPhase('Aborted', 'Aborted', 'plan ended: nodes handed back per spec.uncordon');
      return close({ phase: 'Aborted', reason: 'Aborted', message: state.message });
    }
    if (spec.uncordon === 'OnDelete') {
      if (state.phase !== 'Completed')
        setPhase('Completed', 'Released', 'released; nodes stay cordoned until the plan is deleted');
      released = false;
      continue;
    }
    await handBack(spec.uncordon === 'OnRelease');
    setPhase(
      'Completed',
      'Released',
      spec.uncordon === 'OnRelease'
        ? 'released; nodes uncordoned'
        : 'released; nodes left cordoned (uncordon: Never)',
    );
    return close({ phase: 'Completed', reason: 'Released', message: state.message });
  }
}
