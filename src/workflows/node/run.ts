/**
 * One run of the node workflow: its input, settings and its one JSON-plain state
 * ({@link NodeDrainState}, carried whole across continue-as-new), plus the flag the message
 * handlers and settled calls raise to wake the loop. Every protocol module of this folder works on
 * a {@link NodeRun}. Deterministic: workflow code.
 */
import { ActivityFailure } from '@temporalio/workflow';
import { initialRollState } from '../../drain/hooks.js';
import { initialNodeState, type NodeDrainSettings, type NodeDrainState } from '../../drain/node/state.js';
import { nodeDrainSpec, type DrainNodeInput, type NodeDrainSpec } from '../messages.js';

/** See the module comment. */
export interface NodeRun {
  input: DrainNodeInput;
  spec: NodeDrainSpec;
  settings: NodeDrainSettings;
  /** The node's whole state: JSON-plain, carried across continue-as-new. */
  s: NodeDrainState;
  /** When this run started, ms since epoch (continue-as-new by age). */
  runStartMs: number;
  /**
   * A node with a reporting set is woken only by new versions of the PDBs it reports (and by those
   * with evictions it has not seen counted yet) and spends the plan's grants as they come
   * (src/drain/node/budget.ts): in `scale` (20 running nodes, each with one pod behind each of 20
   * PDBs) waking every node for every version of every PDB it watches cost about 48 observations
   * per node instead of about 11. Such a node looks again at once when an eviction is answered and
   * when the plan changes its reporting set while an observation waits.
   */
  grantsOnly: boolean;
  /** Raised by a message or a settled call: the waiting loop looks again (it lowers it). */
  woken: boolean;
}

/** The run of `input`: its settings, and its state carried over or new. */
export function startRun(input: DrainNodeInput): NodeRun {
  const spec: NodeDrainSpec = input.drain ?? nodeDrainSpec(input.spec!);
  const settings: NodeDrainSettings = {
    maxConcurrentPerNode: spec.maxConcurrentPerNode,
    retryBackoff: spec.retryBackoff,
    ...(spec.onDeadline ? { onDeadline: spec.onDeadline } : {}),
    ...(spec.planDeadlineMs !== undefined ? { planDeadlineMs: spec.planDeadlineMs } : {}),
    ...(spec.deadlineWarningSeconds !== undefined
      ? { deadlineWarningSeconds: spec.deadlineWarningSeconds }
      : {}),
  };
  const s: NodeDrainState = input.carried ?? initialNodeState(input.node, input.deadlineMs, input.paused);
  // The generation of the user's controls the plan had seen when it started this node.
  if (!input.carried && input.controlGeneration !== undefined) s.controlGeneration = input.controlGeneration;
  // spec.hooks and uncordon AfterEachNode (src/workflows/node-roll.ts).
  if (spec.roll !== undefined) s.roll ??= initialRollState(input.released === true);
  if (spec.coordinatePdbs && !s.budget) s.budget = { grantSeq: 0, grants: {} };
  // A plan that names reporters tells each node its set with its first answer; until then the
  // node reports none (the plan names a reporter for each PDB as soon as it knows who tracks it).
  if (spec.pdbReporters && s.budget && s.budget.reports === undefined) s.budget.reports = [];
  return {
    input,
    spec,
    settings,
    s,
    runStartMs: Date.now(),
    grantsOnly: s.budget?.reports !== undefined,
    woken: false,
  };
}

/** The message of an activity's failure (its cause's, when it has one). */
export function errorMessage(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}
