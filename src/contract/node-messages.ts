/**
 * The messages between the plan workflow and its node workflows: a node's progress and its PDB
 * budget request (child to parent), the plan's grants and controls (parent to child). The operator
 * sends controls to running nodes directly as well (src/operator/node-stops.ts).
 *
 * Ground floor (src/contract): pure definitions, see src/contract/plan-messages.ts.
 */
import { defineSignal } from '@temporalio/workflow';
import type { PdbBudgetRequest, PdbGrant } from './budget.js';
import type { ControlAction, ControlArgs } from './plan-messages.js';
import type { NodeProgress } from './progress.js';

/** Child → parent: a node's progress changed. */
export const nodeProgressSignal = defineSignal<[NodeProgress]>('nodeProgress');

/**
 * Payload of {@link pdbBudgetSignal}: the budget request, and — from nodes of plans that name PDB
 * reporters (`NodeDrainSpec.pdbReporters` of the node workflow's input) — the node's progress when it changed since its
 * last report, so the request and the progress take one signal instead of two.
 */
export type PdbBudgetMessage = PdbBudgetRequest & { progress?: NodeProgress };

/** Child → parent: what the node holds and wants of each PDB's budget (src/drain/pdb-budget.ts). */
export const pdbBudgetSignal = defineSignal<[PdbBudgetMessage]>('pdbBudget');

/** Parent → child: disruptions the node may spend, per PDB. */
export const pdbGrantSignal = defineSignal<[PdbGrant]>('pdbGrant');

/**
 * Payload of {@link nodeControlSignal}. `generation`: the plan's metadata.generation whose spec
 * change asked for it — set by the operator's direct stops (src/operator/node-stops.ts) and by the
 * plan when it forwards a user's control that carried one; absent for the plan's window-driven
 * pauses and resumes. The node ignores a pause or resume older than
 * the newest generation it has seen (`isStaleControl` in src/drain/node/controls.ts).
 */
export interface NodeControl extends ControlArgs {
  action: ControlAction;
}

/**
 * Parent → child: pause, resume or abort the node's drain, or release the node (uncordon
 * AfterEachNode). The operator sends pause and abort to a plan's running nodes directly as well.
 */
export const nodeControlSignal = defineSignal<[NodeControl]>('nodeControl');

/**
 * Parent → child: the plan's deadline moved later (`extendDeadline`): the node's deadline becomes
 * `deadlineMs` (ms since epoch) when that is later than its own. Sent to running nodes whose
 * deadline is the plan's.
 */
export const nodeDeadlineSignal = defineSignal<[{ deadlineMs: number }]>('nodeDeadline');
