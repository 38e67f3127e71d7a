/**
 * Namespace reads of the worker: the labels of every namespace, for `spec.podOrder[].namespaceSelector`.
 */
import { CoreV1Api, type KubeConfig } from './client.js';

/** Lists the namespaces of a cluster through one CoreV1Api client made on first use. */
export class NamespaceApi {
  private core: CoreV1Api | undefined;

  constructor(private readonly kubeConfig: KubeConfig) {}

  /**
   * The labels of every namespace (one LIST, not cached: a label changed since is seen by the
   * next call). Needs `namespaces: [list]` in the caller's RBAC.
   * @returns namespace name → its labels (a copy).
   * @throws the client's `ApiException` as it comes (the caller classifies it, e.g. with
   *   `isPermanentCode` of src/k8s/errors.ts).
   */
  async labels(): Promise<Map<string, Record<string, string>>> {
    this.core ??= this.kubeConfig.makeApiClient(CoreV1Api);
    const list = await this.core.listNamespace();
    return new Map(list.items.map((n) => [n.metadata?.name ?? '', { ...(n.metadata?.labels ?? {}) }]));
  }
}
