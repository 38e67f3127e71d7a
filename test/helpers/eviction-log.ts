/**
 * The Eviction API calls a `drainflow run --worker` process made, read from its log: the eviction
 * activity logs every answer (`eviction answered`, with the pod and the classified outcome;
 * src/activities/eviction.ts), so a test can tell whether a pod was evicted twice without the API
 * server's audit log. Also the paced workload the crash tests drain ({@link pacedWorkload}).
 */
import { createNamespace, makeDeployment, makePdb, waitPdb, waitPodsReady, type Clients } from './k8s.js';
import { createTaintedNode } from './operator-harness.js';

/** One `eviction answered` line of a worker's log. */
export interface EvictionAnswer {
  /** `namespace/name`. */
  pod: string;
  /** HTTP status of the answer. */
  code: number;
  /** The classified outcome (Evicted, Gone, TooManyRequests, Retry, Failed). */
  outcome: string;
}

/** Every Eviction API answer a worker logged (its pino JSON lines), in order. */
export function evictionAnswers(log: string): EvictionAnswer[] {
  const out: EvictionAnswer[] = [];
  for (const line of log.split('\n')) {
    if (!line.includes('"eviction answered"')) continue;
    const rec = JSON.parse(line) as { pod: string; code: number; result: { outcome: string } };
    out.push({ pod: rec.pod, code: rec.code, outcome: rec.result.outcome });
  }
  return out;
}

/**
 * The calls sent for a pod after its `Evicted` (2xx) answer, whatever they were answered (201 on a
 * terminating pod, 404 on a gone one): each is a second eviction. A refusal before the `Evicted`
 * answer (429, 409) is a retry, not counted. @returns `pod: code outcome` per such call, and the
 * pods evicted.
 */
export function evictedAgain(answers: EvictionAnswer[]): { again: string[]; evicted: string[] } {
  const evicted = new Set<string>();
  const again: string[] = [];
  for (const a of answers) {
    if (evicted.has(a.pod)) again.push(`${a.pod}: ${a.code} ${a.outcome}`);
    if (a.outcome === 'Evicted') evicted.add(a.pod);
  }
  return { again, evicted: [...evicted].sort() };
}

/**
 * The workload of the crash tests (temporal-crash, apiserver-restart): a node of the pool `pool`
 * (label `labelKey`, taint `taintKey`, both valued `pool`) holding `replicas` pods of Deployment
 * `web` (Ready 2 s after scheduling) behind a PodDisruptionBudget allowing one disruption at a time,
 * then a spare node of the pool for the replacements (created last, so the pods start on the first).
 * @returns the namespace and the two nodes (the drained one first).
 */
export async function pacedWorkload(
  c: Clients,
  o: { prefix: string; pool: string; labelKey: string; taintKey: string; replicas: number },
): Promise<{ ns: string; nodes: [string, string] }> {
  const ns = await createNamespace(c, `df-${o.prefix}`);
  const onPool = { labels: { [o.labelKey]: o.pool }, taint: { key: o.taintKey, value: o.pool } };
  const node = await createTaintedNode(c, `df-${o.prefix}-node`, onPool);
  const web = makeDeployment(ns, 'web', o.replicas, { readyDelay: '2s' });
  const spec = web.spec!.template.spec!;
  spec.nodeSelector = { [o.labelKey]: o.pool };
  spec.tolerations = [{ key: o.taintKey, operator: 'Equal', value: o.pool, effect: 'NoSchedule' }];
  await c.apps.createNamespacedDeployment({ namespace: ns, body: web });
  await c.policy.createNamespacedPodDisruptionBudget({
    namespace: ns,
    body: makePdb(ns, 'web', { app: 'web' }, { maxUnavailable: 1 }),
  });
  await waitPodsReady(c, ns, { app: 'web' }, o.replicas);
  await waitPdb(c, ns, 'web', (p) => p.status?.disruptionsAllowed === 1);
  const spare = await createTaintedNode(c, `df-${o.prefix}-spare`, onPool);
  return { ns, nodes: [node, spare] };
}
