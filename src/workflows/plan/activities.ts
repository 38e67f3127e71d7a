/**
 * The activities the plan workflow calls, with their timeouts and retries (one place, so each
 * protocol module uses the same proxies).
 *
 * Deterministic: activity types only.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ClaimCycleActivities } from '../../activities/claim-cycle.js';
import type { GrantDeliveryActivities } from '../../activities/grant-delivery.js';
import type { RemedyActivities } from '../../activities/remedy.js';
import type { DrainActivities, PreflightActivities } from '../../activities/types.js';

/** Kubernetes calls: resolve, cordon, hand back, Events. */
export const k8s = proxyActivities<DrainActivities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
});

/** spec.mode Preflight: one activity per node, which may send many dry-run evictions. */
export const preflight = proxyActivities<PreflightActivities>({
  startToCloseTimeout: '5m',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2, maximumAttempts: 5 },
});

/** Status writes: local activities (the status is not stored in the history; only the small result is). */
export const local = proxyLocalActivities<DrainActivities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
});

/** The plan's PDB grants to its nodes (src/activities/grant-delivery.ts): quick, retried until done. */
export const grantDelivery = proxyLocalActivities<GrantDeliveryActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
});

/**
 * The remedy's restart (spec.remedies): idempotent on its annotation value, so tried again after a
 * crash (10 s per try: a restart lost with a killed worker is tried again soon); about two minutes of
 * transient errors at most, then the remedy ends Failed (the loop waits for it).
 */
export const remedy = proxyActivities<RemedyActivities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '1s', maximumInterval: '20s', backoffCoefficient: 2, maximumAttempts: 10 },
});

/** Claim cycles: a few tries (reads only); a check that fails is made again at the next one. */
export const cycles = proxyActivities<ClaimCycleActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '5s', backoffCoefficient: 2, maximumAttempts: 3 },
});
