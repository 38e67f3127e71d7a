/**
 * Where a PDB round's time goes, from the workflow histories of one drainflow run alone: the
 * latency of each hop on the path a freed disruption takes (a node's observation → its budget
 * request → the plan's grant → the node's eviction activity → the call), as median and p90 in ms.
 *
 * Every figure is the difference of two event timestamps written by the Temporal server, so it
 * includes queueing on the server and in the worker (the run's load shows in them). Pairs are
 * matched inside one run of one workflow (the next event of the later kind after the earlier one)
 * or, for signals between workflows, by the grant's sequence number in its payload.
 */
import proto from '@temporalio/proto';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
const T = proto.temporal.api.enums.v1.EventType;

/** Median and p90 of one hop, ms, over `n` samples. */
export interface HopFigure {
  n: number;
  medianMs: number;
  p90Ms: number;
}

/** The hops measured ({@link hopFigures}); a hop without samples is absent. */
export interface HopFigures {
  /** Node: observeNode completed → the next observeNode started (the node is not observing). */
  observeGap?: HopFigure;
  /** Node: observeNode scheduled → started (task queue dispatch). */
  observeDispatch?: HopFigure;
  /** Node: observeNode completed → the pdbBudget signal it caused sent (node workflow task). */
  observedToBudget?: HopFigure;
  /** pdbBudget sent by a node → received by the plan. */
  budgetDelivery?: HopFigure;
  /**
   * Plan: pdbBudget received → the pdbGrant sent by the first workflow task after it (status
   * writes included); requests that task answered with no grant are not counted.
   */
  budgetToGrant?: HopFigure;
  /**
   * pdbGrant sent by the plan → received by the node (matched by the grant's seq). "Sent" is the
   * completion of the plan's workflow task that sent it: its signal command (runs of older
   * builds), or its `deliverGrants` local activity, which signals during
   * the task, so that hop can be negative; negative samples are left out (with the activity nearly
   * all are, so compare `budgetRoundTrip` across the two).
   */
  grantDelivery?: HopFigure;
  /** Node: its latest pdbBudget signal sent → the next pdbGrant received. */
  budgetRoundTrip?: HopFigure;
  /** Node: pdbGrant received → an evictPod scheduled by the first workflow task after it. */
  grantToEvict?: HopFigure;
  /** evictPod scheduled → started (the eviction task queue's dispatch). */
  evictDispatch?: HopFigure;
  /** evictPod started → completed (the Eviction API call). */
  evictCall?: HopFigure;
  /** Workflow task scheduled → started, every workflow. */
  taskDispatch?: HopFigure;
  /** Workflow task started → completed, every workflow (local activities included). */
  taskRun?: HopFigure;
}

const ms = (e: HistoryEvent): number => {
  const t = e.eventTime;
  if (!t) return NaN;
  return Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
};

function figure(samples: number[]): HopFigure | undefined {
  const xs = samples.filter((x) => Number.isFinite(x) && x >= 0).sort((a, b) => a - b);
  if (xs.length === 0) return undefined;
  const at = (q: number) => xs[Math.min(xs.length - 1, Math.floor(q * (xs.length - 1) + 0.5))]!;
  return { n: xs.length, medianMs: at(0.5), p90Ms: at(0.9) };
}

/** The decoded JSON of a payload list's first payload (the SDK's default converter), or undefined. */
function firstPayload(p: proto.temporal.api.common.v1.IPayloads | null | undefined): unknown {
  const data = p?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    return JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return undefined;
  }
}

const activityType = (e: HistoryEvent): string | undefined =>
  e.activityTaskScheduledEventAttributes?.activityType?.name ?? undefined;

/**
 * Hop latencies over every run of a plan's workflows.
 * @param runs workflow ID → the events of each of its runs; the plan's ID is `planWorkflowId`, its
 *   node workflows `<planWorkflowId>-node-<node>`.
 */
export function hopFigures(planWorkflowId: string, runs: Map<string, HistoryEvent[][]>): HopFigures {
  const s: Record<keyof HopFigures, number[]> = {
    observeGap: [],
    observeDispatch: [],
    observedToBudget: [],
    budgetDelivery: [],
    budgetToGrant: [],
    budgetRoundTrip: [],
    grantDelivery: [],
    grantToEvict: [],
    evictDispatch: [],
    evictCall: [],
    taskDispatch: [],
    taskRun: [],
  };
  const grantSent = new Map<string, number>(); // "<node workflow ID>#<seq>" → ms
  const grantReceived = new Map<string, number>();
  const budgetSent: number[] = [];
  const budgetReceived: number[] = [];
  for (const [id, list] of runs) {
    const isPlan = id === planWorkflowId;
    for (const events of list) {
      const scheduled = new Map<number, HistoryEvent>(); // scheduled event ID → event
      const started = new Map<number, number>(); // scheduled event ID → started ms
      let taskScheduledMs: number | undefined;
      let taskStartedMs: number | undefined;
      let lastObserveDone: number | undefined; // awaiting the next observeNode start
      let observeDoneForBudget: number | undefined; // awaiting a pdbBudget
      let budgetAt: number | undefined; // plan: awaiting a pdbGrant
      let grantAt: number | undefined; // node: awaiting an evictPod
      let requestAt: number | undefined; // node: its latest budget request
      let tasksSinceBudget = 0;
      let tasksSinceGrant = 0;
      for (const e of events) {
        const t = ms(e);
        switch (e.eventType) {
          case T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            taskScheduledMs = t;
            break;
          case T.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            if (taskScheduledMs !== undefined) s.taskDispatch.push(t - taskScheduledMs);
            taskStartedMs = t;
            break;
          case T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            if (taskStartedMs !== undefined) s.taskRun.push(t - taskStartedMs);
            // A request (grant) counts only when the first workflow task after it answered it
            // (its commands follow this event): one that brought no grant (eviction) is no hop.
            if (budgetAt !== undefined && ++tasksSinceBudget > 1) budgetAt = undefined;
            if (grantAt !== undefined && ++tasksSinceGrant > 1) grantAt = undefined;
            break;
          case T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
            scheduled.set(Number(e.eventId), e);
            if (activityType(e) === 'evictPod' && grantAt !== undefined) {
              s.grantToEvict.push(t - grantAt);
              grantAt = undefined;
            }
            break;
          }
          case T.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
            const sid = Number(e.activityTaskStartedEventAttributes?.scheduledEventId);
            const sch = scheduled.get(sid);
            if (!sch) break;
            started.set(sid, t);
            const type = activityType(sch);
            if (type === 'observeNode') {
              s.observeDispatch.push(t - ms(sch));
              if (lastObserveDone !== undefined) s.observeGap.push(t - lastObserveDone);
              lastObserveDone = undefined;
            } else if (type === 'evictPod') s.evictDispatch.push(t - ms(sch));
            break;
          }
          case T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
            const sid = Number(e.activityTaskCompletedEventAttributes?.scheduledEventId);
            const sch = scheduled.get(sid);
            const type = sch && activityType(sch);
            if (type === 'observeNode') {
              lastObserveDone = t;
              observeDoneForBudget = t;
            } else if (type === 'evictPod' && started.has(sid)) s.evictCall.push(t - started.get(sid)!);
            break;
          }
          case T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED: {
            const a = e.workflowExecutionSignaledEventAttributes;
            if (a?.signalName === 'pdbBudget' && isPlan) {
              budgetReceived.push(t);
              if (budgetAt === undefined) {
                budgetAt = t;
                tasksSinceBudget = 0;
              }
            } else if (a?.signalName === 'pdbGrant' && !isPlan) {
              if (grantAt === undefined) {
                grantAt = t;
                tasksSinceGrant = 0;
              }
              if (requestAt !== undefined) s.budgetRoundTrip.push(t - requestAt);
              requestAt = undefined;
              const seq = (firstPayload(a.input) as { seq?: number } | undefined)?.seq;
              if (seq !== undefined) grantReceived.set(`${id}#${seq}`, t);
            }
            break;
          }
          case T.EVENT_TYPE_MARKER_RECORDED: {
            // The plan's deliverGrants local activity: its result lists the grants it signalled.
            const m = e.markerRecordedEventAttributes;
            if (!isPlan || m?.markerName !== 'core_local_activity') break;
            const meta = firstPayload(m.details?.['data']) as { activity_type?: string } | undefined;
            if (meta?.activity_type !== 'deliverGrants') break;
            const result = firstPayload(m.details?.['result']) as
              { delivered?: { workflowId: string; grant: { seq: number } }[] } | undefined;
            if (budgetAt !== undefined) s.budgetToGrant.push(t - budgetAt);
            budgetAt = undefined;
            for (const d of result?.delivered ?? []) grantSent.set(`${d.workflowId}#${d.grant.seq}`, t);
            break;
          }
          case T.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED: {
            const a = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
            if (a?.signalName === 'pdbGrant' && isPlan) {
              if (budgetAt !== undefined) s.budgetToGrant.push(t - budgetAt);
              budgetAt = undefined;
              const seq = (firstPayload(a.input) as { seq?: number } | undefined)?.seq;
              const to = a.workflowExecution?.workflowId;
              if (seq !== undefined && to) grantSent.set(`${to}#${seq}`, t);
            } else if (a?.signalName === 'pdbBudget' && !isPlan) {
              budgetSent.push(t);
              requestAt = t;
              if (observeDoneForBudget !== undefined) s.observedToBudget.push(t - observeDoneForBudget);
              observeDoneForBudget = undefined;
            }
            break;
          }
        }
      }
    }
  }
  for (const [key, sent] of grantSent) {
    const got = grantReceived.get(key);
    if (got !== undefined) s.grantDelivery.push(got - sent);
  }
  // Budget requests carry no sequence number: pair each received one with the latest sent before it.
  budgetSent.sort((a, b) => a - b);
  let i = 0;
  for (const got of budgetReceived.sort((a, b) => a - b)) {
    while (i + 1 < budgetSent.length && budgetSent[i + 1]! <= got) i++;
    if (budgetSent[i] !== undefined && budgetSent[i]! <= got) s.budgetDelivery.push(got - budgetSent[i]!);
  }
  const out: HopFigures = {};
  for (const k of Object.keys(s) as (keyof HopFigures)[]) {
    const f = figure(s[k]);
    if (f) out[k] = f;
  }
  return out;
}
