// test-lane: parallel
/**
 * The generated MaintenancePlan CRD against a real kube-apiserver (the local stack of scripts/stack):
 * it is accepted as structural, `kubectl explain` shows the zod descriptions, invalid plans are refused by
 * `kubectl apply` with readable messages, valid ones are defaulted exactly like zod's parseSpec, and the
 * status subresource and printer columns work.
 *
 * Needs KUBECONFIG: `npm run stack -- up && eval "$(npm run --silent stack -- env)"`.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import {
  API_VERSION,
  KIND,
  MaintenancePlanStatusSchema,
  parseSpec,
  type MaintenancePlanStatus,
} from '../../src/api/plan.js';
import { CRD_PATH, type CustomResourceDefinition } from '../../scripts/gen-crd.js';

const CRD_NAME = 'maintenanceplans.maintenance.drainflow.dev';
const LABEL = 'drainflow.dev/test=e2e-crd';
const RUN = `${process.pid.toString(36)}${Date.now().toString(36)}`;

/** kubectl: $KUBECTL, $DRAINFLOW_KUBECTL (from `stack.sh env`), the stack's cached build, or PATH. */
function findKubectl(): string {
  const fromEnv = process.env.KUBECTL ?? process.env.DRAINFLOW_KUBECTL;
  if (fromEnv) return fromEnv;
  const cache = process.env.DRAINFLOW_CACHE ?? join(homedir(), '.cache', 'drainflow');
  if (existsSync(cache)) {
    for (const dir of readdirSync(cache)
      .filter((d) => d.startsWith('k8s-'))
      .sort()
      .reverse()) {
      const bin = join(cache, dir, 'bin', 'kubectl');
      if (existsSync(bin)) return bin;
    }
  }
  return 'kubectl';
}

const KUBECTL = findKubectl();

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl with KUBECONFIG from the environment; never throws on a non-zero exit. */
function kubectl(args: string[], input?: string): Result {
  try {
    const stdout = execFileSync(KUBECTL, args, {
      input,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 60_000,
      env: process.env,
    });
    return { code: 0, stdout, stderr: '' };
  } catch (err) {
    const e = err as { status?: number | null; stdout?: string; stderr?: string; message: string };
    if (e.status === undefined || e.status === null) {
      throw new Error(`kubectl ${args.join(' ')}: ${e.message}`, { cause: err });
    }
    return { code: e.status, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Like {@link kubectl} but fails the test on a non-zero exit, showing kubectl's stderr. */
function kubectlOk(args: string[], input?: string): string {
  const r = kubectl(args, input);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout;
}

/** Polls fn until it returns without throwing, or rethrows its last error after timeoutMs. */
async function eventually<T>(fn: () => T, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return fn();
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

function plan(name: string, spec: unknown): string {
  return stringify({
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: `${name}-${RUN}`, labels: { 'drainflow.dev/test': 'e2e-crd' } },
    ...(spec === undefined ? {} : { spec }),
  });
}

describe('MaintenancePlan CRD on a real API server', () => {
  before(() => {
    const kubeconfig = process.env.KUBECONFIG;
    assert.ok(
      kubeconfig,
      'KUBECONFIG is not set. Start the local stack and load its environment first:\n' +
        '  npm run stack -- up && eval "$(npm run --silent stack -- env)"',
    );
    assert.ok(
      existsSync(kubeconfig),
      `KUBECONFIG=${kubeconfig} does not exist: is the stack up (npm run stack -- up)?`,
    );
    const version = kubectl(['version', '-o', 'json']);
    assert.equal(
      version.code,
      0,
      `the API server in ${kubeconfig} does not answer (${KUBECTL}):\n${version.stderr}`,
    );
  });

  after(() => {
    if (process.env.KUBECONFIG) {
      kubectl(['delete', 'maintenanceplans', '-l', LABEL, '--wait=false', '--ignore-not-found']);
    }
  });

  it('applies, becomes Established, and is accepted as structural with nothing pruned', async () => {
    kubectlOk([
      'apply',
      '--server-side',
      '--force-conflicts',
      '--field-manager=drainflow-e2e',
      '-f',
      CRD_PATH,
    ]);
    kubectlOk(['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=60s']);
    const live = JSON.parse(kubectlOk(['get', 'crd', CRD_NAME, '-o', 'json'])) as {
      spec: { versions: Array<{ schema: unknown; additionalPrinterColumns: unknown }> };
      status: { conditions: Array<{ type: string; status: string; message: string }> };
    };
    const bad = live.status.conditions.filter(
      (c) => ['NonStructuralSchema', 'NamingConflict'].includes(c.type) && c.status === 'True',
    );
    assert.deepEqual(bad, []);
    // Compared with the file applied (the unit test compares the file with the generator).
    const expected = (parse(readFileSync(CRD_PATH, 'utf8')) as CustomResourceDefinition).spec.versions[0]!;
    assert.deepEqual(live.spec.versions[0]!.schema, expected.schema, 'the API server changed the schema');
    assert.deepEqual(live.spec.versions[0]!.additionalPrinterColumns, expected.additionalPrinterColumns);
    // The resource is served (discovery can lag the Established condition by a moment).
    await eventually(() => kubectlOk(['get', 'mp', '-l', LABEL]));
  });

  it('kubectl explain shows the zod descriptions', async () => {
    const out = await eventually(() => kubectlOk(['explain', 'maintenanceplan.spec.eviction']));
    const squash = (s: string) => s.replace(/\s+/g, ' ');
    for (const text of [
      'How pods are evicted.',
      'Timeout, in seconds, of one Eviction API call',
      'Eviction calls in flight at once on one node.',
      "Grace period, in seconds, passed in DeleteOptions; absent means the pod's own.",
      'Backoff for 429s without a Retry-After header, for transient errors, and between tries to claim a node another plan holds',
    ]) {
      assert.ok(squash(out).includes(text), `explain lacks "${text}":\n${out}`);
    }
    const backoff = kubectlOk(['explain', 'maintenanceplan.spec.eviction.retryBackoff.initialSeconds']);
    assert.match(squash(backoff), /First wait, in seconds, after a 429 without Retry-After/);
    const status = kubectlOk(['explain', 'maintenanceplan.status.evictionProgress.nextActionAt']);
    assert.match(squash(status), /while cooling down; absent otherwise/);
  });

  /**
   * Bad plans and the API server's answer. `skipsCel` marks the errors after which the API server skips
   * every CEL rule and adds `<nil>: Invalid value: null: some validation rules were not checked ...`
   * (a type error, or a value over maxLength/maxItems: those bounds are what lets it accept the CEL
   * rules' cost); for every other bad plan that line must not appear.
   */
  const NOT_CHECKED = /some validation rules were not checked/;
  const NODE_NAME_RULE =
    "must be a node name: a DNS subdomain of lowercase letters, digits, '-' and '.' that starts and ends with a letter or digit, at most 253 characters";
  // opts.absent: lines that must not appear (a misleading second message for one mistake).
  const invalid: Array<[string, unknown, RegExp[], { skipsCel?: boolean; absent?: RegExp[] }?]> = [
    [
      'no spec',
      undefined,
      [/spec: Required value: a plan needs a spec naming its nodes: spec\.nodeNames or spec\.nodeSelector/],
    ],
    ['no nodes', {}, [/spec: Required value: spec\.nodeNames or spec\.nodeSelector is required/]],
    [
      'an unknown remedy policy',
      { nodeNames: ['a'], remedies: { rolloutRestart: 'Always' } },
      [/spec\.remedies\.rolloutRestart: Forbidden: must be Never, Approve or Auto \(got "Always"\)/],
    ],
    [
      'remedies.afterSeconds out of bounds',
      { nodeNames: ['a'], remedies: { rolloutRestart: 'Auto', afterSeconds: 90000 } },
      [
        /spec\.remedies\.afterSeconds: Invalid value: 90000: spec\.remedies\.afterSeconds in body should be less than or equal to 86400/,
      ],
    ],
    [
      'empty nodeNames',
      { nodeNames: [] },
      [/spec: Required value: spec\.nodeNames or spec\.nodeSelector is required/],
    ],
    [
      'a node name that is not a DNS subdomain',
      { nodeNames: ['Node_1'] },
      [new RegExp(`spec\\.nodeNames\\[0\\]: Forbidden: ${NODE_NAME_RULE} \\(got "Node_1"\\)`)],
    ],
    ['a node named twice', { nodeNames: ['n1', 'n1'] }, [/spec\.nodeNames\[1\]: Duplicate value: "n1"/]],
    [
      'a node name of 254 characters',
      { nodeNames: ['a'.repeat(254)] },
      [/spec\.nodeNames\[0\]: Too long: may not be more than 253 bytes/],
      { skipsCel: true },
    ],
    [
      'negative drainTimeoutSeconds',
      { nodeNames: ['a'], drainTimeoutSeconds: -5 },
      [
        /spec\.drainTimeoutSeconds: Invalid value: -5: spec\.drainTimeoutSeconds in body should be greater than or equal to 1/,
      ],
    ],
    [
      'drainTimeoutSeconds in milliseconds (above 365 days)',
      { nodeNames: ['a'], drainTimeoutSeconds: 99_999_999_999 },
      [
        /spec\.drainTimeoutSeconds: Invalid value: 99999999999: spec\.drainTimeoutSeconds in body should be less than or equal to 31536000/,
      ],
    ],
    [
      'string where an int belongs',
      { nodeNames: ['a'], maxUnavailableNodes: 'two' },
      // The API server's type check names the type of the value given, not the value.
      [
        /spec\.maxUnavailableNodes: Invalid value: "string": spec\.maxUnavailableNodes in body must be of type integer/,
      ],
      { skipsCel: true },
    ],
    [
      'initialSeconds > maxSeconds',
      { nodeNames: ['a'], eviction: { retryBackoff: { initialSeconds: 300, maxSeconds: 10 } } },
      [/spec\.eviction\.retryBackoff\.initialSeconds: Forbidden: must be less than or equal to maxSeconds/],
    ],
    [
      'initialSeconds above the defaulted maxSeconds',
      { nodeNames: ['a'], eviction: { retryBackoff: { initialSeconds: 300 } } },
      [/spec\.eviction\.retryBackoff\.initialSeconds: Forbidden: must be less than or equal to maxSeconds/],
    ],
    [
      'callTimeoutSeconds above its maximum',
      { nodeNames: ['a'], eviction: { callTimeoutSeconds: 301 } },
      [/spec\.eviction\.callTimeoutSeconds: Invalid value: 301: .*should be less than or equal to 300/],
    ],
    [
      'maxUnavailableNodes above its maximum',
      { nodeNames: ['a'], maxUnavailableNodes: 501 },
      [/spec\.maxUnavailableNodes: Invalid value: 501: .*should be less than or equal to 500/],
    ],
    [
      '5001 node names',
      { nodeNames: Array.from({ length: 5001 }, (_, i) => `n${i}`) },
      [/spec\.nodeNames: Too many: 5001: must have at most 5000 items/],
      { skipsCel: true },
    ],
    [
      'unknown mode',
      { nodeNames: ['a'], mode: 'DryRun' },
      [/spec\.mode: Forbidden: must be Drain or Preflight \(got "DryRun"\)/],
    ],
    [
      'mode in lowercase',
      { nodeNames: ['a'], mode: 'preflight' },
      [/spec\.mode: Forbidden: must be Drain or Preflight \(got "preflight"\)/],
    ],
    [
      'unknown uncordon policy',
      { nodeNames: ['a'], uncordon: 'Sometimes' },
      [/spec\.uncordon: Forbidden: must be OnRelease, OnDelete, Never or AfterEachNode \(got "Sometimes"\)/],
    ],
    [
      'every mistake at once',
      { nodeNames: ['Node_1', 'n1', 'n1'], uncordon: 'Sometimes', cordon: 'Later' },
      [
        /spec\.nodeNames\[0\]: Forbidden: must be a node name/,
        /spec\.nodeNames\[2\]: Duplicate value: "n1"/,
        /spec\.uncordon: Forbidden: must be OnRelease, OnDelete, Never or AfterEachNode \(got "Sometimes"\)/,
        /spec\.cordon: Forbidden: must be PerNode or AllAtStart \(got "Later"\)/,
      ],
    ],
    ['unknown field', { nodeNames: ['a'], nodename: 'a' }, [/unknown field "spec\.nodename"/]],
    [
      'empty nodeSelector',
      { nodeSelector: {} },
      [
        /spec\.nodeSelector: Forbidden: must not be empty: an empty selector selects every node of the cluster/,
      ],
    ],
    [
      'bad label keys and values',
      { nodeSelector: { matchLabels: { 'a b': 'x', ok: 'bad value!' } } },
      [
        /spec\.nodeSelector\.matchLabels: Forbidden: every key must be a label key: an optional DNS subdomain prefix/,
        /spec\.nodeSelector\.matchLabels\[ok\]: Forbidden: must be a label value: .* \(got "bad value!"\)/,
      ],
    ],
    [
      'bad selector requirements',
      {
        nodeNames: ['a'],
        podSelection: {
          podSelector: {
            matchExpressions: [
              { key: 'k', operator: 'In' },
              { key: 'x/y/z', operator: 'Exists', values: ['a'] },
              { key: 'k', operator: 'Near', values: ['a'] },
              { operator: 'Exists' },
            ],
          },
        },
      },
      [
        /spec\.podSelection\.podSelector\.matchExpressions\[0\]\.values: Required value: must not be empty for operator In/,
        /spec\.podSelection\.podSelector\.matchExpressions\[1\]\.values: Forbidden: must be empty for operator Exists/,
        /spec\.podSelection\.podSelector\.matchExpressions\[1\]\.key: Forbidden: must be a label key: .* \(got "x\/y\/z"\)/,
        /spec\.podSelection\.podSelector\.matchExpressions\[2\]\.operator: Forbidden: must be In, NotIn, Exists or DoesNotExist \(got "Near"\)/,
        /spec\.podSelection\.podSelector\.matchExpressions\[3\]\.key: Required value: key is required/,
      ],
      // An unknown operator is one mistake: no "values: must be empty for operator Near" besides.
      { absent: [/matchExpressions\[2\]\.values/] },
    ],
    [
      'bad maintenance windows',
      {
        nodeNames: ['a'],
        windows: [
          { days: ['Monday', 'Tue', 'Tue'], start: '25:00', end: '9:5', timeZone: 'Europe Berlin' },
          { days: ['Sat'], start: '22:00', end: '22:00' },
        ],
      },
      [
        /spec\.windows\[0\]\.days\[0\]: Forbidden: must be Mon, Tue, Wed, Thu, Fri, Sat or Sun \(got "Monday"\)/,
        /spec\.windows\[0\]\.days\[2\]: Duplicate value: "Tue"/,
        /spec\.windows\[0\]\.start: Forbidden: must be a time of day: HH:MM on the 24-hour clock.* \(got "25:00"\)/,
        /spec\.windows\[0\]\.end: Forbidden: must be a time of day: .* \(got "9:5"\)/,
        /spec\.windows\[0\]\.timeZone: Forbidden: must be an IANA time zone name: .* \(got "Europe Berlin"\)/,
        /spec\.windows\[1\]\.end: Forbidden: must differ from start/,
      ],
    ],
    // spec.hooks.*.job: refused at creation, not after the node was cordoned and drained.
    [
      'a Job hook that can never run',
      {
        nodeNames: ['a'],
        hooks: {
          beforeDrain: { job: { namespace: 'Bad_NS', template: { spec: {} } } },
          afterDrain: {
            job: {
              namespace: 'maint',
              template: { spec: { template: { spec: { containers: [{ name: 'patch' }] } } } },
            },
          },
        },
      },
      [
        /spec\.hooks\.beforeDrain\.job\.namespace: Forbidden: must be a namespace name: a DNS label .* \(got "Bad_NS"\)/,
        /spec\.hooks\.beforeDrain\.job\.template: Required value: must hold a pod template with at least one container: spec\.template\.spec\.containers/,
        /spec\.hooks\.afterDrain\.job\.template\.spec\.template\.spec\.containers\[0\]: Required value: every container of spec\.template\.spec\.containers needs a name and an image/,
      ],
    ],
    [
      'a Job hook with no containers',
      {
        nodeNames: ['a'],
        hooks: {
          afterDrain: {
            job: { namespace: 'maint', template: { spec: { template: { spec: { containers: [] } } } } },
          },
        },
      },
      [
        /spec\.hooks\.afterDrain\.job\.template: Required value: must hold a pod template with at least one container/,
      ],
    ],
    // spec.podOrder, podSelection.ignoreDoNotDisrupt, eviction.skipWaitForDeleteTimeoutSeconds.
    [
      'a podOrder entry without a selector',
      { nodeNames: ['a'], podOrder: [{ order: 5 }] },
      [/spec\.podOrder\[0\]: Required value: needs podSelector or namespaceSelector/],
    ],
    [
      'a podOrder entry without an order',
      { nodeNames: ['a'], podOrder: [{ podSelector: { matchLabels: { app: 'a' } } }] },
      [/spec\.podOrder\[0\]\.order: Required value: order is required/],
    ],
    [
      'a podOrder order beyond int32',
      { nodeNames: ['a'], podOrder: [{ podSelector: { matchLabels: { app: 'a' } }, order: 2147483648 }] },
      [/spec\.podOrder\[0\]\.order: Invalid value: 2147483648: .*should be less than or equal to 2147483647/],
    ],
    [
      'a fractional podOrder order',
      { nodeNames: ['a'], podOrder: [{ podSelector: { matchLabels: { app: 'a' } }, order: 1.5 }] },
      [/spec\.podOrder\[0\]\.order: Invalid value: "number": .*must be of type integer/],
      { skipsCel: true },
    ],
    [
      'more than 16 podOrder entries',
      {
        nodeNames: ['a'],
        podOrder: Array.from({ length: 17 }, (_, i) => ({
          podSelector: { matchLabels: { app: `a${i}` } },
          order: i,
        })),
      },
      [/spec\.podOrder: Too many: 17: must have at most 16 items/],
      { skipsCel: true },
    ],
    [
      'a bad label key in a podOrder namespaceSelector',
      { nodeNames: ['a'], podOrder: [{ namespaceSelector: { matchLabels: { 'a b': 'x' } }, order: 1 }] },
      [/spec\.podOrder\[0\]\.namespaceSelector\.matchLabels: Forbidden: every key must be a label key/],
    ],
    [
      'skipWaitForDeleteTimeoutSeconds 0',
      { nodeNames: ['a'], eviction: { skipWaitForDeleteTimeoutSeconds: 0 } },
      [
        /spec\.eviction\.skipWaitForDeleteTimeoutSeconds: Invalid value: 0: .*should be greater than or equal to 1/,
      ],
    ],
    [
      'skipWaitForDeleteTimeoutSeconds above a day',
      { nodeNames: ['a'], eviction: { skipWaitForDeleteTimeoutSeconds: 86401 } },
      [
        /spec\.eviction\.skipWaitForDeleteTimeoutSeconds: Invalid value: 86401: .*should be less than or equal to 86400/,
      ],
    ],
    [
      'a string for ignoreDoNotDisrupt',
      { nodeNames: ['a'], podSelection: { ignoreDoNotDisrupt: 'maybe' } },
      [/spec\.podSelection\.ignoreDoNotDisrupt: Invalid value: "string": .*must be of type boolean/],
      { skipsCel: true },
    ],
    [
      'a paused Preflight plan',
      { nodeNames: ['a'], mode: 'Preflight', paused: true },
      [/spec\.paused: Forbidden: must not be true with mode Preflight: a preview cordons and evicts nothing/],
    ],
    [
      'deadlineCountsOutsideWindows false without windows',
      { nodeNames: ['a'], deadlineCountsOutsideWindows: false },
      [
        /spec\.deadlineCountsOutsideWindows: Forbidden: false needs spec\.windows: without maintenance windows there is no time outside them/,
      ],
    ],
    [
      'hooks in a Preflight plan',
      {
        nodeNames: ['a'],
        mode: 'Preflight',
        hooks: { afterDrain: { workflow: { type: 'patchNode', taskQueue: 'ops', timeoutSeconds: 60 } } },
      },
      [
        /spec\.hooks: Forbidden: must not be set with mode Preflight: a preview cordons, evicts and runs nothing/,
      ],
    ],
    [
      "a hook's default timeout longer than the plan's deadline",
      {
        nodeNames: ['a'],
        drainTimeoutSeconds: 300,
        hooks: { beforeDrain: { workflow: { type: 'patchNode', taskQueue: 'ops' } } },
      },
      [
        /spec\.hooks\.beforeDrain\.workflow\.timeoutSeconds: Forbidden: must be at most spec\.drainTimeoutSeconds \(timeoutSeconds defaults to 600\)/,
      ],
    ],
    [
      'a hook Job longer than the plan',
      {
        nodeNames: ['a'],
        drainTimeoutSeconds: 60,
        hooks: {
          afterDrain: {
            job: {
              namespace: 'ops',
              timeoutSeconds: 61,
              template: { spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } } },
            },
          },
        },
      },
      [/spec\.hooks\.afterDrain\.job\.timeoutSeconds: Forbidden: must be at most spec\.drainTimeoutSeconds/],
    ],
    [
      'a hook Job with restartPolicy Always',
      {
        nodeNames: ['a'],
        hooks: {
          afterDrain: {
            job: {
              namespace: 'ops',
              timeoutSeconds: 60,
              template: {
                spec: {
                  template: { spec: { restartPolicy: 'Always', containers: [{ name: 'c', image: 'i' }] } },
                },
              },
            },
          },
        },
      },
      [
        /spec\.hooks\.afterDrain\.job\.template\.spec\.template\.spec\.restartPolicy: Forbidden: must be Never or OnFailure \(got "Always"\)/,
      ],
    ],
  ];
  for (const [name, spec, messages, opts] of invalid) {
    it(`kubectl apply refuses a plan with ${name}, readably`, () => {
      const id = name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
      const r = kubectl(['apply', '-f', '-'], plan(`bad-${id}`, spec));
      assert.notEqual(r.code, 0, `accepted:\n${r.stdout}`);
      for (const message of messages) assert.match(r.stderr, message);
      for (const line of opts?.absent ?? []) assert.doesNotMatch(r.stderr, line);
      if (opts?.skipsCel) assert.match(r.stderr, NOT_CHECKED);
      else assert.doesNotMatch(r.stderr, NOT_CHECKED);
      // No CEL error reads `Invalid value: "<type>"` (every rule has a reason).
      assert.doesNotMatch(r.stderr, /Invalid value: "(object|string)": (?!spec\.\S+ in body)/);
      const get = kubectl(['get', 'mp', `bad-${id}-${RUN}`, '--ignore-not-found', '-o', 'name']);
      assert.equal(get.stdout.trim(), '', 'the refused plan exists');
    });
  }

  it('accepts the valid edge cases of names, labels and requirements, as zod does', () => {
    const spec = {
      nodeNames: ['n1.example.com', 'a'.repeat(253), 'x-1'],
      podSelection: {
        podSelector: {
          matchLabels: { 'example.com/pool': '', k: 'v-1.2_3' },
          matchExpressions: [
            { key: 'example.com/a', operator: 'Exists' },
            { key: 'b', operator: 'NotIn', values: ['x', ''] },
          ],
        },
      },
      // A Job hook keeps every field of its template, also those drainflow does not read.
      hooks: {
        afterDrain: {
          job: {
            namespace: 'maint-1',
            template: {
              metadata: { labels: { a: 'b' } },
              spec: {
                backoffLimit: 2,
                template: {
                  spec: {
                    restartPolicy: 'OnFailure',
                    containers: [{ name: 'p', image: 'busybox', command: ['x'] }],
                  },
                },
              },
            },
          },
        },
      },
      // The hook's default 600 s is as long as the plan: allowed.
      drainTimeoutSeconds: 600,
      windows: [{ days: ['Sat'], start: '01:00', end: '05:00' }],
      deadlineCountsOutsideWindows: false,
    };
    kubectlOk(['apply', '-f', '-'], plan('edges', spec));
    const live = JSON.parse(kubectlOk(['get', 'mp', `edges-${RUN}`, '-o', 'json'])) as { spec: unknown };
    assert.deepEqual(live.spec, parseSpec(spec));
    // The rules that compare fields run on creation only: a later pause is not checked against them.
    kubectlOk(['patch', 'mp', `edges-${RUN}`, '--type', 'merge', '-p', '{"spec":{"paused":true}}']);
  });

  it('defaults a minimal plan exactly like zod parseSpec, visible in kubectl get -o yaml', () => {
    const name = `minimal-${RUN}`;
    kubectlOk(['apply', '-f', '-'], plan('minimal', { nodeNames: ['a'] }));
    const live = JSON.parse(kubectlOk(['get', 'mp', name, '-o', 'json'])) as { spec: unknown };
    assert.deepEqual(live.spec, parseSpec({ nodeNames: ['a'] }));
    assert.deepEqual(live.spec, {
      nodeNames: ['a'],
      maxUnavailableNodes: 1,
      drainTimeoutSeconds: 3600,
      eviction: {
        callTimeoutSeconds: 10,
        maxConcurrentPerNode: 16,
        retryBackoff: { initialSeconds: 5, maxSeconds: 120 },
      },
      podSelection: { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false },
      paused: false,
      abort: false,
      release: false,
      uncordon: 'OnDelete',
      cordon: 'PerNode',
      onDeadline: 'Stop',
      deadlineWarningSeconds: 300,
      deadlineCountsOutsideWindows: true,
      mode: 'Drain',
      remedies: { rolloutRestart: 'Never', afterSeconds: 300 },
    });
    const yamlOut = kubectlOk(['get', 'mp', name, '-o', 'yaml']);
    assert.match(yamlOut, /maxConcurrentPerNode: 16/);
    assert.match(yamlOut, /uncordon: OnDelete/);
  });

  it('lets only paused, abort, release and a raised drainTimeoutSeconds change after creation', () => {
    const name = `immutable-${RUN}`;
    kubectlOk(['apply', '-f', '-'], plan('immutable', { nodeNames: ['a', 'b'] }));
    for (const [field, value] of [
      ['nodeNames', ['b']],
      ['uncordon', 'Never'],
      ['cordon', 'AllAtStart'],
      ['eviction', { maxConcurrentPerNode: 8 }],
      ['deadlineCountsOutsideWindows', false],
      ['mode', 'Preflight'],
      ['remedies', { rolloutRestart: 'Auto' }],
      ['eviction', { skipWaitForDeleteTimeoutSeconds: 30 }],
      ['podOrder', [{ podSelector: { matchLabels: { app: 'a' } }, order: 1 }]],
      // Optional without a default: added after creation, refused like a change.
      ['nodeDrainTimeoutSeconds', 60],
      ['hooks', { afterDrain: { workflow: { type: 'patchNode', taskQueue: 'ops', timeoutSeconds: 60 } } }],
    ] as const) {
      const r = kubectl([
        'patch',
        'mp',
        name,
        '--type',
        'merge',
        '-p',
        JSON.stringify({ spec: { [field]: value } }),
      ]);
      assert.notEqual(r.code, 0, `changing spec.${field} must be refused`);
      assert.match(
        r.stderr,
        new RegExp(
          `spec\\.${field}: Forbidden: cannot change after the plan is created \\(only paused, abort, release and a raised drainTimeoutSeconds can\\)`,
        ),
      );
    }
    // The plan's order is its drain order: the same names in another order are a change too (a set
    // list compares equal in any order in CEL, so the rule compares the names joined).
    const reordered = kubectl([
      'patch',
      'mp',
      name,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { nodeNames: ['b', 'a'] } }),
    ]);
    assert.notEqual(reordered.code, 0, 'reordering spec.nodeNames must be refused');
    assert.match(reordered.stderr, /spec\.nodeNames: Forbidden: cannot change after the plan is created/);
    const added = kubectl([
      'patch',
      'mp',
      name,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { nodeSelector: { matchLabels: { a: 'b' } } } }),
    ]);
    assert.notEqual(added.code, 0, 'adding spec.nodeSelector must be refused');
    assert.match(
      added.stderr,
      /spec: Forbidden: spec\.nodeNames and spec\.nodeSelector cannot be added or removed/,
    );
    // The deadline may be given more time (drainflow extend's spec twin), never less.
    const lowered = kubectl([
      'patch',
      'mp',
      name,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { drainTimeoutSeconds: 60 } }),
    ]);
    assert.notEqual(lowered.code, 0, 'lowering spec.drainTimeoutSeconds must be refused');
    assert.match(
      lowered.stderr,
      /spec\.drainTimeoutSeconds: Forbidden: drainTimeoutSeconds can only be raised .*it cannot be lowered/,
    );
    kubectlOk([
      'patch',
      'mp',
      name,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { drainTimeoutSeconds: 7200 } }),
    ]);
    for (const flag of ['paused', 'release', 'abort']) {
      kubectlOk(['patch', 'mp', name, '--type', 'merge', '-p', JSON.stringify({ spec: { [flag]: true } })]);
    }
    const live = JSON.parse(kubectlOk(['get', 'mp', name, '-o', 'json'])) as {
      spec: Record<string, unknown>;
    };
    assert.equal(live.spec.drainTimeoutSeconds, 7200);
    assert.equal(live.spec.paused, true);
    // paused goes both ways; abort and release are one-way.
    kubectlOk(['patch', 'mp', name, '--type', 'merge', '-p', JSON.stringify({ spec: { paused: false } })]);
    for (const [flag, text] of [
      ['abort', 'abort cannot be undone: the plan stays aborted'],
      ['release', 'release cannot be undone: the nodes are handed back per spec.uncordon'],
    ] as const) {
      const back = kubectl([
        'patch',
        'mp',
        name,
        '--type',
        'merge',
        '-p',
        JSON.stringify({ spec: { [flag]: false } }),
      ]);
      assert.notEqual(back.code, 0, `spec.${flag} true -> false must be refused`);
      assert.match(back.stderr, new RegExp(`spec\\.${flag}: Forbidden: ${text}`));
    }
    // false -> false (e.g. re-applying the manifest a plan was created from) stays accepted.
    const fresh = `oneway-${RUN}`;
    kubectlOk(['apply', '-f', '-'], plan('oneway', { nodeNames: ['a'] }));
    kubectlOk([
      'patch',
      'mp',
      fresh,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { abort: false, release: false } }),
    ]);
  });

  it('defaults a partially written plan like zod too', () => {
    const spec = {
      nodeSelector: { matchLabels: { pool: 'blue' } },
      eviction: { gracePeriodSeconds: 0, retryBackoff: { maxSeconds: 60 } },
      podSelection: { force: true },
    };
    kubectlOk(['apply', '-f', '-'], plan('partial', spec));
    const live = JSON.parse(kubectlOk(['get', 'mp', `partial-${RUN}`, '-o', 'json'])) as { spec: unknown };
    assert.deepEqual(live.spec, parseSpec(spec));
  });

  it('stores a full status through the status subresource and shows the printer columns', () => {
    const name = `status-${RUN}`;
    kubectlOk(['apply', '-f', '-'], plan('status', { nodeNames: ['a', 'b'] }));
    const status: MaintenancePlanStatus = MaintenancePlanStatusSchema.parse({
      phase: 'Blocked',
      reason: 'DisruptionBudget',
      message: 'pod default/web-0 is protected by default/web',
      observedGeneration: 1,
      conditions: [
        {
          type: 'Blocked',
          status: 'True',
          observedGeneration: 1,
          lastTransitionTime: '2025-01-01T00:00:00Z',
          reason: 'DisruptionBudget',
          message: 'waiting for default/web',
        },
      ],
      workflow: { namespace: 'default', workflowId: 'plan-x', runId: 'r1', url: 'http://127.0.0.1:8233/x' },
      startedAt: '2025-01-01T00:00:00Z',
      deadline: '2025-01-01T01:00:00Z',
      estimatedCompletion: '2025-01-01T00:30:00Z',
      nodesTotal: 2,
      nodesDrained: 1,
      nodes: [
        { name: 'a', phase: 'Drained', podsTotal: 3, podsEvicted: 3 },
        {
          name: 'b',
          phase: 'Blocked',
          podsTotal: 4,
          podsEvicted: 2,
          blockedBy: [
            {
              pod: 'default/web-0',
              pdb: 'default/web',
              reason: 'DisruptionBudget',
              message: 'budget exhausted',
              since: '2025-01-01T00:10:00Z',
              attempts: 3,
            },
          ],
        },
      ],
      evictionProgress: {
        total: 7,
        evicted: 5,
        pending: 2,
        failed: 0,
        attempts: 9,
        tooManyRequests: 4,
        nextActionAt: '2025-01-01T00:11:00Z',
        lastError: 'Too Many Requests',
      },
    });
    kubectlOk([
      'patch',
      'mp',
      name,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status }),
    ]);
    const live = JSON.parse(kubectlOk(['get', 'mp', name, '-o', 'json'])) as { status: unknown };
    assert.deepEqual(live.status, status, 'part of the status was pruned or changed');

    const table = kubectlOk(['get', 'mp', name]);
    const [header, row] = table
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    assert.deepEqual(header, [
      'NAME',
      'PHASE',
      'REASON',
      'DRAINED',
      'NODES',
      'EVICTED',
      'PODS',
      'ETA',
      'AGE',
    ]);
    assert.deepEqual(row?.slice(0, 8), [
      name,
      'Blocked',
      'DisruptionBudget',
      '1',
      '2',
      '5',
      '7',
      '2025-01-01T00:30:00Z',
    ]);

    const wide = kubectlOk(['get', 'mp', name, '-o', 'wide'])
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    // -o wide adds the pods deleted at the deadline beside the pod counts, then cordon and workflow.
    assert.deepEqual(wide[0], [...header!.slice(0, 7), 'DELETED', 'ETA', 'AGE', 'CORDON', 'WORKFLOW']);
    assert.equal(wide[1]?.length, wide[0]!.length - 1, 'the Deleted cell is empty: no deletions here');
    assert.deepEqual(wide[1]?.slice(-2), ['PerNode', 'plan-x']);

    const dup = kubectl([
      'patch',
      'mp',
      name,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: { conditions: [status.conditions![0], status.conditions![0]] },
      }),
    ]);
    assert.notEqual(dup.code, 0, 'two conditions of one type were accepted');
    assert.match(dup.stderr, /status\.conditions\[1\]: Duplicate value/);
  });
});
