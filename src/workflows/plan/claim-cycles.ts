/**
 * Claim cycles: while nodes of the plan wait for other plans' claims, the worker reads the waits
 * they lead to (`claimWaitGraph`) at once when the waits change, then after
 * {@link CLAIM_CYCLE_CHECK_FIRST_MS}, doubling up to {@link CLAIM_CYCLE_CHECK_MAX_MS}; a cycle
 * through this plan sets the ClaimCycle condition and sends one Warning Event per cycle
 * (src/drain/claim-cycle.ts decides).
 *
 * Deterministic: only pure modules and activity types.
 */
import { EventReason } from '../../api/reasons.js';
import { applyClaimCycle, claimCycleKey, findClaimCycle, statusWaits } from '../../drain/claim-cycle.js';
import { activitySummary } from '../../drain/summaries.js';
import { cycles } from './activities.js';
import { CLAIM_CYCLE_CHECK_FIRST_MS, track, wake, type PlanRun } from './run.js';

/** Longest wait between two claim-cycle checks, ms (the wait doubles from the first). */
export const CLAIM_CYCLE_CHECK_MAX_MS = 120_000;

/** Checks for a claim cycle when one is due (in the background). @returns when to check again (ms since epoch). */
export function checkClaimCycle(run: PlanRun, now: number): number | undefined {
  const { s, plan } = run;
  const c = run.local.cycle;
  const waits = s.stage === 'Settled' || s.aborted ? [] : statusWaits(plan.name, s.plan.nodes);
  if (waits.length === 0) {
    c.waitsKey = '';
    if (s.claimCycle?.active && !c.checking) {
      s.claimCycle = applyClaimCycle(s.claimCycle, undefined).next;
      wake(run);
    }
    return undefined;
  }
  const key = claimCycleKey(waits);
  if (key !== c.waitsKey) {
    c.waitsKey = key;
    c.checkAtMs = now;
    c.backoffMs = CLAIM_CYCLE_CHECK_FIRST_MS;
  }
  if (c.checking) return undefined;
  if (now < c.checkAtMs) return c.checkAtMs;
  c.checking = true;
  c.checkAtMs = now + c.backoffMs;
  c.backoffMs = Math.min(c.backoffMs * 2, CLAIM_CYCLE_CHECK_MAX_MS);
  track(
    run,
    cycles.claimWaitGraph
      .executeWithOptions({ summary: activitySummary.claimCycleCheck() }, [
        { plan, waits: waits.map((w) => ({ node: w.node, heldBy: w.heldBy })) },
      ])
      .then(({ edges }) => {
        const r = applyClaimCycle(s.claimCycle, findClaimCycle(plan.name, edges));
        s.claimCycle = r.next;
        if (r.warning)
          run.local.outbox.events.push({
            type: 'Warning',
            reason: EventReason.ClaimCycle,
            message: r.warning,
          });
        if (r.changed) wake(run);
      })
      .finally(() => {
        c.checking = false;
      }),
  );
  return c.checkAtMs;
}
