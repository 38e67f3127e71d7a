/**
 * Runs the actions the pure stage machine decided (src/drain/plan-decide.ts), in order.
 *
 * Deterministic: only pure modules and the protocol modules.
 */
import type { PlanAction, PlanEnd } from '../../drain/plan-decide.js';
import { nodeWorkflowFailed, planOutcome } from '../../drain/plan-drain.js';
import { startNode } from './children.js';
import { cordonBatch, handBack } from './node-calls.js';
import { setPhase, type PlanRun } from './run.js';

/**
 * Runs `actions` in order.
 * @returns the run's end when an action ends it, else undefined.
 */
export async function runActions(run: PlanRun, actions: readonly PlanAction[]): Promise<PlanEnd | undefined> {
  const { s } = run;
  for (const a of actions) {
    switch (a.do) {
      case 'phase':
        setPhase(run, a.phase, a.reason, a.message);
        break;
      case 'drain':
        s.stage = 'Drain';
        break;
      case 'cordon':
        await cordonBatch(run, a.nodes);
        break;
      case 'start':
        for (const node of a.nodes) startNode(run, node);
        break;
      case 'lost':
        for (const node of a.nodes) nodeWorkflowFailed(s, node, a.message);
        break;
      case 'settle':
        s.stage = 'Settled';
        s.settledAtMs = Date.now();
        if (!s.aborted) {
          const o = planOutcome(s, run.plan.name);
          setPhase(run, o.phase, o.reason, o.message);
        }
        break;
      case 'handBack':
        await handBack(run, a.nodes, a.uncordon);
        break;
      case 'keepCordoned':
        s.released = false;
        break;
      case 'end':
        return { phase: a.phase, reason: a.reason, message: a.message };
    }
  }
  return undefined;
}
