/**
 * The preflight activity, {@link PreflightActivities.preflightNode}: reads one node, its pods and the
 * PodDisruptionBudgets of their namespaces, asks the API server for a dry-run eviction of every pod
 * a drain would evict, and builds the node's report with src/drain/preflight.ts. It writes nothing:
 * the only POSTs are evictions with `dryRun=All` (admission and the PDB check run, nothing is
 * deleted, no budget is spent). `drainflow preflight` calls the same function outside Temporal.
 */
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { LabelSelector } from '../api/plan.js';
import { BlockerReason } from '../api/reasons.js';
import { NODE_CLAIM_ANNOTATION } from '../k8s/node-claim.js';
import type { KubernetesPort } from '../k8s/port.js';
import { buildPreflightNode, dryRunVerdict, failedPreflightNode, podsToDryRun } from '../drain/preflight.js';
import type { DryRunVerdict, PreflightPdbInput } from '../drain/preflight-input.js';
import { toPodInfo } from '../drain/pods.js';
import { ownersToRead } from '../drain/preflight-returning.js';
import { readOwners, type OwnerCache } from './preflight-owners.js';
import { activityContext } from './context.js';
import { classifyEviction } from './eviction.js';
import type { PreflightActivities } from './types.js';

/** Dry-run evictions (and PDB list calls) in flight at once for one node. */
export const PREFLIGHT_CONCURRENCY = 8;

/**
 * A policy/v1 PodDisruptionBudget as the report builder reads it: selector, generation, status
 * counts and conditions, `unhealthyPodEvictionPolicy`. A nil selector stays absent (selects nothing).
 */
export function toPreflightPdb(pdb: V1PodDisruptionBudget): PreflightPdbInput {
  const st = pdb.status;
  const out: PreflightPdbInput = {
    namespace: pdb.metadata?.namespace ?? '',
    name: pdb.metadata?.name ?? '',
    hasStatus: st !== undefined && st !== null,
  };
  if (pdb.spec?.selector) out.selector = pdb.spec.selector as LabelSelector;
  if (pdb.metadata?.generation !== undefined) out.generation = pdb.metadata.generation;
  if (pdb.spec?.unhealthyPodEvictionPolicy)
    out.unhealthyPodEvictionPolicy = pdb.spec.unhealthyPodEvictionPolicy;
  if (pdb.spec?.minAvailable !== undefined) out.minAvailable = pdb.spec.minAvailable;
  if (pdb.spec?.maxUnavailable !== undefined) out.maxUnavailable = pdb.spec.maxUnavailable;
  if (st) {
    if (st.observedGeneration !== undefined) out.observedGeneration = st.observedGeneration;
    out.disruptionsAllowed = st.disruptionsAllowed;
    out.currentHealthy = st.currentHealthy;
    out.desiredHealthy = st.desiredHealthy;
    out.expectedPods = st.expectedPods;
    if (st.conditions)
      out.conditions = st.conditions.map((c) => ({
        type: c.type,
        status: c.status,
        ...(c.reason ? { reason: c.reason } : {}),
        ...(c.message ? { message: c.message } : {}),
      }));
  }
  return out;
}

/** Runs `fn` over `items`, at most `limit` at once, in order of the results. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/**
 * Builds the preflight activity over `port`.
 *
 * @param port the Kubernetes calls (src/k8s/port.ts).
 * @param log where each node's totals are logged.
 * @param ownerCache the pods' controllers read so far, for a caller that examines several nodes in
 *   one go (`drainflow preflight`); absent: each call reads its own (a worker's calls are apart in time).
 */
export function createPreflightActivities(
  port: KubernetesPort,
  log: Logger,
  ownerCache?: OwnerCache,
): PreflightActivities {
  return {
    /**
     * Examines one node (see the module comment). Heartbeats after each dry-run eviction inside an
     * activity. A dry-run eviction that got no answer is reported as an `Error` verdict, not thrown.
     *
     * @throws TransientKubernetesError / PermanentKubernetesError when the node, pod or PDB reads fail.
     */
    async preflightNode(input) {
      const ctx = activityContext();
      const node = await port.readNode(input.node);
      if (!node) return failedPreflightNode(input.node, `node ${input.node} not found`);
      const pods = (await port.listNodePods(input.node)).map(toPodInfo);
      const namespaces = [...new Set(pods.map((p) => p.metadata.namespace))].sort();
      const pdbs = (await mapLimited(namespaces, PREFLIGHT_CONCURRENCY, (ns) => port.listPdbs(ns)))
        .flat()
        .map(toPreflightPdb);
      const owners = await readOwners(
        port,
        ownersToRead(pods, input.selection),
        ownerCache ?? new Map(),
        PREFLIGHT_CONCURRENCY,
      );
      const dryRun: Record<string, DryRunVerdict> = {};
      if (input.dryRun !== false) {
        await mapLimited(podsToDryRun(pods, input.selection), PREFLIGHT_CONCURRENCY, async (p) => {
          const key = `${p.namespace}/${p.name}`;
          try {
            const answer = await port.evictPod({ ...p, dryRun: true });
            if (answer === 'aborted') throw new Error('aborted');
            const result = classifyEviction(answer, p.namespace);
            dryRun[key] =
              result === 'conflict'
                ? {
                    verdict: 'Refused',
                    code: 409,
                    reason: BlockerReason.Conflict,
                    message: 'HTTP 409 Conflict',
                  }
                : dryRunVerdict(result);
          } catch (err) {
            dryRun[key] = dryRunVerdict({ error: (err as Error).message });
          }
          ctx?.heartbeat();
        });
      }
      const result = buildPreflightNode({
        node: input.node,
        unschedulable: node.spec?.unschedulable === true,
        ...(node.metadata?.annotations?.[NODE_CLAIM_ANNOTATION]
          ? { heldBy: node.metadata.annotations[NODE_CLAIM_ANNOTATION] }
          : {}),
        ...(input.planName ? { planName: input.planName } : {}),
        pods,
        pdbs,
        selection: input.selection,
        dryRun,
        ...owners,
      });
      const r = result.report;
      log.info(
        {
          node: input.node,
          podsToEvict: r.podsToEvict,
          blockers: r.blockerCount,
          dryRunAccepted: r.dryRunAccepted,
          dryRunRefused: r.dryRunRefused,
        },
        'preflight of node',
      );
      return result;
    },
  };
}
