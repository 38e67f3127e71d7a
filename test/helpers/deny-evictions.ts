/**
 * Refuses every eviction in one namespace with 403 Forbidden, for e2e tests that need a real,
 * retried refusal: a ValidatingAdmissionPolicy on `pods/eviction` CREATE whose only validation is
 * `false`, bound to that namespace. (A PodDisruptionBudget allowing nothing makes drainflow send no
 * call at all: it waits for the PDB to change, so there is no cooldown.)
 */
import { kubectl } from './operator-harness.js';
import { waitFor, type Clients } from './k8s.js';

/**
 * Applies the policy and its binding named `name` for `namespace`, then waits (up to 30 s) until
 * the API server's policy cache has it: a dry-run eviction of a pod of the namespace is refused.
 * @throws when the namespace has no pod to try, or the refusal does not come in time.
 */
export async function denyEvictions(c: Clients, namespace: string, name: string): Promise<void> {
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods/eviction'] },
        ],
      },
      validations: [
        { expression: 'false', message: `evictions are held by the test (${name})`, reason: 'Forbidden' },
      ],
    },
  };
  const binding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: {
      policyName: name,
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } },
    },
  };
  kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [policy, binding] }));
  const [somePod] = (await c.core.listNamespacedPod({ namespace })).items;
  if (!somePod)
    throw new Error(`denyEvictions: namespace ${namespace} has no pod to try a dry-run eviction on`);
  const pod = somePod.metadata!.name!;
  await waitFor(
    async () => {
      try {
        await c.core.createNamespacedPodEviction({
          name: pod,
          namespace,
          body: {
            apiVersion: 'policy/v1',
            kind: 'Eviction',
            metadata: { name: pod, namespace },
            deleteOptions: { dryRun: ['All'] },
          },
        });
        return false;
      } catch (err) {
        return (err as { code?: number }).code === 403;
      }
    },
    30_000,
    { what: 'the policy refuses evictions' },
  );
}

/** Deletes the policy and binding named `name` (no error when absent). */
export function allowEvictions(name: string): void {
  kubectl([
    'delete',
    'validatingadmissionpolicybinding,validatingadmissionpolicy',
    name,
    '--ignore-not-found',
  ]);
}
