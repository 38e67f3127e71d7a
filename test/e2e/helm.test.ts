// test-lane: parallel
/**
 * The Helm chart deploy/helm/drainflow, with the pinned helm (scripts/stack/build.sh, HELM_VERSION):
 *
 * 1. `helm lint --strict` passes, with default and with non-default values.
 * 2. `helm template` with default values renders the objects of `kubectl kustomize deploy/default`:
 *    the same kinds and names (kustomize's ConfigMap carries a content hash in its name, the chart's
 *    a checksum annotation), and for each object the same RBAC rules, bindings, ConfigMap data and
 *    Deployment / PodDisruptionBudget / Service specs; `--include-crds` gives the generated CRD.
 * 3. Non-default values (image, Temporal address / namespace / TLS / API key Secret, resources,
 *    replicas, plan selector, ports, namespace creation) land where they belong, and the operator's
 *    rendered environment is accepted by the code's config loader; bad values fail with a message
 *    naming the value.
 * 4. Both renders pass `kubectl apply --dry-run=server` (client-side and server-side apply) on the
 *    local stack without Pod Security warnings.
 * 5. Pod delete (onDeadline DeletePods) is opt-in: absent by default, `rbac.deletePods=true` renders
 *    the objects of the Kustomize component deploy/components/delete-pods, and an overlay of
 *    deploy/default with that component builds.
 *
 * Needs KUBECONFIG (the stack: `npm run stack -- up && eval "$(npm run --silent stack -- env)"`).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { KubernetesObject, V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { GROUP, PLURAL } from '../../src/api/plan.js';
import { leaseName } from '../../src/operator/index.js';
import { loadConfig } from '../../src/shared/settings.js';
import { helmPath, kubectlPath, stackVersions } from '../helpers/binaries.js';
import { applyCrds, clients, uniqueName, type Clients } from '../helpers/k8s.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const CHART = join(repoRoot, 'deploy', 'helm', 'drainflow');
const KUBE_VERSION = stackVersions().K8S_VERSION!;

type Obj = KubernetesObject & Record<string, unknown>;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[], input?: string): Result {
  try {
    const stdout = execFileSync(bin, args, {
      input,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr: '' };
  } catch (err) {
    const e = err as { status?: number | null; stdout?: string; stderr?: string; message: string };
    if (e.status === undefined || e.status === null)
      throw new Error(`${bin} ${args.join(' ')}: ${e.message}`, { cause: err });
    return { code: e.status, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function ok(bin: string, args: string[], input?: string): Result {
  const r = run(bin, args, input);
  assert.equal(r.code, 0, `${bin} ${args.join(' ')} failed:\n${r.stderr}${r.stdout}`);
  return r;
}

/**
 * YAML documents as the API server reads them: YAML 1.1, so `defaultMode: 0440` is octal (288), as
 * sigs.k8s.io/yaml parses it.
 */
function parseDocs(text: string): Obj[] {
  return parseAllDocuments(text, { version: '1.1' })
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => Boolean(o?.kind));
}

/** `helm template drainflow deploy/helm/drainflow -n <ns> [args]`, parsed. */
function helmTemplate(namespace: string, args: string[] = []): Obj[] {
  const r = ok(helmPath(), [
    'template',
    'drainflow',
    CHART,
    '--namespace',
    namespace,
    '--kube-version',
    KUBE_VERSION,
    ...args,
  ]);
  return parseDocs(r.stdout);
}

/** The ConfigMap name without kustomize's content-hash suffix. */
const unhash = (name: string): string => name.replace(/^(drainflow-config)-[a-z0-9]{10}$/, '$1');

function id(o: Obj): string {
  return `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${unhash(o.metadata!.name!)}`;
}

function byId(objs: Obj[]): Map<string, Obj> {
  return new Map(objs.map((o) => [id(o), o]));
}

/** What must be equal between the two renders: everything but metadata, with the ConfigMap reference unhashed and the chart's checksum annotation dropped. */
function essence(o: Obj): unknown {
  const copy = structuredClone(o) as Record<string, unknown>;
  for (const k of ['apiVersion', 'kind', 'metadata']) delete copy[k];
  if (o.kind === 'Deployment') {
    const tpl = (copy.spec as V1Deployment['spec'])!.template;
    delete tpl.metadata!.annotations;
    for (const ctr of tpl.spec!.containers)
      for (const ef of ctr.envFrom ?? [])
        if (ef.configMapRef) ef.configMapRef.name = unhash(ef.configMapRef.name!);
  }
  return copy;
}

/** Values that differ from every default. */
const CUSTOM = [
  'image.repository=registry.example.com/ops/drainflow',
  'image.tag=1.2.3',
  'image.pullPolicy=Always',
  'namespace.create=true',
  'temporal.address=acme.a1b2c.tmprl.cloud:7233',
  'temporal.namespace=acme.a1b2c',
  'temporal.taskQueue=maintenance',
  'temporal.uiUrl=https://cloud.temporal.io',
  'temporal.tls.secretName=my-temporal-tls',
  'temporal.tls.clientCert=true',
  'temporal.tls.ca=true',
  'temporal.tls.serverName=frontend.example.com',
  'temporal.apiKey.secretName=my-api-key',
  'temporal.apiKey.key=token',
  'logLevel=debug',
  'planSelector=team=storage\\,tier!=gold', // helm --set: a comma separates values unless escaped
  'operator.replicas=3',
  'operator.port=9090',
  'operator.resources.requests.cpu=75m',
  'operator.resources.limits.memory=256Mi',
  'operator.nodeOptions=--max-old-space-size=96',
  'operator.mallocArenaMax=1',
  'worker.replicas=5',
  'worker.port=9091',
  'worker.resources.requests.memory=512Mi',
  'worker.resources.limits.memory=1Gi',
  'worker.nodeOptions=--max-old-space-size=192 --max-semi-space-size=2',
  'worker.mallocArenaMax=4',
];
const setArgs = (values: string[]): string[] => values.flatMap((v) => ['--set-string', v]);
/** replicas and ports are numbers: --set, not --set-string. */
const customArgs = (): string[] =>
  CUSTOM.flatMap((v) =>
    /^(operator|worker)\.(replicas|port)=|\.(clientCert|ca|create)=/.test(v) ? ['--set', v] : setArgs([v]),
  );

let c: Clients;
let ns: string;

before(async () => {
  c = clients();
  await applyCrds(c);
  ns = uniqueName('df-helm');
});

after(() => {
  run(kubectlPath(), ['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
});

describe('helm lint', () => {
  it('passes --strict with default values', () => {
    const r = ok(helmPath(), ['lint', '--strict', CHART, '--kube-version', KUBE_VERSION]);
    assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });
  it('passes --strict with non-default values', () => {
    const r = ok(helmPath(), ['lint', '--strict', CHART, '--kube-version', KUBE_VERSION, ...customArgs()]);
    assert.match(r.stdout, /0 chart\(s\) failed/);
  });
});

describe('helm template with default values equals deploy/default', () => {
  const kustomized = () =>
    parseDocs(ok(kubectlPath(), ['kustomize', join(repoRoot, 'deploy', 'default')]).stdout);

  it('the same kinds and names, and the same rules, bindings, data and specs', () => {
    const k = byId(
      kustomized().filter((o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition'),
    );
    const h = byId(helmTemplate('drainflow-system'));
    assert.deepEqual([...h.keys()].sort(), [...k.keys()].sort(), 'kinds and names');
    for (const [key, ko] of k) {
      const ho = h.get(key)!;
      assert.deepEqual(essence(ho), essence(ko), `${key}: rules, bindings, data or spec`);
      // The chart adds Helm's standard labels to deploy/base's.
      for (const [l, v] of Object.entries(ko.metadata?.labels ?? {}))
        assert.equal(ho.metadata?.labels?.[l], v, `${key}: label ${l}`);
    }
  });

  it('--include-crds gives the generated CRD, and namespace.create the Namespace of deploy/base', () => {
    const k = kustomized();
    const crd = helmTemplate('drainflow-system', ['--include-crds']).find(
      (o) => o.kind === 'CustomResourceDefinition',
    );
    assert.deepEqual(
      crd,
      k.find((o) => o.kind === 'CustomResourceDefinition'),
    );
    assert.equal(crd?.metadata?.name, `${PLURAL}.${GROUP}`);
    const nsK = k.find((o) => o.kind === 'Namespace')!;
    const nsH = helmTemplate('drainflow-system', ['--set', 'namespace.create=true']).find(
      (o) => o.kind === 'Namespace',
    );
    assert.equal(nsH?.metadata?.name, nsK.metadata?.name);
    for (const [l, v] of Object.entries(nsK.metadata?.labels ?? {}))
      assert.equal(nsH?.metadata?.labels?.[l], v, `Namespace label ${l}`);
  });
});

describe('helm template with non-default values', () => {
  it('puts every value where it belongs, and the code accepts the operator environment', () => {
    const objs = helmTemplate(ns, customArgs());
    const get = (kind: string, name: string) => {
      const o = objs.find((x) => x.kind === kind && x.metadata?.name === name);
      assert.ok(o, `${kind} ${name} rendered`);
      return o;
    };
    assert.equal(get('Namespace', ns).metadata?.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
    for (const o of objs.filter((x) => !['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(x.kind!)))
      assert.ok(
        o.metadata?.namespace === ns || o.metadata?.namespace === 'default',
        `${id(o)} is in the release namespace (or default for the Events Roles)`,
      );
    for (const b of objs.filter((x) => x.kind === 'ClusterRoleBinding' || x.kind === 'RoleBinding'))
      assert.deepEqual(
        (b.subjects as Array<{ namespace: string }>).map((s) => s.namespace),
        [ns],
        `${id(b)}: the ServiceAccount of the release namespace`,
      );
    const cm = get('ConfigMap', 'drainflow-config') as V1ConfigMap;
    assert.deepEqual(cm.data, {
      TEMPORAL_ADDRESS: 'acme.a1b2c.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'acme.a1b2c',
      DRAINFLOW_TASK_QUEUE: 'maintenance',
      TEMPORAL_UI_URL: 'https://cloud.temporal.io',
      TEMPORAL_TLS_CERT: '/etc/drainflow/temporal-tls/tls.crt',
      TEMPORAL_TLS_KEY: '/etc/drainflow/temporal-tls/tls.key',
      TEMPORAL_TLS_CA: '/etc/drainflow/temporal-tls/ca.crt',
      TEMPORAL_TLS_SERVER_NAME: 'frontend.example.com',
      DRAINFLOW_LOG_LEVEL: 'debug',
    });
    for (const [component, replicas, port, cpu, memLimit, nodeOptions, arenas] of [
      ['operator', 3, 9090, '75m', '256Mi', '--max-old-space-size=96', '1'],
      ['worker', 5, 9091, '100m', '1Gi', '--max-old-space-size=192 --max-semi-space-size=2', '4'],
    ] as const) {
      const d = get('Deployment', `drainflow-${component}`) as unknown as V1Deployment;
      assert.equal(d.spec?.replicas, replicas);
      const pod = d.spec!.template.spec!;
      const ctr = pod.containers[0]!;
      assert.equal(ctr.image, 'registry.example.com/ops/drainflow:1.2.3');
      assert.equal(ctr.imagePullPolicy, 'Always');
      assert.equal(ctr.ports?.[0]?.containerPort, port);
      assert.equal(ctr.resources?.requests?.cpu, cpu);
      assert.equal(ctr.resources?.limits?.memory, memLimit);
      assert.equal(ctr.env?.find((e) => e.name === 'NODE_OPTIONS')?.value, nodeOptions);
      assert.equal(ctr.env?.find((e) => e.name === 'MALLOC_ARENA_MAX')?.value, arenas);
      assert.equal(
        pod.volumes?.find((v) => v.name === 'temporal-tls')?.secret?.secretName,
        'my-temporal-tls',
      );
      const apiKey = ctr.env?.find((e) => e.name === 'TEMPORAL_API_KEY')?.valueFrom?.secretKeyRef;
      assert.deepEqual(apiKey, { name: 'my-api-key', key: 'token', optional: true });
      const portEnv = component === 'operator' ? 'DRAINFLOW_OPERATOR_PORT' : 'DRAINFLOW_WORKER_PORT';
      assert.equal(ctr.env?.find((e) => e.name === portEnv)?.value, String(port));
      const svc = get('Service', `drainflow-${component}-metrics`) as {
        spec: { ports: Array<{ port: number }> };
      };
      assert.equal(svc.spec.ports[0]?.port, port);
      const selector = ctr.env?.find((e) => e.name === 'DRAINFLOW_PLAN_SELECTOR')?.value;
      assert.equal(selector, component === 'operator' ? 'team=storage,tier!=gold' : undefined);
      assert.ok(d.spec?.template.metadata?.annotations?.['checksum/config']);
    }

    // The operator's environment as the pod gets it, through the code's own loader (TLS files
    // exist only in the pod: left out here).
    const op = (get('Deployment', 'drainflow-operator') as unknown as V1Deployment).spec!.template.spec!
      .containers[0]!;
    const env: NodeJS.ProcessEnv = {
      ...cm.data,
      POD_NAME: 'drainflow-operator-abc12-xyz',
      POD_NAMESPACE: ns,
    };
    for (const k of ['TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CA']) delete env[k];
    for (const e of op.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
    const cfg = loadConfig({ mode: 'in-cluster' }, env);
    assert.equal(cfg.planSelector, 'team=storage,tier!=gold');
    assert.equal(cfg.operatorPort, 9090);
    assert.equal(cfg.taskQueue, 'maintenance');
    assert.equal(cfg.leaseNamespace, ns);
    assert.match(leaseName(cfg.planSelector), /^drainflow-operator-[0-9a-f]{10}$/);
  });

  for (const [what, args, message] of [
    [
      'an address without a port',
      ['--set-string', 'temporal.address=temporal'],
      /temporal\.address must be host:port/,
    ],
    [
      'an empty Temporal namespace',
      ['--set-string', 'temporal.namespace='],
      /temporal\.namespace is required/,
    ],
    ['a port out of range', ['--set', 'worker.port=70000'], /worker\.port must be a port 1-65535, got 70000/],
    ['an unknown log level', ['--set-string', 'logLevel=loud'], /logLevel must be one of/],
  ] as const) {
    it(`refuses ${what} with a message naming the value`, () => {
      const r = run(helmPath(), ['template', 'drainflow', CHART, '--kube-version', KUBE_VERSION, ...args]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, message);
    });
  }
});

describe('the rendered chart on the API server', () => {
  it('kubectl apply --dry-run=server accepts the default and the non-default render, without Pod Security warnings', () => {
    const custom = helmTemplate(ns, customArgs());
    // The namespace for real (namespaced objects need it), with the chart's Pod Security labels.
    ok(kubectlPath(), ['apply', '-f', '-'], JSON.stringify(custom.find((o) => o.kind === 'Namespace')));
    const renders: Array<[string, Obj[]]> = [
      ['default values', helmTemplate(ns, ['--include-crds'])],
      ['non-default values', custom.filter((o) => o.kind !== 'Namespace')],
    ];
    for (const [what, objs] of renders) {
      const input = objs.map((o) => JSON.stringify(o)).join('\n');
      for (const mode of [[], ['--server-side', '--field-manager=drainflow-e2e']]) {
        const r = ok(kubectlPath(), ['apply', '--dry-run=server', ...mode, '-f', '-'], input);
        const lines = r.stdout.split('\n').filter((l) => l.includes('(server dry run)'));
        assert.equal(
          lines.length,
          objs.length,
          `${what} ${mode.join(' ')}: every object validated\n${r.stdout}`,
        );
        assert.match(r.stdout, /deployment\.apps\/drainflow-operator \S+ \(server dry run\)/);
        assert.match(r.stdout, /deployment\.apps\/drainflow-worker \S+ \(server dry run\)/);
        assert.doesNotMatch(r.stderr, /PodSecurity|Warning/, `${what}: ${r.stderr}`);
      }
    }
  });
});

describe('opt-in RBAC for onDeadline DeletePods', () => {
  const DELETE_PODS = 'drainflow-worker-delete-pods';
  const component = () =>
    parseDocs(ok(kubectlPath(), ['kustomize', join(repoRoot, 'deploy', 'components', 'delete-pods')]).stdout);
  const mine = (objs: Obj[]) => objs.filter((o) => o.metadata?.name === DELETE_PODS);

  it('no pod delete by default, in the chart or in deploy/default', () => {
    assert.deepEqual(mine(helmTemplate('drainflow-system')), []);
    const kustomized = parseDocs(
      ok(kubectlPath(), ['kustomize', join(repoRoot, 'deploy', 'default')]).stdout,
    );
    assert.deepEqual(mine(kustomized), []);
    const grantsDelete = (objs: Obj[]) =>
      objs.some(
        (o) =>
          o.kind === 'ClusterRole' &&
          (o.rules as Array<{ resources?: string[]; verbs?: string[] }>).some(
            (r) => r.resources?.includes('pods') && r.verbs?.includes('delete'),
          ),
      );
    assert.ok(!grantsDelete(helmTemplate('drainflow-system')), 'a default ClusterRole grants pods delete');
    assert.ok(!grantsDelete(kustomized), 'deploy/default grants pods delete');
  });

  it('rbac.deletePods=true renders exactly the component deploy/components/delete-pods: pods delete, bound to the worker', () => {
    const h = byId(mine(helmTemplate('drainflow-system', ['--set', 'rbac.deletePods=true'])));
    const k = byId(component());
    assert.deepEqual([...h.keys()].sort(), [
      `ClusterRole ${DELETE_PODS}`,
      `ClusterRoleBinding ${DELETE_PODS}`,
    ]);
    assert.deepEqual([...h.keys()].sort(), [...k.keys()].sort());
    for (const [key, ko] of k) assert.deepEqual(essence(h.get(key)!), essence(ko), key);
    assert.deepEqual(h.get(`ClusterRole ${DELETE_PODS}`)!.rules, [
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'] },
    ]);
    // In another release namespace the binding follows it.
    const other = byId(mine(helmTemplate(ns, ['--set', 'rbac.deletePods=true'])));
    assert.deepEqual(other.get(`ClusterRoleBinding ${DELETE_PODS}`)!.subjects, [
      { kind: 'ServiceAccount', name: 'drainflow-worker', namespace: ns },
    ]);
  });

  it('an overlay of deploy/default with the component builds, and adds only the two objects', () => {
    const dir = mkdtempSync(join(tmpdir(), 'drainflow-kz-'));
    try {
      const rel = relative(dir, join(repoRoot, 'deploy'));
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        [
          'apiVersion: kustomize.config.k8s.io/v1beta1',
          'kind: Kustomization',
          'resources:',
          `  - ${rel}/default`,
          'components:',
          `  - ${rel}/components/delete-pods`,
          '',
        ].join('\n'),
      );
      const withIt = byId(
        parseDocs(ok(kubectlPath(), ['kustomize', dir, '--load-restrictor', 'LoadRestrictionsNone']).stdout),
      );
      const without = byId(
        parseDocs(ok(kubectlPath(), ['kustomize', join(repoRoot, 'deploy', 'default')]).stdout),
      );
      assert.deepEqual([...withIt.keys()].filter((key) => !without.has(key)).sort(), [
        `ClusterRole ${DELETE_PODS}`,
        `ClusterRoleBinding ${DELETE_PODS}`,
      ]);
      assert.equal(withIt.size, without.size + 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// The chart's CRD copy is checked against the generator in test/unit/crd.test.ts; this makes sure
// the file is where Helm reads it.
describe('the chart layout', () => {
  it('crds/ holds the generated CRD', () => {
    const text = readFileSync(join(CHART, 'crds', `${PLURAL}.${GROUP}.yaml`), 'utf8');
    assert.match(text, /^# GENERATED by scripts\/gen-crd\.ts/);
  });
});
