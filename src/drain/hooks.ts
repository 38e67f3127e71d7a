/**
 * Rolling maintenance of one node, the pure half: the per-node hooks (spec.hooks.beforeDrain /
 * afterDrain) and the per-node hand-back (spec.uncordon AfterEachNode) as a small state machine
 * ({@link RollState}, carried in the node drain's state across continue-as-new) and the step it
 * asks for next ({@link nextRollStep}).
 *
 * Stages: BeforeDrain → Drain → AfterDrain → Done.
 * - BeforeDrain: the beforeDrain hook runs once; success → Drain; failure blocks the node (reason
 *   HookFailed, the hook's message) until a per-node release (AfterEachNode: handed back undrained),
 *   an abort or the deadline.
 * - Drain: the eviction loop of src/drain/node/decide.ts.
 * - AfterDrain: the afterDrain hook runs once; with AfterEachNode its success hands the node back
 *   (uncordon), without a hook a per-node release does. A failure blocks the node as above.
 *
 * Either hook starts only on a node that is not paused ({@link heldHookStep}) and still cordoned
 * ({@link hookGateStep}).
 *
 * PURE and DETERMINISTIC: imported by workflow code. No I/O, no clock (times are parameters).
 */
import type { HookStatus } from '../api/plan.js';
import { HookPhase, NodePhase, NodeReason, RollReason } from '../api/reasons.js';
import { hookGateDeadlineMessage, hookGateDeletedMessage, hookWaitsForCordonMessage } from './hook-words.js';

/** Which hook. */
export type HookName = 'beforeDrain' | 'afterDrain';

/** One run of a hook, as the node drain keeps it (projected into status.nodes[].hook). */
export interface HookRun {
  name: HookName;
  phase: HookPhase;
  /** ms since epoch. */
  startedAtMs: number;
  /** The Job (`namespace/name`) or the child workflow ID. */
  ref: string;
  message?: string;
}

/** Where a node's rolling maintenance is. */
export type RollStage = 'BeforeDrain' | 'Drain' | 'AfterDrain' | 'Done';

/** The rolling state of one node (JSON-plain). */
export interface RollState {
  stage: RollStage;
  /** Hooks run so far in this node's drain (at most one per name: a hook runs once per node). */
  hooks: HookRun[];
  /** A per-node release arrived (signal, Update or the node annotation). */
  released: boolean;
}

/** What the rolling part of a node drain is configured with. */
export interface RollSettings {
  beforeDrain: boolean;
  afterDrain: boolean;
  /** spec.uncordon AfterEachNode. */
  uncordonAfterEachNode: boolean;
}

/** What the node drain does next. */
export type RollStep =
  /** Start hook `name` (it has not run in this node's drain). */
  | { kind: 'runHook'; name: HookName }
  /** Hook `name` runs: wait for its end. */
  | { kind: 'waitHook'; name: HookName }
  /** Run the eviction loop. */
  | { kind: 'drain' }
  /** Wait for a per-node release (or abort, or the deadline); the node shows `phase`/`reason`/`message`. */
  | { kind: 'await'; phase: 'Drained' | 'Blocked'; reason: string; message: string }
  /**
   * Hand the node back now (uncordon unless it was unschedulable before the plan); `drained` says how
   * it ends, `hookFailed` that a per-node release hands it back after its hook failed.
   */
  | { kind: 'handBack'; drained: boolean; message: string; hookFailed?: true }
  /** The node's rolling part is over; it ends Drained (still cordoned, handed back with the plan). */
  | { kind: 'end' };

/** A fresh rolling state. */
export function initialRollState(released = false): RollState {
  return { stage: 'BeforeDrain', hooks: [], released };
}

/** The run of hook `name`, if it started. */
export function hookRun(r: RollState, name: HookName): HookRun | undefined {
  return r.hooks.find((h) => h.name === name);
}

/** The hook run to show in status: the last one started. */
export function lastHook(r: RollState | undefined): HookRun | undefined {
  return r?.hooks.at(-1);
}

/**
 * The next step of a node's rolling maintenance (see the module comment). Does not change `r`;
 * the caller applies what happened with {@link hookStarted}, {@link hookEnded}, {@link drained},
 * {@link release}.
 */
export function nextRollStep(r: RollState, cfg: RollSettings): RollStep {
  if (r.stage === 'Done') return { kind: 'end' };
  if (r.stage === 'Drain') return { kind: 'drain' };
  const name: HookName = r.stage === 'BeforeDrain' ? 'beforeDrain' : 'afterDrain';
  const configured = r.stage === 'BeforeDrain' ? cfg.beforeDrain : cfg.afterDrain;
  const run = hookRun(r, name);
  if (configured) {
    if (!run) return { kind: 'runHook', name };
    if (run.phase === HookPhase.Running) return { kind: 'waitHook', name };
    // A stopped hook (aborted while it ran) ends its node Aborted at once; should the step be asked
    // again, it is a hook that did not succeed.
    if (run.phase === HookPhase.Failed || run.phase === HookPhase.Stopped) {
      const message = `${name} hook failed: ${run.message ?? 'no message'}`;
      if (cfg.uncordonAfterEachNode && r.released)
        return {
          kind: 'handBack',
          drained: r.stage === 'AfterDrain',
          message: `${message}; released by hand`,
          hookFailed: true,
        };
      return { kind: 'await', phase: NodePhase.Blocked, reason: RollReason.HookFailed, message };
    }
  }
  // The hook succeeded, or there is none.
  if (r.stage === 'BeforeDrain') return { kind: 'drain' };
  if (!cfg.uncordonAfterEachNode) return { kind: 'end' };
  if (configured) return { kind: 'handBack', drained: true, message: 'drained; afterDrain hook succeeded' };
  if (r.released) return { kind: 'handBack', drained: true, message: 'drained; released' };
  return {
    kind: 'await',
    phase: NodePhase.Drained,
    reason: RollReason.AwaitingRelease,
    message:
      'drained; waiting for a per-node release (drainflow release PLAN --node NODE, or the node annotation drainflow.dev/release=true)',
  };
}

/** What a node paused when hook `name` was due does now ({@link heldHookStep}). */
export type HeldHookStep =
  | { kind: 'wait' }
  | { kind: 'start' }
  | {
      kind: 'end';
      phase: 'Aborted' | 'Blocked' | 'Drained';
      reason: string;
      message: string;
    };

/**
 * A hook due while the node is paused (the user's pause, or outside the maintenance windows)
 * starts only once it is resumed: a hook is disruptive work on the node. A deadline that passes
 * while paused ends the node only after the resume, as the drain's deadline policy applies then
 * (src/drain/node/decide.ts): a beforeDrain hook's node ends Blocked/DeadlineExceeded (still
 * cordoned, nothing evicted), an afterDrain hook's Drained (still cordoned, handed back with the
 * plan). An abort ends it at once.
 */
export function heldHookStep(
  name: HookName,
  s: { paused: boolean; aborted: boolean },
  pastDeadline: boolean,
): HeldHookStep {
  if (s.aborted)
    return {
      kind: 'end',
      phase: NodePhase.Aborted,
      reason: NodeReason.Aborted,
      message: `aborted before the ${name} hook`,
    };
  if (s.paused) return { kind: 'wait' };
  if (!pastDeadline) return { kind: 'start' };
  return name === 'beforeDrain'
    ? {
        kind: 'end',
        phase: NodePhase.Blocked,
        reason: NodeReason.DeadlineExceeded,
        message: 'deadline passed while paused, before the beforeDrain hook started',
      }
    : {
        kind: 'end',
        phase: NodePhase.Drained,
        reason: NodeReason.Drained,
        message: 'drained; deadline passed while paused, before the afterDrain hook started',
      };
}

/** What the node saw of itself at its last look before a hook (an `observeNode` answer). */
export interface HookGateView {
  /** The Node of the name exists (and is the one the plan claimed: see `replacedBy`). */
  exists: boolean;
  /** Its `spec.unschedulable`. */
  unschedulable: boolean;
  /** The uid of another Node standing under the name (the claimed one deleted, created again). */
  replacedBy?: string;
}

/** What a node whose hook `name` is due does now ({@link hookGateStep}). */
export type HookGateStep =
  /** Start the hook. */
  | { kind: 'start' }
  /** Paused (the user's pause, or outside the maintenance windows): wait for the resume ({@link heldHookStep}). */
  | { kind: 'hold' }
  /** Look at the node first (no look since the hook became due, or since the resume). */
  | { kind: 'look' }
  /** Someone else uncordoned the node: show this and wait for a cordon, an abort or the deadline. */
  | { kind: 'wait'; phase: 'Blocked'; reason: string; message: string }
  /** The node ends without the hook. */
  | { kind: 'end'; phase: 'Aborted' | 'Blocked' | 'Drained' | 'Deleted'; reason: string; message: string };

/**
 * A hook starts only on a node that is still cordoned: a hook is disruptive work the plan does on
 * a node it took out of service (a beforeDrain hook's Job runs on the node; the afterDrain hook of
 * uncordon AfterEachNode hands it back). A node someone else uncordoned — while the plan was
 * paused, or at any time before its hook — is Blocked/NodeUncordonedExternally, as the drain and
 * the wait for a per-node release show it, and the hook waits until the node is cordoned again.
 *
 * In order: an abort ends the node (Aborted, nothing started); a pause holds it
 * ({@link heldHookStep}); without a look since the hook became due (or since the resume) it looks
 * first; a Node deleted (or deleted and created again under its name) ends Deleted/NodeDeleted; a
 * cordoned node starts the hook (past the deadline too: as without the gate, the drain that
 * follows ends by the deadline's rules); an uncordoned one past the deadline ends as a hook held
 * by a pause does at its resume past the deadline — beforeDrain Blocked/DeadlineExceeded (nothing
 * evicted: onDeadline DeletePods deletes nothing on an uncordoned node either), afterDrain Drained
 * (its pods left; handed back with the plan) —, else it waits.
 *
 * @param at the node's name, its plan's name (for the words) and its pause and abort.
 * @param view the last look at the node since the hook became due, undefined when none.
 * @param pastDeadline whether the plan's deadline has passed.
 */
export function hookGateStep(
  name: HookName,
  at: { node: string; plan: string; paused: boolean; aborted: boolean },
  view: HookGateView | undefined,
  pastDeadline: boolean,
): HookGateStep {
  if (at.aborted)
    return {
      kind: 'end',
      phase: NodePhase.Aborted,
      reason: NodeReason.Aborted,
      message: `aborted before the ${name} hook`,
    };
  if (at.paused) return { kind: 'hold' };
  if (!view) return { kind: 'look' };
  if (!view.exists || view.replacedBy !== undefined)
    return {
      kind: 'end',
      phase: NodePhase.Deleted,
      reason: NodeReason.NodeDeleted,
      message: hookGateDeletedMessage(at.node, name, view.replacedBy),
    };
  if (view.unschedulable) return { kind: 'start' };
  if (pastDeadline)
    return name === 'beforeDrain'
      ? {
          kind: 'end',
          phase: NodePhase.Blocked,
          reason: NodeReason.DeadlineExceeded,
          message: hookGateDeadlineMessage(at.node, name),
        }
      : {
          kind: 'end',
          phase: NodePhase.Drained,
          reason: NodeReason.Drained,
          message: hookGateDeadlineMessage(at.node, name),
        };
  return {
    kind: 'wait',
    phase: NodePhase.Blocked,
    reason: NodeReason.NodeUncordonedExternally,
    message: hookWaitsForCordonMessage(at.node, at.plan, name),
  };
}

/** Records that hook `name` started at `nowMs` as `ref` (a hook starts once: a second call is ignored). */
export function hookStarted(r: RollState, name: HookName, ref: string, nowMs: number): void {
  if (hookRun(r, name)) return;
  r.hooks.push({ name, phase: HookPhase.Running, startedAtMs: nowMs, ref });
}

/** Records the end of hook `name`: succeeded, or failed with `message`. */
export function hookEnded(r: RollState, name: HookName, ok: boolean, message?: string): void {
  const run = hookRun(r, name);
  if (!run || run.phase !== HookPhase.Running) return;
  run.phase = ok ? HookPhase.Succeeded : HookPhase.Failed;
  if (message !== undefined) run.message = message;
  else delete run.message;
}

/**
 * Records that hook `name`, still running, was stopped (the plan aborted: its Job deleted or its
 * workflow cancelled), with `message` saying how. A hook that already ended keeps its end.
 */
export function hookStopped(r: RollState, name: HookName, message: string): void {
  const run = hookRun(r, name);
  if (!run || run.phase !== HookPhase.Running) return;
  run.phase = HookPhase.Stopped;
  run.message = message;
}

/** Moves from BeforeDrain to Drain (when {@link nextRollStep} said `drain`). */
export function drainStarts(r: RollState): void {
  if (r.stage === 'BeforeDrain') r.stage = 'Drain';
}

/** The node is drained: on to AfterDrain. */
export function drained(r: RollState): void {
  if (r.stage === 'BeforeDrain' || r.stage === 'Drain') r.stage = 'AfterDrain';
}

/** A per-node release arrived (idempotent). */
export function release(r: RollState): void {
  r.released = true;
}

/** The node was handed back, or its rolling part ended. */
export function rollDone(r: RollState): void {
  r.stage = 'Done';
}

/** status.nodes[].hook of a hook run. */
export function hookStatus(h: HookRun): HookStatus {
  return {
    name: h.name,
    phase: h.phase,
    started: new Date(h.startedAtMs).toISOString(),
    ref: h.ref,
    ...(h.message ? { message: h.message } : {}),
  };
}

/** 32-bit FNV-1a of `s`, as 8 hex digits (a deterministic, workflow-safe name suffix). */
function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * The name of the Job of hook `hook` on `node` for the plan with UID `planUid`:
 * `drainflow-<before|after>-<node, cut>-<hash of plan uid, node and hook>`, at most 63 characters
 * (a Job's name becomes its pods' `job-name` label value, which Kubernetes bounds to 63). The same
 * inputs always give the same name, so a retried or replayed creation finds the Job it made.
 */
export function hookJobName(planUid: string, node: string, hook: HookName): string {
  const kind = hook === 'beforeDrain' ? 'before' : 'after';
  const hash = fnv1a(`${planUid}/${node}/${hook}`);
  const room = 63 - `drainflow-${kind}--${hash}`.length;
  const cut = node
    .slice(0, room)
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/-+$/, '');
  return `drainflow-${kind}-${cut}-${hash}`;
}

/** Workflow ID of the child workflow of hook `hook`, under the node drain's workflow ID. */
export function hookWorkflowId(nodeWorkflowId: string, hook: HookName): string {
  return `${nodeWorkflowId}-${hook}`;
}
