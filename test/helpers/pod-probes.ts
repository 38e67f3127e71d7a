/**
 * Probes of pods and PodDisruptionBudgets for the e2e tests, straight over the Kubernetes API (no
 * workflow needs them: the node drain learns all of it from `observeNode`). Reads and polls with
 * the given clients, so a test can probe with a ServiceAccount's own credentials.
 */
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { PodSelection } from '../../src/api/plan.js';
import { buildNodePods, observedAllowed } from '../../src/activities/node-pods.js';
import type { NodePods } from '../../src/activities/types.js';
import { errorCode, sleep, type Clients } from './k8s.js';

/** A pod's state by UID (see {@link checkPod}). */
export type PodState = 'Gone' | 'Terminating' | 'Present';

/** Pause between two reads of a wait, ms. */
const POLL_MS = 250;

/**
 * The pods bound to `node` (all namespaces) with the PDBs of their namespaces, classified and
 * matched as `observeNode` does ({@link buildNodePods}).
 */
export async function listNodePods(
  c: Clients,
  input: { node: string; selection: PodSelection },
): Promise<NodePods> {
  const pods = (await c.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${input.node}` })).items;
  const pdbs = new Map<string, V1PodDisruptionBudget[]>();
  for (const ns of new Set(pods.map((p) => p.metadata?.namespace ?? '')))
    pdbs.set(ns, (await c.policy.listNamespacedPodDisruptionBudget({ namespace: ns })).items);
  return buildNodePods(pods, (ns) => pdbs.get(ns) ?? [], input.selection);
}

/**
 * The pod `namespace/name` with this UID: `Gone` when absent or when the name belongs to another
 * UID, `Terminating` when it has a deletionTimestamp, else `Present`.
 */
export async function checkPod(
  c: Clients,
  pod: { namespace: string; name: string; uid: string },
): Promise<PodState> {
  let read;
  try {
    read = await c.core.readNamespacedPod({ namespace: pod.namespace, name: pod.name });
  } catch (err) {
    if (errorCode(err) === 404) return 'Gone';
    throw err;
  }
  if (read.metadata?.uid !== pod.uid) return 'Gone';
  return read.metadata?.deletionTimestamp ? 'Terminating' : 'Present';
}

/** Polls until the pod with this UID is gone; `{ gone: false }` after `timeoutSeconds`. */
export async function waitPodGone(
  c: Clients,
  pod: { namespace: string; name: string; uid: string; timeoutSeconds: number },
): Promise<{ gone: boolean }> {
  const deadline = Date.now() + pod.timeoutSeconds * 1000;
  for (;;) {
    if ((await checkPod(c, pod)) === 'Gone') return { gone: true };
    if (Date.now() >= deadline) return { gone: false };
    await sleep(POLL_MS);
  }
}

/**
 * Polls until the PDB `namespace/name` allows a disruption as the eviction subresource sees it
 * ({@link observedAllowed}): `{ disruptionsAllowed, exists: true }`; `{ 0, exists: false }` once
 * it is deleted; `{ 0, exists: true }` after `timeoutSeconds`.
 */
export async function waitDisruptionAllowed(
  c: Clients,
  input: { pdb: string; timeoutSeconds: number },
): Promise<{ disruptionsAllowed: number; exists: boolean }> {
  const [namespace = '', name = ''] = input.pdb.split('/');
  const deadline = Date.now() + input.timeoutSeconds * 1000;
  for (;;) {
    let pdb;
    try {
      pdb = await c.policy.readNamespacedPodDisruptionBudget({ namespace, name });
    } catch (err) {
      if (errorCode(err) === 404) return { disruptionsAllowed: 0, exists: false };
      throw err;
    }
    const allowed = observedAllowed(pdb);
    if (allowed > 0) return { disruptionsAllowed: allowed, exists: true };
    if (Date.now() >= deadline) return { disruptionsAllowed: 0, exists: true };
    await sleep(POLL_MS);
  }
}
