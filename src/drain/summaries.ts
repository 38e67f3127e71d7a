/**
 * The one-line summaries the workflows attach to their timers and activity calls (Temporal's user
 * metadata: the UI and `temporal workflow show` print them beside each timer and activity, in place
 * of a bare sequence number): what the call does ("evict ns/pod") or why the workflow wakes then
 * ("cooldown of pod ns/pod until 10:02:00"). Times are UTC wall-clock times, `HH:MM:SS`, as the
 * Temporal UI shows event times in UTC by default.
 *
 * Pure: the workflows call these and pass the result as `summary`; no words in workflow code.
 * Deterministic: only the times given (never the clock).
 */
import type { NodeDrainState } from './node/state.js';

/** `HH:MM:SS` (UTC) of a time in ms since epoch. */
export function clockTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/** Summaries of the workflows' activity calls (one line each). */
export const activitySummary = {
  /** An Eviction API call for pod `podKey` (`namespace/name`). */
  evict: (podKey: string) => `evict ${podKey}`,
  /** spec.onDeadline DeletePods: the DELETE of pod `podKey`. */
  deleteAtDeadline: (podKey: string) => `delete ${podKey} (deadline)`,
  cordon: (node: string) => `cordon ${node}`,
  handBack: (node: string) => `hand back ${node}`,
  observe: (node: string) => `observe ${node}`,
  /** The wait for plan `holder` to hand node `node` back (waitClaimReleased). */
  awaitHandBack: (node: string, holder: string) => `await hand-back of ${node} by ${holder}`,
  /** A Kubernetes Event of reason `reason`. */
  event: (reason: string) => `event ${reason}`,
  resolveNodes: () => 'resolve nodes',
  claimCycleCheck: () => 'claim cycle check',
  preflight: (node: string) => `preflight ${node}`,
  rolloutRestart: (workload: string) => `rollout restart ${workload}`,
  /** The status write of plan `plan` (a local activity). */
  writeStatus: (plan: string) => `write status of plan ${plan}`,
  /** The PDB grants of a plan to `nodes` of its nodes (a local activity). */
  deliverGrants: (nodes: number) => `deliver PDB grants to ${nodes} node${nodes === 1 ? '' : 's'}`,
  hookJob: (hook: string, node: string) => `${hook} job on ${node}`,
  waitHookJob: (hook: string, node: string) => `wait ${hook} job on ${node}`,
  stopHookJob: (hook: string, node: string) => `stop ${hook} job on ${node}`,
  hookWorkerCheck: (workflowId: string) => `did a worker take ${workflowId}`,
  hookGate: (hook: string, node: string) => `${node} cordoned for its ${hook} hook?`,
  awaitRelease: (node: string) => `await release of ${node}`,
} as const;

/**
 * Why a node's drain loop wakes at `atMs` without new input, read from its state: a pod's cooldown
 * (backoff after a refusal or failed call), a PDB's refusal backoff, the deadline warning, the
 * fresh view past the deadline, or the node's deadline. Falls back to "decide again".
 */
export function nodeWakeSummary(s: NodeDrainState, atMs: number, warningSeconds?: number): string {
  const at = clockTime(atMs);
  if (atMs === s.deadlineMs) return `deadline of node ${s.node} at ${at}`;
  if (s.deadlineView?.untilMs === atMs) return `fresh view of node ${s.node} past its deadline, until ${at}`;
  if (warningSeconds !== undefined && atMs === s.deadlineMs - warningSeconds * 1000)
    return `deadline warning of node ${s.node} at ${at}`;
  const pods = Object.values(s.pods)
    .filter((p) => p.notBeforeMs === atMs)
    .map((p) => p.key)
    .sort();
  if (pods.length > 0) return `cooldown of pod ${listed(pods)} until ${at}`;
  const pdbs = Object.values(s.pdbs)
    .filter((p) => p.refusedUntilMs === atMs)
    .map((p) => p.key)
    .sort();
  if (pdbs.length > 0) return `PDB ${listed(pdbs)} refusal backoff until ${at}`;
  return `decide again on node ${s.node} at ${at}`;
}

/** Summaries of the workflows' timers: why the workflow wakes then. */
export const timerSummary = {
  /** The node's last evictions, waiting to be confirmed by an observation (at most until `atMs`). */
  confirmEvictions: (node: string, atMs: number) => `confirm evictions on ${node} until ${clockTime(atMs)}`,
  /** eviction.skipWaitForDeleteTimeoutSeconds: the next terminating pod counts as gone. */
  deleteTimeout: (node: string, atMs: number) =>
    `terminating pod on ${node} counts as gone at ${clockTime(atMs)}`,
  /** The node's report to its plan, held back by the report interval. */
  report: (node: string, atMs: number) => `report ${node} to its plan at ${clockTime(atMs)}`,
  /** The node's next observation, paced by the last unchanged answer. */
  observe: (node: string, atMs: number) => `next observation of ${node} at ${clockTime(atMs)}`,
  /** A claim round: the node is held by plan `holder`; the next claim try. */
  claimRetry: (node: string, holder: string, atMs: number) =>
    `${node} held by ${holder}: try the claim again at ${clockTime(atMs)}`,
  /** A node paused before its claim: the wait for a resume, bounded by the deadline or a report. */
  pausedBeforeClaim: (node: string, atMs: number) =>
    `${node} paused before its claim: look again at ${clockTime(atMs)}`,
  /** A hook's run: the next report while it runs. */
  hookRunning: (hook: string, node: string, atMs: number) =>
    `${hook} hook on ${node} running: report at ${clockTime(atMs)}`,
  /** A hook asked to stop: how long the node waits for it. */
  hookStop: (hook: string, node: string, seconds: number) =>
    `stop of ${hook} hook on ${node}: wait ${seconds} s`,
  /** A hook that waits for its node to be cordoned. */
  hookGate: (hook: string, node: string, atMs: number) =>
    `${hook} hook on ${node} waits for a cordon: look again at ${clockTime(atMs)}`,
  /** A hook held by a pause. */
  hookPaused: (hook: string, node: string, atMs: number) =>
    `${hook} hook on ${node} paused: look again at ${clockTime(atMs)}`,
  /** A drained node waiting for its release (spec.uncordon AfterEachNode, or the plan's hand-back). */
  awaitRelease: (node: string, atMs: number) =>
    `${node} awaits its release: look again at ${clockTime(atMs)}`,
  /** A plan run continues as new by age. */
  planAge: (plan: string, atMs: number) => `continue plan ${plan} as new by age at ${clockTime(atMs)}`,
  planDeadline: (plan: string, atMs: number) => `deadline of plan ${plan} at ${clockTime(atMs)}`,
  /** Nodes whose drains are gone without an answer count as lost. */
  lostNodes: (plan: string, atMs: number) => `nodes of plan ${plan} count as lost at ${clockTime(atMs)}`,
  /** The status write held back by the write interval. */
  publish: (plan: string, atMs: number) => `write status of plan ${plan} at ${clockTime(atMs)}`,
  claimCycleCheck: (atMs: number) => `claim cycle check at ${clockTime(atMs)}`,
  /** spec.remedies Auto: a restart is due. */
  remedy: (atMs: number) => `remedy restart due at ${clockTime(atMs)}`,
  /** The next maintenance window boundary. */
  windowChange: (atMs: number) => `maintenance window opens or closes at ${clockTime(atMs)}`,
  /** The task that decided to continue as new ends before the run closes (1 ms). */
  continueAsNewYield: () => 'end the task before continue-as-new',
} as const;

/** Up to 3 names, then "+N more". */
function listed(names: string[]): string {
  return names.length <= 3 ? names.join(', ') : `${names.slice(0, 3).join(', ')} +${names.length - 3} more`;
}
