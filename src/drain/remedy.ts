/**
 * The remedy by surge (spec.remedies.rolloutRestart): which Never blocks it fits
 * ({@link rolloutRemedy}), the plan workflow's record of each remedy ({@link RemedyRecord}, in its
 * one state, carried across continue-as-new) and what to do next ({@link decideRemedies}).
 *
 * A pod held by a PodDisruptionBudget that can never allow a disruption leaves its node without a
 * disruption when its Deployment rolls by surge: the Deployment controller starts a new pod on
 * another node (the drained one is cordoned), waits until it is Ready, then removes the old one.
 * That is safe only when the Deployment's own rollout never lowers availability: computed
 * `maxUnavailable` 0 and `maxSurge` at least 1 (Kubernetes' `ResolveFenceposts`,
 * pkg/controller/deployment/util/deployment_util.go: percentages of `spec.replicas`, maxSurge
 * rounded up, maxUnavailable rounded down, both 0 makes maxUnavailable 1; the default 25%/25% gives
 * 0/1 for one replica). A Recreate strategy removes every pod first; a StatefulSet deletes a pod
 * before it creates its replacement; neither has a safe remedy.
 *
 * PURE and DETERMINISTIC: no I/O, no clock (the time is a parameter). Imported by workflow code.
 */
import type { RolloutRestartPolicy } from '../api/plan.js';
import { DisruptionBlockKind, RemedyKind } from '../api/reasons.js';
import type { NoRemedyCause, RemedyFinding } from '../contract/observation.js';
import type { NodeState } from '../contract/progress.js';

export type { NoRemedyCause, RemedyFinding };

/** The pod template annotation `kubectl rollout restart` sets, and the remedy's restart too. */
export const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';

/** The fields of a Deployment the eligibility reads (apps/v1 `spec`). */
export interface DeploymentShape {
  /** spec.replicas (Kubernetes' default 1 when absent). */
  replicas?: number;
  strategy?: {
    /** RollingUpdate (default) or Recreate. */
    type?: string;
    /** An int or `"N%"` each (Kubernetes' defaults `25%` when absent). */
    rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string };
  };
}

/** An int-or-percent of `total` as `intstr.GetScaledValueFromIntOrPercent`; undefined when neither. */
function scaledIntOrPercent(v: number | string, total: number, roundUp: boolean): number | undefined {
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) return undefined;
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

/**
 * A RollingUpdate Deployment's computed `maxSurge` and `maxUnavailable` (pods), as Kubernetes'
 * `ResolveFenceposts` computes them; undefined for Recreate or a value Kubernetes would refuse.
 */
export function rolloutBounds(d: DeploymentShape): { maxUnavailable: number; maxSurge: number } | undefined {
  if (d.strategy?.type === 'Recreate') return undefined;
  const replicas = d.replicas ?? 1;
  const ru = d.strategy?.rollingUpdate;
  const maxSurge = scaledIntOrPercent(ru?.maxSurge ?? '25%', replicas, true);
  let maxUnavailable = scaledIntOrPercent(ru?.maxUnavailable ?? '25%', replicas, false);
  if (maxSurge === undefined || maxUnavailable === undefined) return undefined;
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxUnavailable, maxSurge };
}

/**
 * The safe remedy of a Never block, from the pods' owner (`Kind namespace/name`, a ReplicaSet's
 * Deployment already resolved) and, for a Deployment, what was read of it (undefined: not read).
 */
export function rolloutRemedy(
  owner: string | undefined,
  deployment: DeploymentShape | undefined,
): RemedyFinding {
  const none = (cause: NoRemedyCause, b?: { maxUnavailable: number; maxSurge: number }): RemedyFinding => ({
    kind: RemedyKind.None,
    cause,
    ...(b ?? {}),
  });
  if (owner === undefined) return none('NoController');
  const [kind, workload] = owner.split(' ');
  if (kind === 'StatefulSet') return none('StatefulSet');
  if (kind !== 'Deployment' || !workload) return none('NotDeployment');
  if (!deployment) return none('Unknown');
  if (deployment.strategy?.type === 'Recreate') return none('Recreate');
  const b = rolloutBounds(deployment);
  if (!b) return none('Unknown');
  if (b.maxUnavailable !== 0 || b.maxSurge < 1) return none('LowersAvailability', b);
  return { kind: RemedyKind.RolloutRestart, workload };
}

// ---- the plan's record of each remedy, and what to do next ----

/** How a remedy ended. */
export type RemedyResult =
  /** After the restart the pod no longer blocks its node. */
  | 'Succeeded'
  /** The restart could not be requested (e.g. the Deployment is gone, the worker may not patch it). */
  | 'Failed'
  /** The block cleared, or the node's drain ended, before the restart. */
  | 'Withdrawn';

/** One remedy of the plan (JSON-plain, in the plan workflow's state). Times are ms since epoch. */
export interface RemedyRecord {
  /** The Deployment as `namespace/name`. */
  workload: string;
  /** The node, pod (`namespace/name`) and PodDisruptionBudget (`namespace/name`) of the block. */
  node: string;
  pod: string;
  pdb: string;
  /** When the plan first saw the block and proposed the remedy. */
  sinceMs: number;
  /** Auto: when it is approved and restarted unless the block clears (sinceMs + afterSeconds). */
  autoAtMs?: number;
  /** Who approved it (a user through the approveRemedy Update, or `Auto`), and when. */
  approved?: { by: string; atMs: number };
  /**
   * The restart: when, the annotation's value (`restartedAt`, from the approval time), and whether
   * this plan's call changed the Deployment (false: it carried the value already, a retry).
   */
  applied?: { atMs: number; restartedAt: string; requested: boolean };
  /** How it ended; absent while open. */
  outcome?: { result: RemedyResult; atMs: number; message?: string };
}

/** A Never block a rollout restart can clear, as a node of the plan reports it. */
export interface RemedyBlock {
  node: string;
  pod: string;
  pdb: string;
  /** The Deployment as `namespace/name`. */
  workload: string;
}

/** Records kept at most (the oldest ended ones go first). */
export const REMEDY_RECORDS_CAP = 50;

/** Who approves when the policy is Auto. */
export const AUTO_APPROVER = 'Auto';

/** The blocks a rollout restart can clear: kind Never, remedy RolloutRestart, owner a Deployment. */
export function remedyBlocks(nodes: readonly Pick<NodeState, 'name' | 'blockedBy'>[]): RemedyBlock[] {
  const out: RemedyBlock[] = [];
  for (const n of nodes)
    for (const b of n.blockedBy ?? []) {
      const [kind, workload] = (b.owner ?? '').split(' ');
      if (
        b.kind === DisruptionBlockKind.Never &&
        b.remedy === RemedyKind.RolloutRestart &&
        b.pdb !== undefined &&
        kind === 'Deployment' &&
        workload
      )
        out.push({ node: n.name, pod: b.pod, pdb: b.pdb, workload });
    }
  return out;
}

/** What {@link decideRemedies} reads besides the records and the blocks. */
export interface RemedyContext {
  /** spec.remedies.rolloutRestart. */
  policy: RolloutRestartPolicy;
  /** spec.remedies.afterSeconds (Auto), seconds. */
  afterSeconds: number;
  /** The workflow's time, ms since epoch. */
  nowMs: number;
  /** Paused by the user or outside the maintenance windows: nothing is restarted. */
  held: boolean;
  /** The plan is aborted (or past its deadline): nothing new is proposed or restarted. */
  stopped: boolean;
  /**
   * Pods each running node still reports as blocked (any reason), by node: a restarted remedy
   * succeeded once its pod is no longer among them.
   */
  blockedPods: Record<string, string[]>;
}

/** One step of a remedy, in the order given. */
export type RemedyAction =
  /** Records a new proposal. */
  | { do: 'propose'; record: RemedyRecord }
  /** Auto: approves the open proposal of `workload` (by {@link AUTO_APPROVER}). */
  | { do: 'approve'; workload: string; by: string }
  /** Restarts the Deployment with this annotation value (the activity is idempotent on it). */
  | { do: 'restart'; workload: string; restartedAt: string }
  /** Ends the open remedy of `workload`. */
  | { do: 'end'; workload: string; result: RemedyResult };

/** The open (not ended) remedy of a Deployment, if any: there is at most one. */
export function openRemedy(records: readonly RemedyRecord[], workload: string): RemedyRecord | undefined {
  return records.find((r) => r.workload === workload && r.outcome === undefined);
}

/** The annotation value of an approval made at `atMs`: RFC 3339 in UTC, ms precision. */
export function restartedAtOf(atMs: number): string {
  return new Date(atMs).toISOString();
}

/**
 * What to do next with the remedies. For each open remedy: not restarted yet and its block gone →
 * end Withdrawn; approved (or, under Auto, blocked for afterSeconds) and neither held nor stopped →
 * restart; restarted and its pod no longer blocks its node → end Succeeded. Then a proposal for
 * each block of a Deployment with no open remedy and no remedy yet for that pod (not when the
 * policy is Never, nor when stopped).
 * @returns the actions, and when to decide again (Auto's due time), ms since epoch.
 */
export function decideRemedies(
  records: readonly RemedyRecord[],
  blocks: readonly RemedyBlock[],
  ctx: RemedyContext,
): { actions: RemedyAction[]; wakeAtMs?: number } {
  const actions: RemedyAction[] = [];
  let wakeAtMs: number | undefined;
  for (const r of records) {
    if (r.outcome) continue;
    if (r.applied) {
      if (!(ctx.blockedPods[r.node] ?? []).includes(r.pod))
        actions.push({ do: 'end', workload: r.workload, result: 'Succeeded' });
      continue;
    }
    if (!blocks.some((b) => b.workload === r.workload && b.node === r.node)) {
      actions.push({ do: 'end', workload: r.workload, result: 'Withdrawn' });
      continue;
    }
    if (ctx.stopped) continue;
    if (r.approved) {
      if (!ctx.held)
        actions.push({ do: 'restart', workload: r.workload, restartedAt: restartedAtOf(r.approved.atMs) });
      continue;
    }
    if (ctx.policy !== 'Auto') continue;
    const dueMs = r.autoAtMs ?? r.sinceMs + ctx.afterSeconds * 1000;
    if (ctx.nowMs < dueMs || ctx.held) {
      if (ctx.nowMs < dueMs) wakeAtMs = Math.min(wakeAtMs ?? Infinity, dueMs);
      continue;
    }
    actions.push(
      { do: 'approve', workload: r.workload, by: AUTO_APPROVER },
      { do: 'restart', workload: r.workload, restartedAt: restartedAtOf(ctx.nowMs) },
    );
  }
  if (ctx.policy === 'Never' || ctx.stopped)
    return { actions, ...(wakeAtMs !== undefined ? { wakeAtMs } : {}) };
  const proposed = new Set<string>();
  for (const b of blocks) {
    if (proposed.has(b.workload) || openRemedy(records, b.workload)) continue;
    if (records.some((r) => r.workload === b.workload && r.pod === b.pod)) continue;
    proposed.add(b.workload);
    const autoAtMs = ctx.policy === 'Auto' ? ctx.nowMs + ctx.afterSeconds * 1000 : undefined;
    actions.push({
      do: 'propose',
      record: { ...b, sinceMs: ctx.nowMs, ...(autoAtMs !== undefined ? { autoAtMs } : {}) },
    });
    if (autoAtMs !== undefined) wakeAtMs = Math.min(wakeAtMs ?? Infinity, autoAtMs);
  }
  return { actions, ...(wakeAtMs !== undefined ? { wakeAtMs } : {}) };
}

/**
 * Records an action's step (all but `restart`, whose result {@link recordRestart} records).
 * Mutates `records`; drops the oldest ended records beyond {@link REMEDY_RECORDS_CAP}.
 * @returns the record it changed.
 */
export function recordRemedy(
  records: RemedyRecord[],
  a: Exclude<RemedyAction, { do: 'restart' }>,
  nowMs: number,
  message?: string,
): RemedyRecord | undefined {
  if (a.do === 'propose') {
    records.push(a.record);
    while (records.length > REMEDY_RECORDS_CAP) {
      const i = records.findIndex((r) => r.outcome !== undefined);
      if (i < 0) break;
      records.splice(i, 1);
    }
    return a.record;
  }
  const r = openRemedy(records, a.workload);
  if (!r) return undefined;
  if (a.do === 'approve') r.approved ??= { by: a.by, atMs: nowMs };
  else r.outcome = { result: a.result, atMs: nowMs, ...(message !== undefined ? { message } : {}) };
  return r;
}

/** Records a restart's answer (`requested`: the call changed the Deployment). */
export function recordRestart(
  records: RemedyRecord[],
  workload: string,
  restartedAt: string,
  requested: boolean,
  nowMs: number,
): RemedyRecord | undefined {
  const r = openRemedy(records, workload);
  if (r) r.applied = { atMs: nowMs, restartedAt, requested };
  return r;
}

/**
 * Why an approval of `workload` is refused (the approveRemedy Update's validator), or undefined
 * when it is accepted: `workload` must be `namespace/name` with an open proposal not restarted yet.
 * Approving an approved proposal again is accepted (and changes nothing).
 */
export function approvalRefusal(
  records: readonly RemedyRecord[],
  workload: unknown,
  by: unknown,
  plan: string,
): string | undefined {
  if (typeof workload !== 'string' || !/^[^/\s]+\/[^/\s]+$/.test(workload))
    return `workload must be NAMESPACE/NAME of a Deployment (got ${JSON.stringify(workload)})`;
  if (typeof by !== 'string' || by.trim() === '' || by.length > 253)
    return 'by must name who approves (1 to 253 characters)';
  const r = openRemedy(records, workload);
  const open = records.filter((x) => !x.outcome && !x.applied).map((x) => x.workload);
  const list = open.length ? `proposed now: ${open.join(', ')}` : 'none is proposed now';
  if (!r) return `plan ${plan} proposes no rollout restart of Deployment ${workload} (${list})`;
  if (r.applied)
    return `Deployment ${workload} was already restarted by plan ${plan} (restartedAt ${r.applied.restartedAt})`;
  return undefined;
}
