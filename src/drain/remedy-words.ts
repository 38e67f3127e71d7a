/**
 * The words of the remedy by surge (src/drain/remedy.ts): the Event of each step and the Remedy
 * condition. Nothing compares them: a wording change changes no decision.
 *
 * PURE: no I/O, no clock (times are parameters).
 */
import { ConditionType, RemedyReason } from '../api/reasons.js';
import type { ConditionUpdate } from './conditions.js';
import { RESTARTED_AT, type RemedyRecord } from './remedy.js';

/** An Event of a remedy step. */
export interface RemedyEvent {
  type: 'Normal' | 'Warning';
  reason: RemedyReason;
  message: string;
}

/** How to approve a proposal, from the CLI or the Temporal UI. */
export function approveHow(plan: string, workload: string): string {
  return `drainflow approve ${plan} --workload ${workload} (or the Temporal Update approveRemedy with {"workload":"${workload}","by":"<you>"})`;
}

function autoWords(atMs: number): string {
  return `restarting it at ${new Date(atMs).toISOString()} (spec.remedies.rolloutRestart Auto) unless the block clears`;
}

function blockWords(r: RemedyRecord): string {
  return `pod ${r.pod} on node ${r.node} is held by PodDisruptionBudget ${r.pdb}, which can never allow a disruption`;
}

/** The Event of a new proposal: a Warning under Approve (a person must act), Normal under Auto. */
export function proposedEvent(r: RemedyRecord, plan: string): RemedyEvent {
  const surge = `a rollout restart of Deployment ${r.workload} moves it by surge (a new pod starts on another node and is Ready before the old one goes)`;
  return r.autoAtMs !== undefined
    ? {
        type: 'Normal',
        reason: RemedyReason.RemedyProposed,
        message: `${blockWords(r)}; ${surge}: ${autoWords(r.autoAtMs)}; approve earlier with ${approveHow(plan, r.workload)}`,
      }
    : {
        type: 'Warning',
        reason: RemedyReason.RemedyProposed,
        message: `${blockWords(r)}; ${surge}: approve it with ${approveHow(plan, r.workload)}`,
      };
}

/** The Event of an approval. */
export function approvedEvent(r: RemedyRecord): RemedyEvent {
  const by = r.approved?.by ?? '?';
  return {
    type: 'Normal',
    reason: RemedyReason.RemedyApproved,
    message: `rollout restart of Deployment ${r.workload} approved by ${by === 'Auto' ? 'Auto (spec.remedies.rolloutRestart), after the block lasted spec.remedies.afterSeconds' : by}`,
  };
}

/** The Event of a restart's answer. */
export function restartedEvent(r: RemedyRecord): RemedyEvent {
  const a = r.applied!;
  return {
    type: 'Normal',
    reason: RemedyReason.RolloutRestarted,
    message: a.requested
      ? `Deployment ${r.workload}: pod template annotation ${RESTARTED_AT} set to ${a.restartedAt}; its rollout moves pod ${r.pod} off node ${r.node} by surge`
      : `Deployment ${r.workload} already carried ${RESTARTED_AT} ${a.restartedAt} (this plan's earlier request): no second rollout requested`,
  };
}

/** The Event of a remedy's end. */
export function endedEvent(r: RemedyRecord): RemedyEvent {
  const o = r.outcome!;
  if (o.result === 'Succeeded')
    return {
      type: 'Normal',
      reason: RemedyReason.RemedySucceeded,
      message: `pod ${r.pod} no longer blocks node ${r.node} after the rollout restart of Deployment ${r.workload}`,
    };
  if (o.result === 'Failed')
    return {
      type: 'Warning',
      reason: RemedyReason.RemedyFailed,
      message: `the rollout restart of Deployment ${r.workload} failed: ${o.message ?? 'unknown error'}; pod ${r.pod} still blocks node ${r.node}`,
    };
  return {
    type: 'Normal',
    reason: RemedyReason.RemedyWithdrawn,
    message: `the proposed rollout restart of Deployment ${r.workload} is withdrawn: pod ${r.pod} no longer blocks node ${r.node} for good`,
  };
}

/**
 * The Remedy condition: absent until the first proposal; True while a remedy is open (the first
 * one: proposed, approved or restarted), False once every one ended (the last one's outcome).
 */
export function remedyCondition(
  records: readonly RemedyRecord[] | undefined,
  plan: string,
): ConditionUpdate | undefined {
  if (!records?.length) return undefined;
  const open = records.filter((r) => r.outcome === undefined);
  const first = open[0];
  const more = open.length > 1 ? ` (and ${open.length - 1} more)` : '';
  if (first?.applied)
    return {
      type: ConditionType.Remedy,
      status: 'True',
      reason: RemedyReason.RolloutRestarted,
      message: `Deployment ${first.workload} restarted at ${first.applied.restartedAt} (approved by ${first.approved?.by ?? '?'}): waiting for its rollout to move pod ${first.pod} off node ${first.node}${more}`,
    };
  if (first?.approved)
    return {
      type: ConditionType.Remedy,
      status: 'True',
      reason: RemedyReason.RemedyApproved,
      message: `rollout restart of Deployment ${first.workload} approved by ${first.approved.by}; it is requested once the plan is not paused${more}`,
    };
  if (first)
    return {
      type: ConditionType.Remedy,
      status: 'True',
      reason: RemedyReason.RemedyProposed,
      message: `${blockWords(first)}; a rollout restart of Deployment ${first.workload} would move it by surge: ${first.autoAtMs !== undefined ? `${autoWords(first.autoAtMs)}, or ` : ''}${approveHow(plan, first.workload)}${more}`,
    };
  const last = records[records.length - 1]!;
  return endedCondition(endedEvent(last));
}

function endedCondition(e: RemedyEvent): ConditionUpdate {
  return { type: ConditionType.Remedy, status: 'False', reason: e.reason, message: e.message };
}

/**
 * What an abort says of the restarts still rolling: their Deployments finish on their own (empty
 * when none).
 */
export function abortRemedyNote(records: readonly RemedyRecord[] | undefined): string {
  const rolling = (records ?? []).filter((r) => r.applied && !r.outcome);
  if (!rolling.length) return '';
  const names = rolling
    .map((r) => `Deployment ${r.workload} (restartedAt ${r.applied!.restartedAt})`)
    .join(', ');
  return `; the rollout restart of ${names} is left to finish on its own: nothing to undo, its new pod is started before the old one goes`;
}
