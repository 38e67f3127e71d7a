// test-lane: parallel
/**
 * The deployment (deploy/) against a real API server, the local stack of scripts/stack:
 *
 * 1. `kubectl kustomize deploy/default` renders, the Deployments carry the non-root security context,
 *    probes, resources and a configuration that src/shared/settings.ts accepts, and
 *    `kubectl apply --dry-run=server -k deploy/default` (client-side and server-side apply) succeeds.
 * 2. The RBAC is sufficient and least privilege: with the namespace, ServiceAccounts and RBAC applied
 *    for real, `kubectl auth can-i --as=system:serviceaccount:drainflow-system:<sa>` denies a list of
 *    calls outside the grant; the worker's activities and the operator's calls (informer, finalizer
 *    and status patches, Events, leader-election Lease, the node hand-back without a workflow)
 *    succeed with the ServiceAccounts' own tokens; two real operator processes with a plan selector
 *    elect their leader on `drainflow-operator-<hash>` and reconcile a plan as the operator
 *    ServiceAccount; a call outside the grant is refused with 403.
 * 3. The image's runtime layout: `tsc -p tsconfig.build.json` compiles, and the compiled
 *    `dist/cli/main.js run --worker` (what the image runs) starts as the worker ServiceAccount,
 *    bundles the compiled workflows, serves /healthz /readyz /metrics and drains a node.
 * 4. The RBAC is derived from what the code does: the API server's audit log records every request of
 *    the two ServiceAccounts during this file (scripts/stack/audit-policy.yaml); every request was
 *    allowed and covered by a rule, and every rule was used by a request (the few the run cannot
 *    exercise are listed with their reason), so the RBAC and the code cannot drift apart.
 *
 * Everything created is removed in `after` (namespace drainflow-system, the ClusterRoles and
 * bindings, the Events Roles in `default`, test nodes and namespaces, the plan); the CRD stays.
 *
 * Needs KUBECONFIG, TEMPORAL_ADDRESS and DRAINFLOW_AUDIT_LOG:
 * `npm run stack -- up && eval "$(npm run --silent stack -- env)"`.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import {
  CoordinationV1Api,
  CoreV1Api,
  makeInformer,
  type KubeConfig,
  type KubernetesObject,
  type V1Deployment,
} from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { pino } from 'pino';
import { parseAllDocuments } from 'yaml';
import { createActivities } from '../../src/activities/index.js';
import type { ObserveNode } from '../../src/activities/observe.js';
import {
  FINALIZER,
  GROUP,
  NODE_CLAIM_ANNOTATION,
  PLURAL,
  VERSION,
  parseSpec,
  type MaintenancePlan,
} from '../../src/api/plan.js';
import { hookJobName } from '../../src/drain/hooks.js';
import { listClaimedNodes } from '../../src/k8s/node-claim.js';
import { syncNodeConditions } from '../../src/k8s/node-conditions.js';
import { createKubernetesPort } from '../../src/k8s/port.js';
import { wantedNodeConditions } from '../../src/drain/node-conditions.js';
import { NodeConditionType, NodePhase, PlanPhase } from '../../src/api/reasons.js';
import { LEASE_NAME, leaseName } from '../../src/operator/index.js';
import { LeaderElector } from '../../src/k8s/lease.js';
import { PLANS_PATH, PlanApi } from '../../src/k8s/plans.js';
import { loadConfig } from '../../src/shared/settings.js';
import type { DrainPlanInput, DrainPlanResult } from '../../src/workflows/messages.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { planWorkflowId } from '../../src/contract/names.js';
import { auditLogFile, auditMark, auditedCalls, type AuditMark, type AuditedCall } from '../helpers/audit.js';
import { kubectlPath } from '../helpers/binaries.js';
import {
  applyCrds,
  clients,
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  errorCode,
  ignoreNotFound,
  makeDeployment,
  makePdb,
  makePod,
  serviceAccountKubeConfig,
  uniqueName,
  waitFor,
  waitPdb,
  waitPodsReady,
  type Clients,
  withoutVersions,
} from '../helpers/k8s.js';
import { createPlanObject } from '../helpers/direct-plan.js';
import { freePort, startDrainflow, type DrainflowProcess } from '../helpers/processes.js';
import { waitPodGone } from '../helpers/pod-probes.js';
import { bundleClient } from '../../scripts/build/client-node.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const DEFAULT_DIR = join(repoRoot, 'deploy', 'default');
const NS = 'drainflow-system';
const OPERATOR_SA = 'drainflow-operator';
const WORKER_SA = 'drainflow-worker';
const saUser = (sa: string): string => `system:serviceaccount:${NS}:${sa}`;
const logger = pino({ level: process.env.E2E_LOG_LEVEL ?? 'silent' });
const execFileAsync = promisify(execFile);

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl with KUBECONFIG from the environment; never throws on a non-zero exit. */
function kubectl(args: string[], input?: string): Result {
  try {
    const stdout = execFileSync(kubectlPath(), args, {
      input,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr: '' };
  } catch (err) {
    const e = err as { status?: number | null; stdout?: string; stderr?: string; message: string };
    if (e.status === undefined || e.status === null)
      throw new Error(`kubectl ${args.join(' ')}: ${e.message}`, { cause: err });
    return { code: e.status, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Like {@link kubectl}, failing the test on a non-zero exit with kubectl's stderr. */
function kubectlOk(args: string[], input?: string): Result {
  const r = kubectl(args, input);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}${r.stdout}`);
  return r;
}

// ---------------------------------------------------------------------------------------------------
// The rendered manifests
// ---------------------------------------------------------------------------------------------------

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
type Obj = KubernetesObject & {
  rules?: PolicyRule[];
  roleRef?: { kind: string; name: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
  data?: Record<string, string>;
};

/** `kubectl kustomize deploy/default`, parsed. */
function render(): Obj[] {
  const out = kubectlOk(['kustomize', DEFAULT_DIR]).stdout;
  return parseAllDocuments(out)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => Boolean(o?.kind));
}

function find(objs: Obj[], kind: string, name: string, namespace?: string): Obj {
  const o = objs.find(
    (x) =>
      x.kind === kind &&
      x.metadata?.name === name &&
      (namespace === undefined || x.metadata?.namespace === namespace),
  );
  assert.ok(o, `${kind} ${namespace ? `${namespace}/` : ''}${name} is rendered`);
  return o;
}

/** One permission: a verb on a resource (`resource[/subresource]`), in a namespace or cluster-wide, maybe on one name. */
interface Grant {
  verb: string;
  /** API group, `core` for ''. */
  group: string;
  resource: string;
  /** Set for a Role's rule (RoleBinding); undefined: cluster-wide (ClusterRoleBinding). */
  namespace?: string;
  name?: string;
  /** `verb group/resource ns=<ns>|cluster [name=<name>]`. */
  key: string;
}

/** Every permission a ServiceAccount gets from the rendered (Cluster)Role(Binding)s, sorted by key. */
function grantList(objs: Obj[], sa: string): Grant[] {
  const out = new Map<string, Grant>();
  for (const b of objs.filter((o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding')) {
    if (!b.subjects?.some((s) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === NS))
      continue;
    const roleNs = b.kind === 'RoleBinding' ? b.metadata?.namespace : undefined;
    const role = find(
      objs,
      b.roleRef!.kind,
      b.roleRef!.name,
      b.roleRef!.kind === 'Role' ? roleNs : undefined,
    );
    for (const r of role.rules ?? []) {
      for (const g of r.apiGroups ?? [])
        for (const res of r.resources ?? [])
          for (const v of r.verbs) {
            const names = r.resourceNames?.length ? r.resourceNames : [undefined];
            for (const n of names) {
              const key = [
                v,
                `${g || 'core'}/${res}`,
                roleNs ? `ns=${roleNs}` : 'cluster',
                n ? `name=${n}` : '',
              ]
                .join(' ')
                .trim();
              out.set(key, {
                verb: v,
                group: g || 'core',
                resource: res,
                ...(roleNs ? { namespace: roleNs } : {}),
                ...(n ? { name: n } : {}),
                key,
              });
            }
          }
    }
  }
  return [...out.values()].sort((a, b) => a.key.localeCompare(b.key));
}

/** Whether `g` allows the audited request `call` (RBAC's rule matching, without wildcards). */
function covers(g: Grant, call: AuditedCall): boolean {
  return (
    g.verb === call.verb &&
    g.group === (call.apiGroup || 'core') &&
    g.resource === call.resource &&
    (g.namespace === undefined || g.namespace === call.namespace) &&
    (g.name === undefined || g.name === call.name)
  );
}

/** `verb group/resource ns=<ns>|cluster [name]` of an audited request, for messages. */
function callKey(call: AuditedCall): string {
  return [
    call.verb,
    `${call.apiGroup || 'core'}/${call.resource}`,
    call.namespace ? `ns=${call.namespace}` : 'cluster',
    call.name ?? '',
  ]
    .join(' ')
    .trim();
}

/** The kinds applied for real in the RBAC tests (no Deployments: there is no image on the stack). */
const IDENTITY_KINDS = new Set([
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
]);

// ---------------------------------------------------------------------------------------------------
// Fixture state and cleanup
// ---------------------------------------------------------------------------------------------------

let c: Clients;
let objs: Obj[];
/** Where the audit log stood before the first call of a ServiceAccount. */
let audit: AuditMark | undefined;
const cleanups: Array<() => Promise<unknown>> = [];
let identitiesApplied = false;

async function namespaceGone(): Promise<void> {
  await waitFor(
    async () => {
      try {
        await c.core.readNamespace({ name: NS });
        return false;
      } catch (err) {
        if (errorCode(err) === 404) return true;
        throw err;
      }
    },
    120_000,
    { what: `namespace ${NS} gone` },
  );
}

/** Applies the namespace, ServiceAccounts and RBAC of the rendered manifests for real (once). */
function applyIdentities(): void {
  if (identitiesApplied) return;
  const docs = objs.filter((o) => IDENTITY_KINDS.has(o.kind!));
  kubectlOk(['apply', '-f', '-'], docs.map((d) => JSON.stringify(d)).join('\n'));
  identitiesApplied = true;
}

/** Creates a plan (cluster-scoped), removed in `after`. */
async function createPlan(prefix: string, nodeNames: string[]): Promise<MaintenancePlan> {
  const name = uniqueName(prefix);
  const plan = await createPlanObject(c, name, { nodeNames }, { 'drainflow.dev/test': 'deploy' });
  cleanups.push(async () => {
    await c.custom
      .patchClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        name,
        body: [{ op: 'remove', path: '/metadata/finalizers' }],
      })
      .catch(() => undefined);
    await ignoreNotFound(() =>
      c.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }),
    );
    // Events about the plan (recorded in `default`).
    const evs = await c.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${name}`,
    });
    for (const e of evs.items)
      await ignoreNotFound(() =>
        c.core.deleteNamespacedEvent({ namespace: 'default', name: e.metadata!.name! }),
      );
  });
  return plan;
}

async function newNamespace(prefix: string): Promise<string> {
  const ns = await createNamespace(c, prefix);
  cleanups.push(() => deleteNamespace(c, ns));
  return ns;
}

async function newNode(prefix: string): Promise<string> {
  const node = await createNode(c, prefix);
  cleanups.push(() => deleteNode(c, node));
  return node;
}

/** Events about `plan` in `default` with this reason. */
async function planEvents(plan: string, reason: string) {
  const l = await c.core.listNamespacedEvent({
    namespace: 'default',
    fieldSelector: `involvedObject.name=${plan}`,
  });
  return l.items.filter((e) => e.reason === reason);
}

before(async () => {
  c = clients();
  await applyCrds(c);
  objs = render();
  const auditFile = auditLogFile();
  if (auditFile) audit = auditMark(auditFile);
  // A leftover of an interrupted run still terminating would refuse new objects.
  await namespaceGone().catch(() => undefined);
});

after(async () => {
  const errors: unknown[] = [];
  for (const fn of cleanups.reverse()) {
    try {
      await fn();
    } catch (err) {
      errors.push(err);
    }
  }
  // Everything deploy/default creates, but the CRD: cluster-scoped RBAC, Roles in `default`, the namespace.
  for (const o of objs ?? []) {
    if (o.kind === 'CustomResourceDefinition' || o.kind === 'Namespace') continue;
    if (o.metadata?.namespace === NS) continue; // goes with the namespace
    const r = kubectl([
      'delete',
      '--ignore-not-found',
      '--wait=false',
      o.kind!,
      o.metadata!.name!,
      ...(o.metadata?.namespace ? ['-n', o.metadata.namespace] : []),
    ]);
    if (r.code !== 0) errors.push(new Error(r.stderr));
  }
  await ignoreNotFound(() => c.core.deleteNamespace({ name: NS }));
  await namespaceGone().catch((err: unknown) => errors.push(err));
  if (errors.length > 0) throw new AggregateError(errors, 'cleanup failed');
});

// ---------------------------------------------------------------------------------------------------
// 1. Manifests
// ---------------------------------------------------------------------------------------------------

describe('deploy/default renders', () => {
  it('renders the CRD, the namespace, both ServiceAccounts, the RBAC, the config and both Deployments', () => {
    const crd = find(objs, 'CustomResourceDefinition', `${PLURAL}.${GROUP}`);
    const onDisk = parseAllDocuments(
      readFileSync(join(repoRoot, 'deploy', 'crds', `${PLURAL}.${GROUP}.yaml`), 'utf8'),
    )[0]!.toJS() as Obj;
    assert.deepEqual(crd, onDisk, 'the CRD is the generated file, unchanged');
    find(objs, 'Namespace', NS);
    for (const sa of [OPERATOR_SA, WORKER_SA]) find(objs, 'ServiceAccount', sa, NS);
    for (const kind of ['Deployment', 'PodDisruptionBudget'])
      for (const n of [OPERATOR_SA, WORKER_SA]) find(objs, kind, n, NS);
    const cm = objs.find((o) => o.kind === 'ConfigMap' && o.metadata?.name?.startsWith('drainflow-config-'));
    assert.ok(cm, 'the generated ConfigMap drainflow-config-<hash>');
    assert.equal(cm.metadata?.namespace, NS);
    for (const key of [
      'TEMPORAL_ADDRESS',
      'TEMPORAL_NAMESPACE',
      'DRAINFLOW_TASK_QUEUE',
      'TEMPORAL_TLS_CERT',
      'TEMPORAL_TLS_KEY',
      'TEMPORAL_TLS_CA',
    ]) {
      assert.ok(key in (cm.data ?? {}), `ConfigMap has ${key}`);
    }
    // Everything namespaced is in drainflow-system, but the Events Roles (Events of cluster-scoped plans go to `default`).
    for (const o of objs.filter((x) => x.metadata?.namespace && x.metadata.namespace !== NS)) {
      assert.ok(
        ['Role', 'RoleBinding'].includes(o.kind!) &&
          o.metadata!.namespace === 'default' &&
          /-events$/.test(o.metadata!.name!),
        `${o.kind} ${o.metadata!.namespace}/${o.metadata!.name} is expected outside ${NS}`,
      );
    }
  });

  for (const [component, sa, port, flag] of [
    ['operator', OPERATOR_SA, 8080, '--operator'],
    ['worker', WORKER_SA, 8081, '--worker'],
  ] as const) {
    it(`the ${component} Deployment: non-root and locked down, probes on ${port}, resources, config the code accepts`, () => {
      const d = find(objs, 'Deployment', sa, NS) as unknown as V1Deployment;
      const pod = d.spec!.template.spec!;
      assert.equal(pod.serviceAccountName, sa);
      assert.equal(pod.securityContext?.runAsNonRoot, true);
      assert.equal(pod.securityContext?.runAsUser, 65532);
      assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault');
      assert.equal(pod.containers.length, 1);
      const ctr = pod.containers[0]!;
      assert.deepEqual(ctr.args, ['run', flag, '--mode', 'in-cluster']);
      assert.match(ctr.image ?? '', /drainflow/);
      const sc = ctr.securityContext!;
      assert.equal(sc.runAsNonRoot, true);
      assert.equal(sc.readOnlyRootFilesystem, true);
      assert.equal(sc.allowPrivilegeEscalation, false);
      assert.deepEqual(sc.capabilities?.drop, ['ALL']);
      assert.equal(sc.capabilities?.add, undefined);
      assert.equal(sc.seccompProfile?.type, 'RuntimeDefault');
      assert.deepEqual(
        ctr.ports?.map((p) => p.containerPort),
        [port],
      );
      assert.equal(ctr.livenessProbe?.httpGet?.path, '/healthz');
      assert.equal(ctr.readinessProbe?.httpGet?.path, '/readyz');
      assert.equal(ctr.startupProbe?.httpGet?.path, '/healthz');
      for (const p of [ctr.livenessProbe, ctr.readinessProbe, ctr.startupProbe])
        assert.equal(p?.httpGet?.port, 'http');
      assert.ok(
        ctr.resources?.requests?.cpu && ctr.resources.requests.memory && ctr.resources.limits?.memory,
        'requests and a memory limit',
      );
      // The TLS Secret is mounted read-only and optional; /tmp is writable.
      const tls = pod.volumes?.find((v) => v.name === 'temporal-tls');
      assert.equal(tls?.secret?.secretName, 'drainflow-temporal-tls');
      assert.equal(tls?.secret?.optional, true);
      assert.ok(
        ctr.volumeMounts?.some(
          (m) => m.name === 'temporal-tls' && m.readOnly && m.mountPath === '/etc/drainflow/temporal-tls',
        ),
      );
      assert.ok(ctr.volumeMounts?.some((m) => m.mountPath === '/tmp'));

      // The environment the container gets, fed to the code's own config loader.
      const cm = objs.find(
        (o) => o.kind === 'ConfigMap' && o.metadata?.name === ctr.envFrom?.[0]?.configMapRef?.name,
      );
      assert.ok(cm, 'envFrom names the generated ConfigMap');
      const env: NodeJS.ProcessEnv = { ...cm.data };
      for (const e of ctr.env ?? []) {
        if (e.value !== undefined) env[e.name] = e.value;
        else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name')
          env[e.name] = `drainflow-${component}-abc12-xyz`;
        else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[e.name] = NS;
        else if (e.valueFrom?.secretKeyRef) {
          assert.equal(e.name, 'TEMPORAL_API_KEY');
          assert.equal(e.valueFrom.secretKeyRef.optional, true, 'the API key Secret is optional');
        }
      }
      const cfg = loadConfig({ mode: 'in-cluster' }, env);
      assert.equal(cfg.mode, 'in-cluster');
      assert.equal(cfg.leaseNamespace, NS, 'the Lease lives in the pod namespace');
      assert.equal(cfg.identity, `drainflow-${component}-abc12-xyz`);
      assert.equal(component === 'operator' ? cfg.operatorPort : cfg.workerPort, port);
      assert.equal(cfg.taskQueue, 'drainflow');
      assert.equal(cfg.tls, undefined, 'empty TLS settings mean no TLS');
      assert.equal(cfg.apiKey, undefined);
      assert.equal(cfg.temporalUiUrl, undefined);
      // With the TLS Secret configured, the paths point into the mount.
      const withTls = loadConfig(
        { mode: 'in-cluster' },
        {
          ...env,
          TEMPORAL_TLS_CERT: '/etc/drainflow/temporal-tls/tls.crt',
          TEMPORAL_TLS_KEY: '/etc/drainflow/temporal-tls/tls.key',
        },
      );
      assert.equal(withTls.tls?.cert, '/etc/drainflow/temporal-tls/tls.crt');
      assert.equal(withTls.tls?.key, '/etc/drainflow/temporal-tls/tls.key');
      assert.ok(
        !withTls.tls?.ca && !withTls.tls?.serverName,
        'the empty CA and server name settings stay unused',
      );
    });
  }

  it('the RBAC has no wildcards and no non-resource URLs', () => {
    for (const o of objs.filter((x) => x.kind === 'ClusterRole' || x.kind === 'Role')) {
      for (const r of o.rules ?? []) {
        for (const field of [r.apiGroups, r.resources, r.verbs, r.resourceNames]) {
          assert.ok(
            !(field ?? []).some((v) => v.includes('*')),
            `${o.kind} ${o.metadata?.name}: no wildcard (${JSON.stringify(r)})`,
          );
        }
        assert.equal(r.nonResourceURLs, undefined);
      }
    }
    // Which rules the code needs is derived from its recorded calls (section 4).
    assert.ok(grantList(objs, WORKER_SA).length > 0 && grantList(objs, OPERATOR_SA).length > 0);
  });
});

// ---------------------------------------------------------------------------------------------------
// 2. Against the API server
// ---------------------------------------------------------------------------------------------------

describe('deploy/default on the API server', () => {
  it('kubectl apply --dry-run=server -k deploy/default succeeds (client-side and server-side apply), without PodSecurity warnings', () => {
    // The namespace for real (the namespaced objects' dry-run needs it), the CRD is applied in `before`.
    kubectlOk(['apply', '-f', '-'], JSON.stringify(find(objs, 'Namespace', NS)));
    const csa = kubectlOk(['apply', '--dry-run=server', '-k', DEFAULT_DIR]);
    const ssa = kubectlOk([
      'apply',
      '--server-side',
      '--field-manager=drainflow-e2e',
      '--dry-run=server',
      '-k',
      DEFAULT_DIR,
    ]);
    for (const r of [csa, ssa]) {
      assert.match(
        r.stdout,
        /deployment\.apps\/drainflow-operator (created|configured|unchanged|serverside-applied) \(server dry run\)/,
      );
      assert.match(
        r.stdout,
        /deployment\.apps\/drainflow-worker (created|configured|unchanged|serverside-applied) \(server dry run\)/,
      );
      assert.doesNotMatch(r.stderr, /PodSecurity/, 'the restricted Pod Security Standard holds');
    }
    assert.equal(
      csa.stdout.split('\n').filter((l) => l.includes('(server dry run)')).length,
      objs.length,
      'every object validated',
    );
  });

  it('kubectl auth can-i: calls outside the grant are denied (the allowed ones are derived in section 4)', async () => {
    applyIdentities();
    const ns = 'kube-system'; // any namespace other than drainflow-system and default
    type Check = [sa: string, allowed: boolean, args: string[]];
    const checks: Check[] = [];
    const deny = (sa: string, ...args: string[]) => checks.push([sa, false, args]);
    const MP = `${PLURAL}.${GROUP}`;
    const LEASES = 'leases.coordination.k8s.io';
    const PDBS = 'poddisruptionbudgets.policy';

    // worker
    for (const v of ['delete', 'update', 'create', 'deletecollection']) deny(WORKER_SA, v, 'nodes');
    for (const v of ['delete', 'create', 'update', 'patch', 'deletecollection'])
      deny(WORKER_SA, v, 'pods', '-n', ns);
    deny(WORKER_SA, 'create', 'pods', '--subresource=exec', '-n', ns);
    deny(WORKER_SA, 'delete', PDBS, '-n', ns);
    for (const v of ['list', 'watch', 'create', 'update', 'patch', 'delete']) deny(WORKER_SA, v, MP);
    deny(WORKER_SA, 'patch', MP, '--subresource=status');
    deny(WORKER_SA, 'create', 'events', '-n', ns);
    deny(WORKER_SA, 'delete', 'events', '-n', 'default');
    deny(WORKER_SA, 'get', LEASES, '-n', NS);
    deny(WORKER_SA, 'list', 'secrets', '--all-namespaces');
    // Namespaces: list only (spec.podOrder namespaceSelector), no get, watch or write.
    checks.push([WORKER_SA, true, ['list', 'namespaces']]);
    for (const v of ['get', 'watch', 'create', 'update', 'patch', 'delete']) deny(WORKER_SA, v, 'namespaces');
    deny(WORKER_SA, 'get', 'secrets', '-n', NS);
    deny(WORKER_SA, 'get', 'configmaps', '-n', NS);
    deny(WORKER_SA, '*', '*');
    deny(WORKER_SA, '*', 'nodes');
    deny(WORKER_SA, 'create', 'clusterrolebindings');
    // Job hooks: create and delete Jobs in drainflow-system only; no list, watch or update. Get
    // everywhere: preflight reads a pod's controller (a Job) for its pod template.
    for (const v of ['create', 'get', 'delete']) checks.push([WORKER_SA, true, [v, 'jobs.batch', '-n', NS]]);
    for (const v of ['create', 'delete']) deny(WORKER_SA, v, 'jobs.batch', '-n', ns);
    for (const v of ['list', 'watch', 'update', 'patch']) deny(WORKER_SA, v, 'jobs.batch', '-n', NS);
    deny(WORKER_SA, 'create', 'cronjobs.batch', '-n', NS);
    // Preflight's controller reads: get only, no list, watch or write.
    for (const r of ['replicasets.apps', 'statefulsets.apps', 'jobs.batch', 'replicationcontrollers']) {
      checks.push([WORKER_SA, true, ['get', r, '-n', ns]]);
      for (const v of ['list', 'watch', 'update', 'patch', 'delete']) deny(WORKER_SA, v, r, '-n', ns);
    }
    // A Never block of a Deployment's pods: its strategy decides the remedy (get only; patch is opt-in).
    checks.push([WORKER_SA, true, ['get', 'deployments.apps', '-n', ns]]);
    for (const v of ['list', 'watch', 'update', 'patch', 'delete'])
      deny(WORKER_SA, v, 'deployments.apps', '-n', ns);

    // operator: Leases only in its own namespace, and only get/create/update.
    for (const v of ['delete', 'list', 'watch', 'patch', 'deletecollection'])
      deny(OPERATOR_SA, v, LEASES, '-n', NS);
    for (const v of ['get', 'create', 'update']) deny(OPERATOR_SA, v, LEASES, '-n', 'kube-system');
    deny(OPERATOR_SA, 'get', `${LEASES}/kube-controller-manager`, '-n', 'kube-system');
    deny(OPERATOR_SA, 'get', LEASES, '-n', 'default');
    for (const v of ['create', 'delete', 'update', 'deletecollection']) deny(OPERATOR_SA, v, MP);
    deny(OPERATOR_SA, 'update', MP, '--subresource=status');
    for (const v of ['delete', 'update', 'create', 'watch', 'deletecollection'])
      deny(OPERATOR_SA, v, 'nodes');
    deny(OPERATOR_SA, '*', 'nodes');
    deny(OPERATOR_SA, 'list', 'pods', '--all-namespaces');
    deny(OPERATOR_SA, 'create', 'pods', '--subresource=eviction', '-n', ns);
    deny(OPERATOR_SA, 'delete', 'pods', '-n', ns);
    deny(OPERATOR_SA, 'create', 'events', '-n', ns);
    deny(OPERATOR_SA, 'list', 'secrets', '--all-namespaces');
    deny(OPERATOR_SA, 'get', 'secrets', '-n', NS);
    deny(OPERATOR_SA, '*', '*');
    deny(OPERATOR_SA, '*', MP);

    // Run the checks 8 at a time; `kubectl auth can-i` prints yes/no (exit 0/1).
    const results: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < checks.length) {
          const [sa, allowed, args] = checks[next++]!;
          let answer: string;
          try {
            answer = (
              await execFileAsync(kubectlPath(), ['auth', 'can-i', ...args, `--as=${saUser(sa)}`], {
                encoding: 'utf8',
              })
            ).stdout.trim();
          } catch (err) {
            answer = ((err as { stdout?: string }).stdout ?? '').trim() || String(err);
          }
          const ok = answer === (allowed ? 'yes' : 'no');
          if (!ok)
            results.push(
              `${sa}: can-i ${args.join(' ')} answered ${answer}, expected ${allowed ? 'yes' : 'no'}`,
            );
        }
      }),
    );
    assert.deepEqual(results, [], `${results.length} of ${checks.length} RBAC checks failed`);
  });

  it('the worker activities succeed with the worker ServiceAccount’s own credentials', async () => {
    applyIdentities();
    const kc = await serviceAccountKubeConfig(c, NS, WORKER_SA);
    const acts = createActivities({ kubeConfig: kc, logger });
    const ns = await newNamespace('df-deploy');
    const node = await newNode('df-deploy-node');
    // A plan naming a node that does not exist: an operator of another test run would find nothing to drain.
    const plan = await createPlan('df-deploy-worker', [`df-deploy-absent-${Date.now().toString(36)}`]);
    const ref = { name: plan.metadata.name, uid: plan.metadata.uid };

    // A Deployment pod on the private node, behind a PDB that allows one disruption.
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: makeDeployment(ns, 'web', 1, { hostname: node }),
    });
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'web', { app: 'web' }, { maxUnavailable: 1 }),
    });
    const [pod] = await waitPodsReady(c, ns, { app: 'web' }, 1);
    await waitPdb(c, ns, 'web', (p) => (p.status?.disruptionsAllowed ?? 0) >= 1);

    // resolveNodes (list nodes)
    const resolved = await acts.resolveNodes({ nodeNames: [node] });
    assert.deepEqual(resolved.nodes, [node]);
    // cordonNode (get + patch node)
    assert.deepEqual(await acts.cordonNode({ plan: ref, node }), {
      outcome: 'Cordoned',
      wasUnschedulable: false,
      nodeUid: (await c.core.readNode({ name: node })).metadata?.uid,
    });
    const cordoned = await c.core.readNode({ name: node });
    assert.equal(cordoned.spec?.unschedulable, true);
    assert.equal(cordoned.metadata?.annotations?.[NODE_CLAIM_ANNOTATION], ref.name);
    // preflightNode (node get, pods and PDBs list, the pod's ReplicaSet get, a dry-run eviction)
    const preflight = await acts.preflightNode({
      node,
      selection: { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false },
    });
    assert.equal(preflight.report.dryRunAccepted, 1, JSON.stringify(preflight.report));
    assert.equal(preflight.report.ownersUnread, undefined, 'the ReplicaSet was read');
    // observeNode (informers: list + watch of all nodes, all PDBs and the node's pods)
    try {
      const observed = await acts.observeNode({
        node,
        selection: { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false },
        maxWaitSeconds: 5,
      });
      assert.equal(observed.changed, true);
      assert.deepEqual(observed.changed && observed.node, {
        exists: true,
        unschedulable: true,
        uid: (await c.core.readNode({ name: node })).metadata?.uid,
      });
      assert.deepEqual(observed.changed && observed.pods.map((p) => [p.key, p.action, p.pdbs]), [
        [`${ns}/${pod!.metadata!.name}`, 'Evict', [`${ns}/web`]],
      ]);
      assert.deepEqual(observed.changed && withoutVersions(observed.pdbs), [
        { key: `${ns}/web`, disruptionsAllowed: 1 },
      ]);
      // With a spec.podOrder namespaceSelector it also lists the namespaces (namespaces list).
      const ordered = await acts.observeNode({
        node,
        selection: { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false },
        maxWaitSeconds: 5,
        podOrder: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } }, order: 7 }],
      });
      assert.deepEqual(ordered.changed && ordered.pods.map((p) => [p.key, p.order]), [
        [`${ns}/${pod!.metadata!.name}`, 7],
      ]);
    } finally {
      await (acts.observeNode as ObserveNode).cache.close();
    }
    // evictPod (pods/eviction create; with a stale UID the 409 makes it read the pod: pods get).
    // The stale-UID call goes to a pod no PDB covers: the API server counts an eviction against
    // the PDB before it checks the UID precondition, so on `web` it would spend web's disruption.
    const lone = await c.core.createNamespacedPod({
      namespace: ns,
      body: makePod(ns, 'lone', { labels: { app: 'lone' }, nodeName: node }),
    });
    assert.deepEqual(await acts.evictPod({ namespace: ns, name: lone.metadata!.name!, uid: 'stale-uid' }), {
      outcome: 'Gone',
    });
    const target = { namespace: ns, name: pod!.metadata!.name!, uid: pod!.metadata!.uid! };
    assert.deepEqual(await acts.evictPod(target), { outcome: 'Evicted' });
    assert.deepEqual(await waitPodGone(c, { ...target, timeoutSeconds: 30 }), { gone: true });
    // releaseNode (get + patch node; patch nodes/status: the plan's lifecycle conditions, written
    // here by the administrator in the operator's place, go with the claim)
    await writePlanConditions(c.kc, ref, node);
    assert.deepEqual(await acts.releaseNode({ plan: ref, node, uncordon: true }), { uncordoned: true });
    assert.deepEqual(await planConditionTypes(node), [], 'the hand-back removes the plan’s conditions');
    assert.notEqual((await c.core.readNode({ name: node })).spec?.unschedulable, true);
    // publishStatus (get plan, PUT status)
    const message = `written by the worker ServiceAccount ${Date.now()}`;
    assert.deepEqual(
      await acts.publishStatus({ plan: ref, status: { phase: 'Pending', reason: 'DeployTest', message } }),
      { written: true, exists: true },
    );
    // recordEvent (get, create, then get + patch on the repeat); it swallows errors, so read the Event back.
    const reason = 'DeployTestWorker';
    await acts.recordEvent({ plan: ref, type: 'Normal', reason, message: 'worker event' });
    await acts.recordEvent({ plan: ref, type: 'Normal', reason, message: 'worker event' });
    const evs = await planEvents(ref.name, reason);
    assert.equal(evs.length, 1, 'one aggregated Event');
    assert.equal(evs[0]!.count, 2, 'the repeat patched the count');

    // createHookJob (POST job in drainflow-system), waitHookJob (GET job; kwok completes its pod).
    const jobName = hookJobName(ref.uid, node, 'afterDrain');
    const hookJob = {
      namespace: NS,
      timeoutSeconds: 60,
      // drainflow-system enforces the restricted Pod Security Standard.
      template: {
        spec: {
          template: {
            spec: {
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 1000,
                seccompProfile: { type: 'RuntimeDefault' },
              },
              containers: [
                {
                  name: 'check',
                  image: 'busybox',
                  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
                },
              ],
            },
          },
        },
      },
    };
    assert.deepEqual(
      await acts.createHookJob({ plan: ref, node, hook: 'afterDrain', name: jobName, job: hookJob }),
      {
        created: true,
      },
    );
    assert.deepEqual(
      await acts.createHookJob({ plan: ref, node, hook: 'afterDrain', name: jobName, job: hookJob }),
      {
        created: false,
      },
    );
    assert.deepEqual(await acts.waitHookJob({ namespace: NS, name: jobName, timeoutSeconds: 60 }), {
      succeeded: true,
      message: 'completed',
    });
    // stopHookJob (DELETE with foreground propagation, then GET until 404; a plan aborted mid-hook).
    assert.deepEqual(await acts.stopHookJob({ namespace: NS, name: jobName, waitSeconds: 60 }), {
      gone: true,
    });

    // Outside the grant: a plain pod delete is refused.
    const bare = await c.core.createNamespacedPod({
      namespace: ns,
      body: makePod(ns, 'bare', { nodeName: node }),
    });
    const saCore = clients(kc).core;
    await assert.rejects(
      saCore.deleteNamespacedPod({ namespace: ns, name: bare.metadata!.name! }),
      (err: unknown) => errorCode(err) === 403,
    );
  });

  it('the operator’s calls succeed with the operator ServiceAccount’s own credentials', async () => {
    applyIdentities();
    const kc = await serviceAccountKubeConfig(c, NS, OPERATOR_SA);
    const plan = await createPlan('df-deploy-operator', [`df-deploy-absent-${Date.now().toString(36)}`]);
    const { name, uid } = plan.metadata;
    const api = new PlanApi(kc);

    // The informer: list, then watch from the list's resourceVersion; sees an update of the plan.
    const seen: string[] = [];
    const informer = makeInformer<KubernetesObject>(kc, PLANS_PATH, () => api.list());
    const errors: unknown[] = [];
    informer.on('error', (err) => errors.push(err));
    informer.on('add', (o) => o.metadata?.name === name && seen.push('add'));
    informer.on('update', (o) => o.metadata?.name === name && seen.push('update'));
    await informer.start();
    try {
      await waitFor(() => seen.includes('add'), 15_000, { what: 'informer lists the plan' });
      // Finalizer: merge patch of the main resource.
      assert.equal(await api.ensureFinalizer(name, uid), true);
      assert.ok((await api.get(name))?.metadata.finalizers?.includes(FINALIZER));
      await waitFor(() => seen.includes('update'), 15_000, { what: 'informer watches the finalizer update' });
      assert.deepEqual(errors, []);
    } finally {
      await informer.stop();
    }
    // Status: merge patch of the status subresource.
    await api.patchStatus(name, {
      phase: 'Failed',
      reason: 'InvalidSpec',
      message: 'written by the operator ServiceAccount',
    });
    assert.equal((await api.get(name))?.status?.reason, 'InvalidSpec');
    await api.removeFinalizer(name, uid);
    assert.ok(!(await api.get(name))?.metadata.finalizers?.includes(FINALIZER));

    // Events: the operator records them through the activities' recordEvent.
    const reason = 'DeployTestOperator';
    const events = createActivities({ kubeConfig: kc, logger });
    await events.recordEvent({ plan: { name, uid }, type: 'Warning', reason, message: 'operator event' });
    await events.recordEvent({ plan: { name, uid }, type: 'Warning', reason, message: 'operator event' });
    const evs = await planEvents(name, reason);
    assert.equal(evs.length, 1);
    assert.equal(evs[0]!.count, 2);

    // Leader election: create the Lease, renew it, release it on stop.
    const leases = c.kc.makeApiClient(CoordinationV1Api);
    const identity = uniqueName('deploy-test-operator');
    const elector = new LeaderElector({
      kubeConfig: kc,
      namespace: NS,
      name: LEASE_NAME,
      identity,
      logger,
      retryPeriodMs: 200,
      renewPeriodMs: 300,
    });
    const stop = new AbortController();
    let led = false;
    const loop = elector.run(
      { onStartedLeading: async () => void (led = true), onStoppedLeading: async () => undefined },
      stop.signal,
    );
    try {
      await waitFor(() => elector.isLeader(), 15_000, {
        what: 'the operator ServiceAccount takes the Lease',
      });
      assert.ok(led);
      const lease = await leases.readNamespacedLease({ name: LEASE_NAME, namespace: NS });
      assert.equal(lease.spec?.holderIdentity, identity);
      const renewedFrom = String(lease.spec?.renewTime);
      await waitFor(
        async () => {
          const l = await leases.readNamespacedLease({ name: LEASE_NAME, namespace: NS });
          return String(l.spec?.renewTime) !== renewedFrom;
        },
        10_000,
        { what: 'the Lease renewed (update)' },
      );
      assert.ok(elector.healthy());
    } finally {
      stop.abort();
      await loop;
    }
    const released = await leases.readNamespacedLease({ name: LEASE_NAME, namespace: NS });
    assert.equal(released.spec?.holderIdentity, undefined, 'released on stop');

    // The hand-back without a workflow: list the nodes, find the plan's claim, release the node.
    const node = await newNode('df-deploy-op-node');
    const admin = createActivities({ kubeConfig: c.kc, logger });
    assert.deepEqual(await admin.cordonNode({ plan: { name, uid }, node }), {
      outcome: 'Cordoned',
      wasUnschedulable: false,
      nodeUid: (await c.core.readNode({ name: node })).metadata?.uid,
    });
    const claimed = await listClaimedNodes(kc.makeApiClient(CoreV1Api), { name, uid });
    assert.deepEqual(
      claimed.map((n) => n.metadata?.name),
      [node],
    );
    // The node lifecycle conditions of a held node (patch nodes/status).
    await writePlanConditions(kc, { name, uid }, node);
    assert.deepEqual(await events.releaseNode({ plan: { name, uid }, node, uncordon: true }), {
      uncordoned: true,
    });
    const afterRelease = (await c.core.readNode({ name: node })).metadata?.annotations ?? {};
    assert.equal(afterRelease[NODE_CLAIM_ANNOTATION], undefined, 'claim removed by the operator');
    assert.deepEqual(await planConditionTypes(node), [], 'conditions removed by the operator');

    // Outside the grant: pods are the worker's business.
    await assert.rejects(
      clients(kc).core.listPodForAllNamespaces(),
      (err: unknown) => errorCode(err) === 403,
    );
  });

  it(
    'two operator processes with a plan selector elect their leader on drainflow-operator-<hash> and reconcile a plan, as the operator ServiceAccount',
    { timeout: 240_000 },
    async () => {
      const address = process.env.TEMPORAL_ADDRESS;
      assert.ok(address, 'TEMPORAL_ADDRESS is set (eval "$(npm run --silent stack -- env)")');
      applyIdentities();
      const kc = await serviceAccountKubeConfig(c, NS, OPERATOR_SA);
      const dir = mkdtempSync(join(tmpdir(), 'drainflow-deploy-op-'));
      cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
      const kubeconfigFile = join(dir, 'operator.kubeconfig');
      writeFileSync(kubeconfigFile, kc.exportConfig(), { mode: 0o600 });
      const run = uniqueName('sel');
      const selector = `drainflow.dev/e2e-deploy=${run}`;
      const lease = leaseName(selector);
      assert.match(lease, /^drainflow-operator-[0-9a-f]{10}$/);
      const taskQueue = uniqueName('df-deploy-sel'); // no worker polls it: the workflow only starts
      const leases = c.kc.makeApiClient(CoordinationV1Api);
      const holder = async () => {
        try {
          return (await leases.readNamespacedLease({ name: lease, namespace: NS })).spec?.holderIdentity;
        } catch (err) {
          if (errorCode(err) === 404) return undefined;
          throw err;
        }
      };
      const procs: DrainflowProcess[] = [];
      cleanups.push(async () => Promise.all(procs.map((p) => p.stop('SIGKILL', 5000))));
      const start = async (identity: string) => {
        const port = await freePort();
        const p = await startDrainflow({
          args: [
            'run',
            '--operator',
            '--operator-port',
            String(port),
            '--plan-selector',
            selector,
            '--task-queue',
            taskQueue,
          ],
          // Only what a pod gets: the ServiceAccount's kubeconfig, Temporal, and the downward API.
          env: {
            KUBECONFIG: kubeconfigFile,
            TEMPORAL_ADDRESS: address,
            TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE ?? 'default',
            POD_NAME: identity,
            POD_NAMESPACE: NS,
            DRAINFLOW_LOG_LEVEL: 'info',
          },
        });
        procs.push(p);
        return p;
      };
      const idA = `${run}-a`;
      const idB = `${run}-b`;
      const a = await start(idA);
      await waitFor(async () => (await holder()) === idA, 30_000, { what: `${idA} holds Lease ${lease}` });
      const b = await start(idB); // ready as a healthy standby
      assert.equal(await holder(), idA, 'the standby does not take a held Lease');

      // The leader reconciles a selected plan: finalizer, then the workflow is started.
      const name = uniqueName('df-deploy-sel');
      await createPlanObject(
        c,
        name,
        { nodeNames: [`df-deploy-absent-${Date.now().toString(36)}`] },
        { 'drainflow.dev/test': 'deploy', 'drainflow.dev/e2e-deploy': run },
      );
      const getPlan = async () => {
        try {
          return (await c.custom.getClusterCustomObject({
            group: GROUP,
            version: VERSION,
            plural: PLURAL,
            name,
          })) as MaintenancePlan;
        } catch (err) {
          if (errorCode(err) === 404) return undefined;
          throw err;
        }
      };
      cleanups.push(async () => {
        if (!(await getPlan())) return;
        await c.custom
          .patchClusterCustomObject({
            group: GROUP,
            version: VERSION,
            plural: PLURAL,
            name,
            body: [{ op: 'remove', path: '/metadata/finalizers' }],
          })
          .catch(() => undefined);
        await ignoreNotFound(() =>
          c.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }),
        );
      });
      const plan = await waitFor(
        async () => {
          const p = await getPlan();
          return p?.metadata.finalizers?.includes(FINALIZER) ? p : undefined;
        },
        30_000,
        { what: 'the leader adds the finalizer' },
      ).catch((err: unknown) => assert.fail(`${String(err)}\n${a.logs().slice(-3000)}`));
      const connection = await Connection.connect({ address });
      try {
        const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
        const handle = client.workflow.getHandle(planWorkflowId({ name, uid: plan.metadata.uid }));
        cleanups.push(() => handle.terminate('deploy test cleanup').catch(() => undefined));
        const desc = await waitFor(() => handle.describe().catch(() => undefined), 30_000, {
          what: 'the leader starts the plan workflow',
        });
        assert.equal(desc.taskQueue, taskQueue);

        // The leader stops (SIGTERM releases the Lease): the standby takes over within seconds.
        const t0 = Date.now();
        assert.equal(await a.stop(), 0, a.logs().slice(-2000));
        await waitFor(async () => (await holder()) === idB, 20_000, { what: `${idB} takes Lease ${lease}` });
        const takeoverMs = Date.now() - t0;
        assert.ok(takeoverMs < 15_000, `takeover in ${takeoverMs} ms`);

        // The new leader handles the deletion: the workflow is gone (terminated), so it hands back
        // what the plan claims (a node list) and removes the finalizer.
        await handle.terminate('deploy test: deletion without a running workflow');
        await c.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name });
        await waitFor(async () => (await getPlan()) === undefined, 30_000, {
          what: 'the new leader removes the finalizer of the deleted plan',
        }).catch((err: unknown) => assert.fail(`${String(err)}\n${b.logs().slice(-3000)}`));
      } finally {
        await connection.close();
      }
      assert.equal(await b.stop(), 0, b.logs().slice(-2000));
      assert.equal(await holder(), undefined, 'released on stop');
      for (const p of [a, b]) assert.doesNotMatch(p.logs(), /forbidden/i, 'no call was refused');
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// 3. The image's runtime layout (no Docker engine here: the compiled dist/ run by plain node)
// ---------------------------------------------------------------------------------------------------

async function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

describe('the image runtime layout (compiled dist/)', () => {
  const outDir = join(repoRoot, 'dist', `.e2e-deploy-${process.pid}`);
  const tmp = mkdtempSync(join(tmpdir(), 'drainflow-deploy-'));
  let proc: ChildProcess | undefined;
  let output = '';

  after(async () => {
    if (proc && proc.exitCode === null) {
      proc.kill('SIGKILL');
      await new Promise((r) => proc!.once('exit', r));
    }
    rmSync(outDir, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  });

  it(
    'npm run build’s steps compile and bundle the client; dist/cli/main.js runs the worker as the worker ServiceAccount, which drains a node',
    { timeout: 300_000 },
    async () => {
      const address = process.env.TEMPORAL_ADDRESS;
      assert.ok(address, 'TEMPORAL_ADDRESS is set (eval "$(npm run --silent stack -- env)")');
      // 1. Compile as the image's build stage does (npm run build: tsc -p tsconfig.build.json, then
      //    the client-node bundle), into a private outDir.
      const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
      try {
        execFileSync(
          process.execPath,
          [tsc, '-p', join(repoRoot, 'tsconfig.build.json'), '--outDir', outDir],
          { encoding: 'utf8', stdio: 'pipe' },
        );
      } catch (err) {
        assert.fail(
          `tsc -p tsconfig.build.json failed:\n${(err as { stdout?: string }).stdout ?? String(err)}`,
        );
      }
      // ... and its second step (scripts/build/client-node.ts): dist/k8s/client.js becomes a
      // tree-shaken bundle of the client library, which the worker below runs on.
      await bundleClient(outDir);
      const bundled = readFileSync(join(outDir, 'k8s', 'client.js'), 'utf8');
      assert.doesNotMatch(bundled, /from\s*["']@kubernetes\/client-node["']/, 'the library is inlined');
      assert.ok(bundled.length < 4_000_000, `bundle of ${bundled.length} characters, under 4 MB`);
      const worker = (await import(pathToFileURL(join(outDir, 'worker', 'worker.js')).href)) as {
        WORKFLOWS_PATH: string;
      };
      assert.equal(
        worker.WORKFLOWS_PATH,
        join(outDir, 'workflows', 'index.js'),
        'from dist the worker bundles the compiled workflows',
      );
      const help = execFileSync(process.execPath, [join(outDir, 'cli', 'main.js'), 'run', '--help'], {
        encoding: 'utf8',
      });
      assert.match(help, /--worker/);

      // 2. Run the worker as the image does (`node dist/cli/main.js run --worker`), with the worker
      //    ServiceAccount's token and the rendered ConfigMap (Temporal address from the stack; --mode
      //    local because there is no pod filesystem to read an in-cluster token from).
      applyIdentities();
      const kc: KubeConfig = await serviceAccountKubeConfig(c, NS, WORKER_SA);
      const kubeconfigFile = join(tmp, 'worker.kubeconfig');
      writeFileSync(kubeconfigFile, kc.exportConfig(), { mode: 0o600 });
      const cm = objs.find(
        (o) => o.kind === 'ConfigMap' && o.metadata?.name?.startsWith('drainflow-config-'),
      )!;
      const port = await freePort();
      const taskQueue = uniqueName('df-deploy');
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...cm.data,
        TEMPORAL_ADDRESS: address,
        TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE ?? 'default',
        DRAINFLOW_TASK_QUEUE: taskQueue,
        DRAINFLOW_WORKER_PORT: String(port),
        KUBECONFIG: kubeconfigFile,
        POD_NAME: 'drainflow-worker-e2e',
        POD_NAMESPACE: NS,
      };
      proc = spawn(process.execPath, [join(outDir, 'cli', 'main.js'), 'run', '--worker', '--mode', 'local'], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
      proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      await waitFor(
        async () => {
          if (proc!.exitCode !== null) throw new Error(`worker exited with ${proc!.exitCode}:\n${output}`);
          return (await httpGet(port, '/readyz')).status === 200;
        },
        120_000,
        { what: 'the compiled worker is ready', intervalMs: 500 },
      ).catch((err: unknown) => assert.fail(`${String(err)}\n${output}`));
      assert.equal((await httpGet(port, '/healthz')).status, 200);
      assert.match((await httpGet(port, '/metrics')).body, /drainflow_evictions_total/);

      // 3. Drain a private node through it: a plan workflow on the test's own task queue.
      const ns = await newNamespace('df-deploy-img');
      const node = await newNode('df-deploy-img-node');
      await c.apps.createNamespacedDeployment({
        namespace: ns,
        body: makeDeployment(ns, 'web', 1, { hostname: node }),
      });
      await waitPodsReady(c, ns, { app: 'web' }, 1);
      // The plan object names an absent node, so that an operator of another test run finds nothing to do; the
      // workflow input names the private node.
      const plan = await createPlan('df-deploy-img', [`df-deploy-absent-${Date.now().toString(36)}`]);
      const input: DrainPlanInput = {
        plan: { name: plan.metadata.name, uid: plan.metadata.uid, generation: plan.metadata.generation ?? 1 },
        spec: parseSpec({ nodeNames: [node], drainTimeoutSeconds: 120 }),
      };
      const connection = await Connection.connect({ address });
      try {
        const client = new Client({ connection, namespace: env.TEMPORAL_NAMESPACE });
        const workflowId = uniqueName('df-deploy-img-wf');
        const handle = await client.workflow.start('drainPlanWorkflow', {
          taskQueue,
          workflowId,
          args: [input],
        });
        cleanups.push(() => handle.terminate('deploy test cleanup').catch(() => undefined));
        const drained = await waitFor(
          async () => {
            const p = (await c.custom.getClusterCustomObject({
              group: GROUP,
              version: VERSION,
              plural: PLURAL,
              name: plan.metadata.name,
            })) as MaintenancePlan;
            return p.status?.workflow?.workflowId === workflowId &&
              ['Drained', 'Blocked', 'Failed'].includes(p.status.phase ?? '')
              ? p
              : undefined;
          },
          120_000,
          { what: 'the plan drained by the compiled worker', intervalMs: 500 },
        ).catch((err: unknown) => assert.fail(`${String(err)}\n${output.slice(-4000)}`));
        assert.equal(
          drained.status?.phase,
          'Drained',
          `${drained.status?.reason}: ${drained.status?.message}`,
        );
        assert.equal(drained.status?.evictionProgress?.evicted, 1);
        assert.equal(
          (await c.core.readNode({ name: node })).spec?.unschedulable,
          true,
          'cordoned by the plan',
        );
        await handle.signal(abortSignal);
        const res = (await handle.result()) as DrainPlanResult;
        assert.equal(res.phase, 'Aborted');
        assert.notEqual(
          (await c.core.readNode({ name: node })).spec?.unschedulable,
          true,
          'uncordoned on abort',
        );
      } finally {
        await connection.close();
      }
      assert.match(
        await httpGet(port, '/metrics').then((r) => r.body),
        /drainflow_evictions_total\{outcome="Evicted"\} 1/,
      );
      assert.doesNotMatch(output, /forbidden/i, 'no call of the worker was refused');

      // 4. SIGTERM: graceful shutdown, exit 0.
      const exited = new Promise<number | null>((resolve) => proc!.once('exit', (code) => resolve(code)));
      proc.kill('SIGTERM');
      assert.equal(await exited, 0, output.slice(-2000));
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// 4. The RBAC, derived from the calls the code made above
// ---------------------------------------------------------------------------------------------------

/**
 * Rules granted although this file's run makes no such call, each with the reason. Everything else
 * granted must be used by a recorded call.
 */
const NOT_EXERCISED: Record<string, Record<string, string>> = {
  [OPERATOR_SA]: {
    'update maintenance.drainflow.dev/maintenanceplans/finalizers cluster':
      'never called: the OwnerReferencesPermissionEnforcement admission plugin checks it (docs/operations/install.md, "What the pods are allowed to do")',
  },
  [WORKER_SA]: {
    'get apps/statefulsets cluster':
      "preflight reads the controller of each pod to evict; the run has only a ReplicaSet's pods (test/e2e/preflight.test.ts reads the other kinds)",
    'get core/replicationcontrollers cluster': "likewise (a ReplicationController's pods)",
    'get apps/deployments cluster':
      "the diagnosis reads a Deployment only for a Never block of its pods; this run's PDB is maxUnavailable 1 (test/e2e/remedy.test.ts reads one)",
  },
};

/** The calls this file makes on purpose outside the grant (expected 403), as `verb group/resource`. */
const REFUSED_ON_PURPOSE: Record<string, string[]> = {
  [OPERATOR_SA]: ['list core/pods'],
  [WORKER_SA]: ['delete core/pods'],
};

/** Writes `plan`'s node lifecycle conditions of a Draining node onto `node` with `kc`'s credentials, as the operator does. */
async function writePlanConditions(
  kc: KubeConfig,
  plan: { name: string; uid: string },
  node: string,
): Promise<void> {
  const port = createKubernetesPort(kc, logger);
  const wanted = wantedNodeConditions(plan.name, PlanPhase.Running, { phase: NodePhase.Draining });
  assert.equal(await syncNodeConditions(port, node, plan, wanted), 'written');
  assert.deepEqual(await planConditionTypes(node), [
    NodeConditionType.MaintenancePlanned,
    NodeConditionType.DrainInProgress,
    NodeConditionType.Drained,
  ]);
}

/** The node lifecycle condition types `node` carries, in that order. */
async function planConditionTypes(node: string): Promise<string[]> {
  const lifecycle: readonly string[] = Object.values(NodeConditionType);
  const conditions = (await c.core.readNode({ name: node })).status?.conditions ?? [];
  return lifecycle.filter((t) => conditions.some((x) => x.type === t));
}

describe('the RBAC is derived from the recorded calls of the code', () => {
  for (const sa of [WORKER_SA, OPERATOR_SA]) {
    it(`${sa}: every request of the run was allowed by a rule, and every rule was used`, async () => {
      assert.ok(
        audit,
        'DRAINFLOW_AUDIT_LOG is set (eval "$(npm run --silent stack -- env)") and the stack has the audit log',
      );
      const calls = (await auditedCalls(audit, [saUser(sa)])).filter((x) => x.user === saUser(sa));
      assert.ok(
        calls.length > 0,
        `the audit log holds requests of ${saUser(sa)}; none found: the kube-apiserver runs with an older ` +
          'audit policy (scripts/stack/audit-policy.yaml): restart the stack (down, then up)',
      );
      const granted = grantList(objs, sa);
      const refused = calls.filter((x) => x.code === 403);
      assert.deepEqual(
        [...new Set(refused.map((x) => `${x.verb} ${x.apiGroup || 'core'}/${x.resource}`))].sort(),
        REFUSED_ON_PURPOSE[sa],
        `refused calls: ${refused.map(callKey).join(', ')}`,
      );
      const used = new Set<string>();
      const uncovered = new Set<string>();
      for (const call of calls.filter((x) => x.code !== 403)) {
        const g = granted.filter((x) => covers(x, call));
        if (g.length === 0) uncovered.add(callKey(call));
        for (const x of g) used.add(x.key);
      }
      assert.deepEqual([...uncovered], [], 'every allowed call is covered by a rule of deploy/default');
      const exceptions = NOT_EXERCISED[sa]!;
      assert.deepEqual(
        granted.filter((x) => !used.has(x.key) && !(x.key in exceptions)).map((x) => x.key),
        [],
        `every rule is used by a call of the code (calls seen: ${[...new Set(calls.map(callKey))].sort().join('; ')})`,
      );
      for (const key of Object.keys(exceptions)) {
        assert.ok(
          granted.some((x) => x.key === key),
          `the exception "${key}" is still granted`,
        );
        assert.ok(!used.has(key), `the exception "${key}" is not called (drop it from NOT_EXERCISED)`);
      }
    });
  }
});
