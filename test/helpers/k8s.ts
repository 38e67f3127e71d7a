/**
 * Helpers for end-to-end tests against a real Kubernetes API (the local stack of
 * `scripts/stack/stack.sh`, or any cluster `$KUBECONFIG` points at): clients, unique names, test
 * namespaces and nodes, polling, and fixture builders for the objects drains deal with.
 *
 * Conventions: every object a test creates lives in a namespace (or is a Node) named with
 * {@link uniqueName} and labelled {@link TEST_LABEL}, so leftovers are easy to find
 * (`kubectl get ns,nodes -l drainflow.dev/test`). Pods get `terminationGracePeriodSeconds: 1` unless told
 * otherwise, so deletions complete quickly under kwok's grace-period-honouring delete stage.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type KubernetesObject,
  type V1DaemonSet,
  type V1Deployment,
  type V1Node,
  type V1Pod,
  type V1PodDisruptionBudget,
  type V1PodSpec,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { kubectlPath } from './binaries.js';

/** Label put on every namespace and node the tests create. */
export const TEST_LABEL = 'drainflow.dev/test';

/** kwok pod-ready stage annotation: delays Running/Ready by a Go duration ("3s"), see scripts/stack/kwok-stages.yaml. */
export const READY_DELAY_ANNOTATION = 'drainflow.dev/ready-delay';

/** Image of test pods: kwok runs no container, so any name works. */
export const TEST_IMAGE = 'registry.k8s.io/pause:3.10';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The KubeConfig of `$KUBECONFIG`.
 * @throws Error with the commands that set it up when `$KUBECONFIG` is unset (e2e tests must fail, not skip).
 */
export function kubeConfig(): KubeConfig {
  const path = process.env.KUBECONFIG;
  if (!path) {
    throw new Error(
      'KUBECONFIG is not set: these end-to-end tests need a Kubernetes API. Start the local stack and load its ' +
        'environment first:\n  bash scripts/stack/stack.sh up\n  eval "$(bash scripts/stack/stack.sh env)"',
    );
  }
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** Typed API clients for one KubeConfig. */
export interface Clients {
  kc: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  policy: PolicyV1Api;
  custom: CustomObjectsApi;
  /** Generic client (server-side apply of arbitrary manifests). */
  objects: KubernetesObjectApi;
}

/** Builds the API clients for `kc` (default: {@link kubeConfig}). */
export function clients(kc: KubeConfig = kubeConfig()): Clients {
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    policy: kc.makeApiClient(PolicyV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(kc),
  };
}

/**
 * A DNS-1123 label unique to this run: `<prefix>-<base36 time>-<random hex>`, at most 63 characters.
 * @param prefix lower-case letters, digits and '-'.
 */
/**
 * PDB observations without their `resourceVersion` (asserted to be a canonical positive integer,
 * as etcd-backed API servers write them), for `deepEqual` against keys and allowances.
 */
export function withoutVersions<T extends { key: string; resourceVersion?: string }>(
  pdbs: readonly T[],
): Omit<T, 'resourceVersion'>[] {
  return pdbs.map(({ resourceVersion, ...rest }) => {
    if (!/^[1-9][0-9]*$/.test(resourceVersion ?? ''))
      throw new Error(
        `PDB ${rest.key}: resourceVersion ${String(resourceVersion)} is not a positive integer`,
      );
    return rest;
  });
}

export function uniqueName(prefix: string): string {
  const suffix = `${Date.now().toString(36).slice(-5)}-${randomBytes(3).toString('hex')}`;
  return `${prefix.toLowerCase().slice(0, 63 - suffix.length - 1)}-${suffix}`;
}

/** A promise resolved after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `predicate` until it returns a value other than `undefined`, `null` or `false`, and returns that
 * value. Errors thrown by `predicate` count as "not yet" (the last one is reported on timeout).
 *
 * @param predicate the check, sync or async.
 * @param timeoutMs how long to try.
 * @param opts.intervalMs pause between attempts (default 250 ms); opts.what names the wait in the error.
 * @throws Error naming `what` (and the last error) after `timeoutMs`.
 */
export async function waitFor<T>(
  predicate: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs: number,
  opts: { intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await predicate();
      if (v !== undefined && v !== null && v !== false) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const tail = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? 'condition'}${tail}`);
    }
    await sleep(opts.intervalMs ?? 250);
  }
}

/** The HTTP status of a client-node error, `undefined` for other errors. */
export function errorCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** Runs `fn`, ignoring a 404 (for cleanup of objects that may be gone already). */
export async function ignoreNotFound<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (errorCode(err) === 404) return undefined;
    throw err;
  }
}

/**
 * Creates a namespace `<prefix>-<unique>` labelled {@link TEST_LABEL} and waits until its `default`
 * ServiceAccount exists (the ServiceAccount admission plugin rejects pods before that).
 * @returns the namespace name.
 */
export async function createNamespace(c: Clients, prefix = 'df-e2e'): Promise<string> {
  const name = uniqueName(prefix);
  await c.core.createNamespace({ body: { metadata: { name, labels: { [TEST_LABEL]: 'true' } } } });
  await waitFor(
    () => c.core.readNamespacedServiceAccount({ name: 'default', namespace: name }).then(() => true),
    30_000,
    { what: `ServiceAccount ${name}/default` },
  );
  return name;
}

/** Deletes a namespace (and so everything in it) without waiting; ignores a missing one. */
export async function deleteNamespace(c: Clients, name: string): Promise<void> {
  await ignoreNotFound(() => c.core.deleteNamespace({ name }));
}

/**
 * Creates a Node `<prefix>-<unique>` that kwok manages (annotation `kwok.x-k8s.io/node: fake`, labels
 * `kubernetes.io/hostname`, `type: kwok` and {@link TEST_LABEL}), and waits until it is Ready. A test
 * that cordons or drains gets a node nobody else schedules onto.
 *
 * @param opts.labels extra labels; opts.unschedulable creates it cordoned.
 * @returns the node name.
 */
export async function createNode(
  c: Clients,
  prefix = 'df-e2e-node',
  opts: { labels?: Record<string, string>; unschedulable?: boolean } = {},
): Promise<string> {
  const name = uniqueName(prefix);
  const node: V1Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake' },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
        [TEST_LABEL]: 'true',
        ...opts.labels,
      },
    },
    spec: { unschedulable: opts.unschedulable ?? false },
  };
  await c.core.createNode({ body: node });
  await waitFor(
    async () => {
      const n = await c.core.readNode({ name });
      return n.status?.conditions?.some((cond) => cond.type === 'Ready' && cond.status === 'True');
    },
    60_000,
    { what: `node ${name} Ready` },
  );
  return name;
}

/** Deletes a node; ignores a missing one. Pods bound to it are garbage-collected by the control plane. */
export async function deleteNode(c: Clients, name: string): Promise<void> {
  await ignoreNotFound(() => c.core.deleteNode({ name }));
}

/** Sets `spec.unschedulable` of a node (merge patch; `false` removes the field as `kubectl uncordon` does). */
export async function setUnschedulable(c: Clients, name: string, unschedulable: boolean): Promise<void> {
  await c.core.patchNode(
    { name, body: { spec: { unschedulable: unschedulable ? true : null } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** Options shared by the pod-bearing fixture builders. */
export interface PodTemplateOptions {
  /** Pod labels (and, for controllers, the selector). */
  labels?: Record<string, string>;
  /** Bind to this node directly (no scheduler; works on cordoned nodes too). */
  nodeName?: string;
  /** Schedule with `nodeSelector: {kubernetes.io/hostname: <node>}` instead (the scheduler respects cordons). */
  hostname?: string;
  /** Delay before kwok marks the pod Running/Ready, as a Go duration ("5s"). */
  readyDelay?: string;
  /** Add an emptyDir volume named `scratch`. */
  emptyDir?: boolean;
  /** Default 1. */
  terminationGracePeriodSeconds?: number;
  annotations?: Record<string, string>;
}

/** The pod spec the builders share: one container, short grace period, optional node pinning and emptyDir. */
export function makePodSpec(opts: PodTemplateOptions = {}): V1PodSpec {
  const spec: V1PodSpec = {
    containers: [{ name: 'main', image: TEST_IMAGE }],
    terminationGracePeriodSeconds: opts.terminationGracePeriodSeconds ?? 1,
    automountServiceAccountToken: false,
  };
  if (opts.nodeName) spec.nodeName = opts.nodeName;
  if (opts.hostname) spec.nodeSelector = { 'kubernetes.io/hostname': opts.hostname };
  if (opts.emptyDir) {
    spec.volumes = [{ name: 'scratch', emptyDir: {} }];
    spec.containers[0]!.volumeMounts = [{ name: 'scratch', mountPath: '/scratch' }];
  }
  return spec;
}

function podAnnotations(opts: PodTemplateOptions): Record<string, string> | undefined {
  const a = { ...opts.annotations };
  if (opts.readyDelay) a[READY_DELAY_ANNOTATION] = opts.readyDelay;
  return Object.keys(a).length > 0 ? a : undefined;
}

/** A bare pod (no controller: kubectl drain refuses it without --force). */
export function makePod(namespace: string, name: string, opts: PodTemplateOptions = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: opts.labels ?? { app: name }, annotations: podAnnotations(opts) },
    spec: makePodSpec(opts),
  };
}

/** A Deployment of `replicas` pods labelled `labels` (default `{app: name}`). */
export function makeDeployment(
  namespace: string,
  name: string,
  replicas: number,
  opts: PodTemplateOptions = {},
): V1Deployment {
  const labels = opts.labels ?? { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: { metadata: { labels, annotations: podAnnotations(opts) }, spec: makePodSpec(opts) },
    },
  };
}

/** A DaemonSet (its pods are bound to every node matching `hostname`/nodeSelector; DaemonSets ignore cordons). */
export function makeDaemonSet(namespace: string, name: string, opts: PodTemplateOptions = {}): V1DaemonSet {
  const labels = opts.labels ?? { app: name };
  const spec = makePodSpec({ ...opts, nodeName: undefined });
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace, labels },
    spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec } },
  };
}

/**
 * A policy/v1 PodDisruptionBudget. Give exactly one of `maxUnavailable` / `minAvailable`.
 * @param selector `matchLabels`; `{}` selects every pod of the namespace.
 */
export function makePdb(
  namespace: string,
  name: string,
  selector: Record<string, string>,
  budget: { maxUnavailable: number | string } | { minAvailable: number | string },
): V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace },
    spec: { selector: Object.keys(selector).length > 0 ? { matchLabels: selector } : {}, ...budget },
  };
}

/** `app=web,tier=x` from a label map. */
export function labelSelector(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** Whether kwok has made the pod Running and Ready. */
export function isPodReady(pod: V1Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status.conditions ?? []).some((cond) => cond.type === 'Ready' && cond.status === 'True')
  );
}

/**
 * Waits until `count` pods matching `labels` in `namespace` are Running and Ready (and not terminating).
 * @returns those pods, sorted by name.
 */
export async function waitPodsReady(
  c: Clients,
  namespace: string,
  labels: Record<string, string>,
  count: number,
  timeoutMs = 60_000,
): Promise<V1Pod[]> {
  return waitFor(
    async () => {
      const list = await c.core.listNamespacedPod({ namespace, labelSelector: labelSelector(labels) });
      const ready = list.items
        .filter((p) => isPodReady(p) && !p.metadata?.deletionTimestamp)
        .sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
      return ready.length >= count ? ready : undefined;
    },
    timeoutMs,
    { what: `${count} Ready pod(s) ${labelSelector(labels)} in ${namespace}` },
  );
}

/** Waits until the pod `namespace/name` is Running and Ready; returns it. */
export async function waitPodReady(
  c: Clients,
  namespace: string,
  name: string,
  timeoutMs = 60_000,
): Promise<V1Pod> {
  return waitFor(
    async () => {
      const pod = await c.core.readNamespacedPod({ name, namespace });
      return isPodReady(pod) ? pod : undefined;
    },
    timeoutMs,
    { what: `pod ${namespace}/${name} Ready` },
  );
}

/**
 * Waits until the disruption controller has processed the PDB (status.observedGeneration >=
 * metadata.generation) and `predicate` holds for it (default: always); returns it.
 */
export async function waitPdb(
  c: Clients,
  namespace: string,
  name: string,
  predicate: (pdb: V1PodDisruptionBudget) => boolean = () => true,
  timeoutMs = 60_000,
): Promise<V1PodDisruptionBudget> {
  return waitFor(
    async () => {
      const pdb = await c.policy.readNamespacedPodDisruptionBudget({ name, namespace });
      const observed = (pdb.status?.observedGeneration ?? 0) >= (pdb.metadata?.generation ?? 1);
      return observed && predicate(pdb) ? pdb : undefined;
    },
    timeoutMs,
    { what: `PodDisruptionBudget ${namespace}/${name} observed` },
  );
}

/**
 * Server-side applies every CRD manifest of `deploy/crds/` (field manager `drainflow-e2e`) and waits until
 * each is Established and its objects can be listed. Idempotent. A CRD whose schema changed makes the
 * API server rebuild its storage, answering 429 "storage is (re)initializing" for a moment after
 * Established: the list waits that out, so the caller's first request does not meet it.
 */
export async function applyCrds(c: Clients, dir = join(repoRoot, 'deploy', 'crds')): Promise<string[]> {
  const names: string[] = [];
  const lists: { group: string; version: string; plural: string }[] = [];
  for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      const obj = doc.toJS() as
        | (KubernetesObject & {
            spec?: {
              group?: string;
              scope?: string;
              names?: { plural?: string };
              versions?: { name: string; served?: boolean }[];
            };
          })
        | null;
      if (obj?.kind !== 'CustomResourceDefinition' || !obj.metadata?.name) continue;
      names.push(obj.metadata.name);
      const version = obj.spec?.versions?.find((v) => v.served !== false)?.name;
      if (obj.spec?.scope === 'Cluster' && obj.spec.group && obj.spec.names?.plural && version)
        lists.push({ group: obj.spec.group, version, plural: obj.spec.names.plural });
    }
    // kubectl, not client-node's typed serializer: that one silently drops CRD schema fields it does
    // not model (default, enum, x-kubernetes-validations, ...), leaving a weakened CRD behind.
    execFileSync(
      kubectlPath(),
      ['apply', '--server-side', '--force-conflicts', '--field-manager=drainflow', '-f', join(dir, file)],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, KUBECONFIG: process.env.KUBECONFIG ?? '' },
      },
    );
  }
  for (const name of names) {
    await waitFor(
      async () => {
        const crd = (await c.objects.read({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name },
        })) as KubernetesObject & { status?: { conditions?: Array<{ type: string; status: string }> } };
        return crd.status?.conditions?.some((cond) => cond.type === 'Established' && cond.status === 'True');
      },
      30_000,
      { what: `CRD ${name} Established` },
    );
  }
  for (const l of lists)
    await waitFor(
      () =>
        c.custom
          .listClusterCustomObject({ ...l, limit: 1 })
          .then(() => true)
          .catch(() => undefined),
      30_000,
      { what: `${l.plural}.${l.group} listable` },
    );
  return names;
}

/**
 * A KubeConfig for the ServiceAccount `namespace/name` (created if missing): same cluster as `c.kc`, user
 * authenticated by a bound token from the TokenRequest API (valid `expirationSeconds`, default 1 h).
 * For tests that need an identity other than the admin (RBAC, API Priority and Fairness).
 */
export async function serviceAccountKubeConfig(
  c: Clients,
  namespace: string,
  name: string,
  expirationSeconds = 3600,
): Promise<KubeConfig> {
  try {
    await c.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name, namespace } } });
  } catch (err) {
    if (errorCode(err) !== 409) throw err;
  }
  const tr = await c.core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds } },
  });
  const token = tr.status?.token;
  if (!token) throw new Error(`no token issued for ServiceAccount ${namespace}/${name}`);
  const cluster = c.kc.getCurrentCluster();
  if (!cluster) throw new Error('the KubeConfig has no current cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: `${namespace}-${name}`, token }],
    contexts: [{ name: 'sa', cluster: cluster.name, user: `${namespace}-${name}` }],
    currentContext: 'sa',
  });
  return kc;
}
