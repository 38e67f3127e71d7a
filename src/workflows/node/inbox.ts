/**
 * What settled calls hand the node loop: one input per observation, eviction answer or deletion
 * answer (and a fatal failure), applied by the loop through the pure reducers of src/drain/node/.
 * Deterministic: workflow code.
 */
import { NodePhase, NodeReason } from '../../api/reasons.js';
import type { EvictResult } from '../../contract/eviction.js';
import type { NodeObservation } from '../../contract/observation.js';
import { applyDeleteAnswer, applyEvictionAnswer } from '../../drain/node/answers.js';
import { applyObservation, applyUnchangedObservation } from '../../drain/node/observation.js';
import type { DeleteAnswer, EvictionCallFailure, NodeOutcome } from '../../drain/node/state.js';
import type { NodeRun } from './run.js';

/** One input of the loop, produced by a settled activity. */
export type LoopInput =
  | { kind: 'observed'; seq: number; startedAtMs: number; waitSeconds: number; obs: NodeObservation }
  | { kind: 'observeFailed'; seq: number; message: string; cancelled: boolean }
  | { kind: 'answered'; uid: string; answer: EvictResult | EvictionCallFailure }
  | { kind: 'deleted'; uid: string; answer: DeleteAnswer }
  | { kind: 'fatal'; message: string };

/** What applying an input tells the loop beyond the state. */
export interface Applied {
  /** The node ends so (a failure), unless it ends otherwise already. */
  outcome?: NodeOutcome;
  /** The next observation starts no earlier than this (ms since epoch; 0: at once). */
  nextObserveAtMs?: number;
}

/** Applies one input to the run's state. */
export function applyInput(run: NodeRun, item: LoopInput, nowMs: number): Applied {
  const { s, spec } = run;
  switch (item.kind) {
    case 'observed':
      if (item.obs.changed) {
        applyObservation(s, item.obs, item.seq, nowMs);
        return {};
      }
      applyUnchangedObservation(s, item.seq);
      // An unchanged answer means the activity waited its bound; never look again sooner.
      return { nextObserveAtMs: item.startedAtMs + item.waitSeconds * 1000 };
    case 'fatal':
      return {
        outcome: { phase: NodePhase.Failed, reason: NodeReason.ActivityFailed, message: item.message },
      };
    case 'observeFailed':
      if (item.cancelled) return {};
      return {
        outcome: {
          phase: NodePhase.Failed,
          reason: NodeReason.ActivityFailed,
          message: `observe ${s.node}: ${item.message}`,
        },
      };
    case 'deleted':
      applyDeleteAnswer(s, item.uid, item.answer, nowMs, spec.retryBackoff);
      return {};
    case 'answered':
      applyEvictionAnswer(s, item.uid, item.answer, nowMs, spec.retryBackoff);
      // The answer changes what an observation shows (the pod terminating or gone): a node that no
      // other PDB wakes must not sit out an unchanged observation's bound first.
      return run.grantsOnly ? { nextObserveAtMs: 0 } : {};
  }
}
