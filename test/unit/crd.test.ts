/**
 * The generated MaintenancePlan CRD: current with the zod schemas, complete, and structural.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { z } from 'zod';
import { LABEL_VALUE, NODE_NAME } from '../../src/api/formats.js';
import { MaintenancePlanSpecSchema, MaintenancePlanStatusSchema, parseSpec } from '../../src/api/plan.js';
import { MAX_DRAIN_TIMEOUT_SECONDS, MAX_PLAN_NODES, MAX_UNAVAILABLE_NODES } from '../../src/api/bounds.js';
import {
  applyDefaults,
  buildCrd,
  CRD_PATHS,
  DEADLINE_POLICY_RULES,
  POD_ORDER_SPEC_RULES,
  WINDOW_RULES,
  ROLLING_RULES,
  enumOfRule,
  formatRule,
  renderCrdYaml,
  toStructural,
  type JSONSchemaProps,
  type ValidationRule,
  PREVIEW_RULES,
  COHERENCE_RULES,
} from '../../scripts/gen-crd.js';
import { PREVIEW_MESSAGES } from '../../src/api/preflight.js';

/** What the test compares per field path, read from either side. */
interface FieldInfo {
  type: string;
  description: string | undefined;
  enum: unknown[] | undefined;
  default: unknown;
  required: boolean;
  minimum: number | undefined;
  maximum: number | undefined;
}

type AnyZod = z.ZodType & { _zod: { def: Record<string, unknown> & { type: string } } };

function child(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

/** Bound from zod, ignoring the implicit safe-integer range of `.int()`. */
function bound(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) !== Number.MAX_SAFE_INTEGER
    ? value
    : undefined;
}

/** Walks a zod schema directly (not through its JSON Schema), recording every field path. */
function walkZod(schema: AnyZod, path: string, out: Map<string, FieldInfo>, required = true): void {
  let s = schema;
  let description: string | undefined = s.description;
  let dflt: unknown;
  let isRequired = required;
  for (;;) {
    const def = s._zod.def;
    if (def.type === 'optional') {
      isRequired = false;
    } else if (def.type === 'default') {
      isRequired = false;
      dflt = def.defaultValue;
    } else {
      break;
    }
    s = def.innerType as AnyZod;
    description ??= s.description;
  }
  const def = s._zod.def;
  const info: FieldInfo = {
    type: def.type,
    description,
    enum: undefined,
    default: dflt,
    required: isRequired,
    minimum: undefined,
    maximum: undefined,
  };
  out.set(path, info);
  switch (def.type) {
    case 'object': {
      const shape = (s as unknown as z.ZodObject).shape as Record<string, AnyZod>;
      for (const [name, sub] of Object.entries(shape)) walkZod(sub, child(path, name), out);
      break;
    }
    case 'array': {
      for (const check of (def.checks as Array<{ _zod: { def: Record<string, unknown> } }> | undefined) ??
        []) {
        const c = check._zod.def;
        if (c.check === 'min_length') info.minimum = bound(c.minimum);
        if (c.check === 'max_length') info.maximum = bound(c.maximum);
      }
      walkZod(def.element as AnyZod, `${path}[]`, out);
      break;
    }
    case 'record':
      info.type = 'object';
      walkZod(def.valueType as AnyZod, `${path}{}`, out);
      break;
    case 'enum':
      info.type = 'string';
      info.enum = (s as unknown as z.ZodEnum).options;
      break;
    case 'number': {
      const n = s as unknown as z.ZodNumber;
      info.type = n.isInt ? 'integer' : 'number';
      info.minimum = bound(n.minValue);
      info.maximum = bound(n.maxValue);
      break;
    }
    case 'string': {
      const str = s as unknown as z.ZodString;
      info.minimum = bound(str.minLength);
      info.maximum = bound(str.maxLength);
      break;
    }
    case 'boolean':
      break;
    default:
      assert.fail(`${path}: zod type ${def.type} not handled by this test`);
  }
}

/** Walks the CRD schema, recording every field path in the same notation as {@link walkZod}. */
function walkCrd(node: JSONSchemaProps, path: string, out: Map<string, FieldInfo>, required = true): void {
  const lengthLike = node.type === 'string' ? 'Length' : node.type === 'array' ? 'Items' : '';
  const rec = node as Record<string, unknown>;
  const rules = node['x-kubernetes-validations'] ?? [];
  // In the spec, enums and required fields are CEL rules (gen-crd.ts: enumRule, requiredRule).
  const celEnum = rules.map(enumOfRule).find((e) => e !== undefined);
  const celRequired = rules.filter((r) => /^has\(self\.\w+\)$/.test(r.rule)).map((r) => r.rule.slice(9, -1));
  out.set(path, {
    type: node.type ?? '?',
    description: node.description,
    enum: node.enum ?? celEnum,
    default: node.default,
    required,
    minimum: lengthLike ? (rec[`min${lengthLike}`] as number | undefined) : node.minimum,
    maximum: lengthLike ? (rec[`max${lengthLike}`] as number | undefined) : node.maximum,
  });
  for (const [name, sub] of Object.entries(node.properties ?? {})) {
    walkCrd(sub, child(path, name), out, (node.required ?? celRequired).includes(name));
  }
  if (node.items) walkCrd(node.items, `${path}[]`, out);
  if (node.additionalProperties) walkCrd(node.additionalProperties, `${path}{}`, out);
}

const crd = buildCrd();
const version = crd.spec.versions[0]!;
const root = version.schema.openAPIV3Schema;
const specSchema = root.properties!.spec!;
const statusSchema = root.properties!.status!;

function fields(): { zod: Map<string, FieldInfo>; crd: Map<string, FieldInfo> } {
  const zod = new Map<string, FieldInfo>();
  walkZod(MaintenancePlanSpecSchema as unknown as AnyZod, 'spec', zod);
  walkZod(MaintenancePlanStatusSchema as unknown as AnyZod, 'status', zod);
  const fromCrd = new Map<string, FieldInfo>();
  walkCrd(specSchema, 'spec', fromCrd);
  walkCrd(statusSchema, 'status', fromCrd);
  return { zod, crd: fromCrd };
}

describe('CRD file', () => {
  for (const path of CRD_PATHS) {
    it(`the committed YAML is exactly what \`npm run gen:crd\` produces now: ${relative(process.cwd(), path)}`, async () => {
      const committed = readFileSync(path, 'utf8');
      assert.equal(committed, await renderCrdYaml(), `${path} is stale: run \`npm run gen:crd\``);
      assert.deepEqual(parse(committed), buildCrd());
      assert.match(committed, /^# GENERATED .*DO NOT EDIT/);
    });
  }

  it('names the resource from the constants of src/api/plan.ts', () => {
    assert.equal(crd.metadata.name, 'maintenanceplans.maintenance.drainflow.dev');
    assert.equal(crd.spec.scope, 'Cluster');
    assert.deepEqual(crd.spec.names, {
      kind: 'MaintenancePlan',
      listKind: 'MaintenancePlanList',
      plural: 'maintenanceplans',
      singular: 'maintenanceplan',
      shortNames: ['mp'],
    });
    assert.equal(crd.spec.versions.length, 1);
    assert.equal(version.name, 'v1alpha1');
    assert.ok(version.served && version.storage);
    assert.deepEqual(version.subresources, { status: {} });
    // spec is required by a CEL rule, not `required` (see buildCrd).
    assert.equal(root.required, undefined);
    assert.deepEqual(root['x-kubernetes-validations']?.[0]?.rule, 'has(self.spec)');
  });

  it('has printer columns that point at declared fields of the right type', () => {
    assert.deepEqual(
      version.additionalPrinterColumns.map((c) => [c.name, c.type, c.jsonPath]),
      [
        ['Phase', 'string', '.status.phase'],
        ['Reason', 'string', '.status.reason'],
        ['Drained', 'integer', '.status.nodesDrained'],
        ['Nodes', 'integer', '.status.nodesTotal'],
        ['Evicted', 'integer', '.status.evictionProgress.evicted'],
        ['Pods', 'integer', '.status.evictionProgress.total'],
        ['Deleted', 'integer', '.status.evictionProgress.deleted'],
        ['ETA', 'string', '.status.estimatedCompletion'],
        ['Age', 'date', '.metadata.creationTimestamp'],
        ['Cordon', 'string', '.spec.cordon'],
        ['Workflow', 'string', '.status.workflow.workflowId'],
      ],
    );
    assert.deepEqual(
      version.additionalPrinterColumns.filter((c) => c.priority === 1).map((c) => c.name),
      ['Deleted', 'Cordon', 'Workflow'],
      'only in -o wide',
    );
    const { crd: declared } = fields();
    for (const col of version.additionalPrinterColumns) {
      if (col.jsonPath.startsWith('.metadata.')) continue;
      const field = declared.get(col.jsonPath.slice(1));
      assert.ok(field, `${col.name}: ${col.jsonPath} is not declared`);
      assert.equal(field.type, col.type, `${col.name}: type of ${col.jsonPath}`);
    }
  });

  it('carries the CEL rules and list types', () => {
    assert.deepEqual(
      specSchema['x-kubernetes-validations']
        ?.filter(
          (v) =>
            ![
              ...DEADLINE_POLICY_RULES,
              ...POD_ORDER_SPEC_RULES,
              ...WINDOW_RULES,
              ...ROLLING_RULES,
              ...PREVIEW_RULES,
              ...COHERENCE_RULES,
            ].some((d) => d.rule === v.rule),
        )
        .map((v) => v.message),
      [
        'spec.nodeNames or spec.nodeSelector is required: a non-empty list of node names, or a label selector of nodes',
        'must not be empty: an empty selector selects every node of the cluster (give matchLabels or matchExpressions)',
        'spec.nodeNames and spec.nodeSelector cannot be added or removed after the plan is created',
      ],
    );
    for (const f of ['eviction', 'podSelection', 'uncordon', 'cordon']) {
      assert.equal(
        specSchema.properties![f]!['x-kubernetes-validations']?.at(-1)?.rule,
        'self == oldSelf',
        `spec.${f} immutable`,
      );
    }
    // The deadline may be given more time (src/drain/plan-extend.ts), never less.
    assert.equal(
      specSchema.properties!.drainTimeoutSeconds!['x-kubernetes-validations']?.at(-1)?.rule,
      'self >= oldSelf',
      'spec.drainTimeoutSeconds can only be raised',
    );
    const nodeNames = specSchema.properties!.nodeNames!;
    assert.equal(nodeNames['x-kubernetes-list-type'], 'set', 'each node name once');
    // A set compares equal in any order in CEL; the order is the plan's, so it is compared joined.
    assert.equal(nodeNames['x-kubernetes-validations']?.[0]?.rule, "self.join(',') == oldSelf.join(',')");
    assert.deepEqual(nodeNames.items!['x-kubernetes-validations'], [formatRule(NODE_NAME)]);
    assert.equal(nodeNames.items!.maxLength, 253);
    const backoff = specSchema.properties!.eviction!.properties!.retryBackoff!;
    assert.match(backoff['x-kubernetes-validations']![0]!.rule, /self\.initialSeconds <= self\.maxSeconds/);
    const conditions = statusSchema.properties!.conditions!;
    assert.equal(conditions['x-kubernetes-list-type'], 'map');
    assert.deepEqual(conditions['x-kubernetes-list-map-keys'], ['type']);
  });

  it('both selectors check their label keys and values and the values of each operator', () => {
    for (const [name, sel] of [
      ['nodeSelector', specSchema.properties!.nodeSelector!],
      ['podSelector', specSchema.properties!.podSelection!.properties!.podSelector!],
    ] as const) {
      const labels = sel.properties!.matchLabels!;
      assert.equal(labels.maxProperties, 64, `${name}: bounded for the CEL cost estimate`);
      assert.match(labels['x-kubernetes-validations']![0]!.rule, /^self\.all\(k, k\.matches\(/);
      assert.deepEqual(labels.additionalProperties!['x-kubernetes-validations'], [formatRule(LABEL_VALUE)]);
      const req = sel.properties!.matchExpressions!.items!;
      assert.deepEqual(
        req['x-kubernetes-validations']!.map((r) => [r.fieldPath, r.reason]),
        [
          ['.key', 'FieldValueRequired'],
          ['.operator', 'FieldValueRequired'],
          ['.values', 'FieldValueRequired'],
          ['.values', 'FieldValueForbidden'],
        ],
      );
      assert.deepEqual(enumOfRule(req.properties!.operator!['x-kubernetes-validations']![0]!), [
        'In',
        'NotIn',
        'Exists',
        'DoesNotExist',
      ]);
    }
  });

  it('nothing in the spec makes the API server skip the CEL rules but types and size bounds', () => {
    // enum, pattern and required violations would (customresource strategy hasBlockingErr); they are
    // CEL rules instead. Every rule has a reason, so no message reads `Invalid value: "string"`.
    const rules: Array<[string, ValidationRule]> = [];
    const walk = (node: JSONSchemaProps, path: string): void => {
      if (path.startsWith('spec')) {
        assert.equal(node.enum, undefined, `${path}: enum`);
        assert.equal(node.pattern, undefined, `${path}: pattern`);
        assert.equal(node.required, undefined, `${path}: required`);
      }
      for (const r of node['x-kubernetes-validations'] ?? []) rules.push([path, r]);
      for (const [n, sub] of Object.entries(node.properties ?? {})) walk(sub, child(path, n));
      if (node.items) walk(node.items, `${path}[]`);
      if (node.additionalProperties) walk(node.additionalProperties, `${path}{}`);
    };
    walk(root, '');
    assert.ok(rules.length > 20, `${rules.length} rules`);
    for (const [path, r] of rules) {
      assert.ok(
        r.reason === 'FieldValueForbidden' || r.reason === 'FieldValueRequired',
        `${path}: rule ${r.rule} has reason ${r.reason}`,
      );
      // The API server estimates the cost of string() of a number in a messageExpression as far
      // above its budget and refuses the whole CRD ("estimated messageExpression cost exceeds
      // budget by factor of more than 100x"): say such values in the static message instead.
      assert.doesNotMatch(r.messageExpression ?? '', /\bstring\(/, `${path}: messageExpression of ${r.rule}`);
    }
  });
});

/** Job hooks that can and cannot run (the CRD refuses the same: test/e2e/crd.test.ts). */
function jobHookCases(): Array<[string, unknown, RegExp | undefined]> {
  const container = { name: 'patch', image: 'busybox' };
  const hook = (namespace: string, template: unknown) => ({
    nodeNames: ['a'],
    hooks: { afterDrain: { job: { namespace, template } } },
  });
  const pod = (containers: unknown) => ({ spec: { template: { spec: { containers } } } });
  const at = 'hooks\\.afterDrain\\.job';
  return [
    [
      'a Job hook with a container and fields drainflow does not read',
      hook('maint-1', {
        metadata: { labels: { a: 'b' } },
        spec: { backoffLimit: 2, template: { spec: { containers: [{ ...container, command: ['x'] }] } } },
      }),
      undefined,
    ],
    [
      'a Job hook namespace that is not a DNS label',
      hook('Bad_NS', pod([container])),
      new RegExp(`${at}\\.namespace: must be a namespace name`),
    ],
    [
      'a Job hook namespace of 64 characters',
      hook('a'.repeat(64), pod([container])),
      new RegExp(`${at}\\.namespace`),
    ],
    [
      'a Job template without a spec',
      hook('maint', { spec: {} }),
      new RegExp(`${at}\\.template: must hold a pod template with at least one container`),
    ],
    [
      'a Job template with no containers',
      hook('maint', pod([])),
      new RegExp(`${at}\\.template: must hold a pod template with at least one container`),
    ],
    [
      'a Job template container without an image',
      hook('maint', pod([{ name: 'patch' }])),
      new RegExp(
        `${at}\\.template: every container of spec\\.template\\.spec\\.containers needs a name and an image`,
      ),
    ],
    [
      'a Job template container with an empty image',
      hook('maint', pod([{ name: 'patch', image: '' }])),
      new RegExp(`${at}\\.template\\.spec\\.template\\.spec\\.containers\\.0\\.image`),
    ],
  ];
}

describe('spec formats: zod refuses what the CRD refuses', () => {
  const long = (n: number) => 'a'.repeat(n);
  const nodes = (n: number) => Array.from({ length: n }, (_, i) => `n${i}`);
  const cases: Array<[string, unknown, RegExp | undefined]> = [
    ['a dotted node name', { nodeNames: ['n1.example.com', 'n-2'] }, undefined],
    ['a node name of 253 characters', { nodeNames: [long(253)] }, undefined],
    ['a node name of 254 characters', { nodeNames: [long(254)] }, /nodeNames\.0/],
    ['an upper-case node name', { nodeNames: ['Node_1'] }, /nodeNames\.0: must be a node name/],
    ['a node name ending in -', { nodeNames: ['n1-'] }, /nodeNames\.0: must be a node name/],
    ['an empty node name', { nodeNames: [''] }, /nodeNames\.0: must be a node name/],
    ['a node named twice', { nodeNames: ['n1', 'n1'] }, /nodeNames: must not name a node twice/],
    // The size bounds (MAX_PLAN_NODES, MAX_UNAVAILABLE_NODES): the CRD's maxItems and maximum.
    ['5000 node names', { nodeNames: nodes(5000) }, undefined],
    [
      '5001 node names',
      { nodeNames: nodes(5001) },
      /^nodeNames: Too big: expected array to have <=5000 items/,
    ],
    ['maxUnavailableNodes 500', { nodeNames: ['a'], maxUnavailableNodes: 500 }, undefined],
    [
      'maxUnavailableNodes 501',
      { nodeNames: ['a'], maxUnavailableNodes: 501 },
      /^maxUnavailableNodes: Too big: expected number to be <=500/,
    ],
    [
      'prefixed and empty label values',
      { nodeSelector: { matchLabels: { 'example.com/pool': '', k: 'v-1.2_3' } } },
      undefined,
    ],
    ['a label key with a space', { nodeSelector: { matchLabels: { 'a b': 'x' } } }, /must be a label key/],
    ['a label key with two /', { nodeSelector: { matchLabels: { 'x/y/z': 'x' } } }, /must be a label key/],
    [
      'a label key prefix of 254 characters',
      { nodeSelector: { matchLabels: { [`${long(254)}/x`]: 'x' } } },
      /must be a label key/,
    ],
    [
      'a label key name of 64 characters',
      { nodeSelector: { matchLabels: { [long(64)]: 'x' } } },
      /label key/,
    ],
    [
      'a bad label value',
      { nodeSelector: { matchLabels: { k: 'bad value!' } } },
      /matchLabels\.k: must be a label value/,
    ],
    [
      'In without values',
      { nodeSelector: { matchExpressions: [{ key: 'k', operator: 'In' }] } },
      /matchExpressions\.0\.values: must not be empty for operator In/,
    ],
    [
      'Exists with values',
      {
        nodeNames: ['a'],
        podSelection: {
          podSelector: { matchExpressions: [{ key: 'k', operator: 'Exists', values: ['x'] }] },
        },
      },
      /matchExpressions\.0\.values: must be empty for operator Exists/,
    ],
    [
      'NotIn with values and DoesNotExist without',
      {
        nodeSelector: {
          matchExpressions: [
            { key: 'k', operator: 'NotIn', values: ['x', ''] },
            { key: 'example.com/j', operator: 'DoesNotExist' },
          ],
        },
      },
      undefined,
    ],
    // spec.hooks.*.job: a namespace name, and a Job template with a container that can run.
    ...jobHookCases(),
  ];
  for (const [name, spec, error] of cases) {
    it(`${error ? 'refuses' : 'accepts'} ${name}`, () => {
      const r = MaintenancePlanSpecSchema.safeParse(spec);
      if (!error) {
        assert.ok(r.success, r.error?.message);
        return;
      }
      assert.ok(!r.success, 'accepted');
      const text = r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n');
      assert.match(text, error);
    });
  }
});

describe("CRD bounds of a plan's size", () => {
  it(`nodeNames has at most ${MAX_PLAN_NODES} items and maxUnavailableNodes at most ${MAX_UNAVAILABLE_NODES}, both said in the description`, () => {
    assert.deepEqual([MAX_PLAN_NODES, MAX_UNAVAILABLE_NODES], [5000, 500]);
    const names = specSchema.properties!.nodeNames!;
    assert.equal(names.maxItems, MAX_PLAN_NODES);
    assert.match(names.description ?? '', /at most 5000/);
    const slots = specSchema.properties!.maxUnavailableNodes!;
    assert.deepEqual([slots.minimum, slots.maximum], [1, MAX_UNAVAILABLE_NODES]);
    assert.match(slots.description ?? '', /at most 500\b/);
  });

  it(`drainTimeoutSeconds and nodeDrainTimeoutSeconds are at most ${MAX_DRAIN_TIMEOUT_SECONDS} s (365 days), in the CRD and in zod`, () => {
    assert.equal(MAX_DRAIN_TIMEOUT_SECONDS, 31_536_000);
    for (const field of ['drainTimeoutSeconds', 'nodeDrainTimeoutSeconds']) {
      const prop = specSchema.properties![field]!;
      assert.deepEqual([prop.minimum, prop.maximum], [1, MAX_DRAIN_TIMEOUT_SECONDS], field);
      const r = MaintenancePlanSpecSchema.safeParse({
        nodeNames: ['a'],
        [field]: MAX_DRAIN_TIMEOUT_SECONDS + 1,
      });
      assert.equal(r.success, false, `${field} above the bound is refused`);
    }
    assert.match(specSchema.properties!.drainTimeoutSeconds!.description ?? '', /at most 31536000, 365 days/);
  });
});

describe('CRD rules of the deadline policy', () => {
  it('spec carries the nodeDrainTimeoutSeconds rule; the three fields are immutable', () => {
    const rules = specSchema['x-kubernetes-validations'] ?? [];
    const rule = rules.find((v) => /nodeDrainTimeoutSeconds <= self\.drainTimeoutSeconds/.test(v.rule));
    assert.ok(rule, 'the nodeDrainTimeoutSeconds <= drainTimeoutSeconds rule');
    assert.equal(rule.fieldPath, '.nodeDrainTimeoutSeconds');
    for (const f of ['onDeadline', 'nodeDrainTimeoutSeconds', 'deadlineWarningSeconds'])
      assert.ok(
        specSchema.properties![f]!['x-kubernetes-validations']?.some((v) => v.rule === 'self == oldSelf'),
        `spec.${f} immutable`,
      );
    const onDeadline = specSchema.properties!.onDeadline!['x-kubernetes-validations'] ?? [];
    assert.deepEqual(
      onDeadline.map(enumOfRule).find((e) => e !== undefined),
      ['Stop', 'SkipNode', 'DeletePods'],
    );
    assert.equal(specSchema.properties!.onDeadline!.default, 'Stop');
    assert.equal(specSchema.properties!.deadlineWarningSeconds!.default, 300);
    assert.equal(specSchema.properties!.nodeDrainTimeoutSeconds!.minimum, 1);
    assert.ok(statusSchema.properties!.deadlineAction, 'status.deadlineAction declared');
  });
  it('hooks cannot be added or removed after creation either', () => {
    const rule = (specSchema['x-kubernetes-validations'] ?? []).find(
      (v) => v.rule === 'has(self.hooks) == has(oldSelf.hooks)',
    );
    assert.ok(rule, 'the add/remove rule');
    assert.equal(rule.fieldPath, '.hooks');
    assert.match(rule.message ?? '', /^cannot change after the plan is created/);
  });
  it('nodeDrainTimeoutSeconds cannot be added or removed after creation either', () => {
    const rule = (specSchema['x-kubernetes-validations'] ?? []).find(
      (v) => v.rule === 'has(self.nodeDrainTimeoutSeconds) == has(oldSelf.nodeDrainTimeoutSeconds)',
    );
    assert.ok(rule, 'the add/remove rule');
    assert.equal(rule.fieldPath, '.nodeDrainTimeoutSeconds');
    assert.match(rule.message ?? '', /^cannot change after the plan is created/);
  });
});

describe('CRD rules of a Preflight plan', () => {
  it('refuses paused with mode Preflight, in the CRD and in zod, with the same message', () => {
    const rule = (specSchema['x-kubernetes-validations'] ?? []).find((v) => v.fieldPath === '.paused');
    assert.ok(rule, 'the paused rule');
    assert.equal(rule.message, PREVIEW_MESSAGES.paused);
    const r = MaintenancePlanSpecSchema.safeParse({ nodeNames: ['a'], mode: 'Preflight', paused: true });
    assert.ok(!r.success, 'zod accepted a paused preview');
    assert.deepEqual(
      r.error.issues.map((i) => [i.path.join('.'), i.message]),
      [['paused', PREVIEW_MESSAGES.paused]],
    );
    for (const ok of [
      { nodeNames: ['a'], mode: 'Preflight' },
      { nodeNames: ['a'], mode: 'Preflight', paused: false },
      { nodeNames: ['a'], paused: true },
    ])
      assert.ok(MaintenancePlanSpecSchema.safeParse(ok).success, JSON.stringify(ok));
  });
});

describe('CRD schema matches the zod schemas', () => {
  const { zod, crd: fromCrd } = fields();

  it('declares every zod field of spec and status, and nothing else', () => {
    const zodPaths = [...zod.keys()].sort();
    const crdPaths = [...fromCrd.keys()].sort();
    assert.deepEqual(
      crdPaths.filter((p) => !zod.has(p)),
      [],
      'in the CRD but not in zod',
    );
    assert.deepEqual(
      zodPaths.filter((p) => !fromCrd.has(p)),
      [],
      'in zod but not in the CRD (Kubernetes would prune them)',
    );
    assert.ok(zod.has('spec.eviction.retryBackoff.maxSeconds') && zod.has('status.nodes[].blockedBy[].pod'));
  });

  for (const [path, z] of zod) {
    it(`${path}: type, description, required, enum, bounds and default agree`, () => {
      const k = fromCrd.get(path);
      assert.ok(k, `${path} missing from the CRD`);
      assert.equal(k.type, z.type, 'type');
      assert.equal(k.description, z.description, 'description');
      assert.equal(k.required, z.required, 'required');
      assert.deepEqual(k.enum, z.enum, 'enum');
      assert.equal(k.minimum, z.minimum, 'minimum');
      assert.equal(k.maximum, z.maximum, 'maximum');
      if (z.type === 'object' && z.default !== undefined) {
        // Object defaults are {} in the CRD and filled in by their fields' defaults (see gen-crd.ts).
        assert.deepEqual(k.default, {}, 'object default');
        const node = path
          .split('.')
          .slice(1)
          .reduce((n, name) => n.properties![name]!, specSchema);
        assert.deepEqual(applyDefaults(node, {}), z.default, "fields' defaults build zod's default");
      } else {
        assert.deepEqual(k.default, z.default, 'default');
      }
    });
  }

  it('every property has a description (kubectl explain)', () => {
    for (const [path, info] of fromCrd) {
      if (path.endsWith('[]') || path.endsWith('{}')) continue;
      assert.ok(info.description, `${path} has no description`);
    }
  });

  const specs: Array<[string, unknown]> = [
    ['minimal', { nodeNames: ['a'] }],
    ['selector', { nodeSelector: { matchLabels: { pool: 'x' } } }],
    ['partial eviction', { nodeNames: ['a'], eviction: { retryBackoff: { maxSeconds: 60 } } }],
    [
      'partial eviction 2',
      { nodeNames: ['a'], eviction: { gracePeriodSeconds: 0 }, podSelection: { force: true } },
    ],
    ['all set', { nodeNames: ['a'], maxUnavailableNodes: 2, paused: true, uncordon: 'Never' }],
  ];
  for (const [name, input] of specs) {
    it(`Kubernetes defaulting equals zod's parse (${name})`, () => {
      assert.deepEqual(applyDefaults(specSchema, input), parseSpec(input));
    });
  }
});

/** Keys Kubernetes accepts in a JSONSchemaProps (apiextensions/v1), minus the forbidden ones. */
const ALLOWED_KEYS = new Set([
  'description',
  'type',
  'format',
  'title',
  'default',
  'enum',
  'nullable',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'multipleOf',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'properties',
  'additionalProperties',
  'example',
  'externalDocs',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);

/** Keys that may not appear inside anyOf/oneOf/allOf/not (structural schema rule 3). */
const NOT_IN_JUNCTORS = ['type', 'description', 'default', 'additionalProperties', 'nullable', 'title'];

function checkStructural(node: JSONSchemaProps, path: string, inJunctor: boolean, problems: string[]): void {
  const rec = node as Record<string, unknown>;
  for (const key of Object.keys(rec)) {
    if (!ALLOWED_KEYS.has(key)) problems.push(`${path}: keyword ${key} is not allowed`);
  }
  if (inJunctor) {
    for (const key of NOT_IN_JUNCTORS) if (key in rec) problems.push(`${path}: ${key} inside a junctor`);
  } else if (
    !node.type &&
    !node['x-kubernetes-int-or-string'] &&
    !node['x-kubernetes-preserve-unknown-fields']
  ) {
    problems.push(`${path}: no type`);
  }
  if ('additionalProperties' in rec) {
    if (typeof rec.additionalProperties !== 'object')
      problems.push(`${path}: additionalProperties must be a schema`);
    if (node.properties) problems.push(`${path}: properties and additionalProperties together`);
  }
  if ((rec.uniqueItems as boolean | undefined) === true) problems.push(`${path}: uniqueItems: true`);
  if (node.type === 'array' && !node.items) problems.push(`${path}: array without items`);
  if (node.type !== 'object' && (node.properties || node.additionalProperties)) {
    problems.push(`${path}: properties on a non-object`);
  }
  for (const name of node.required ?? []) {
    if (!node.properties?.[name]) problems.push(`${path}: required ${name} is not a property`);
  }
  if (node['x-kubernetes-list-type'] === 'map') {
    const item = node.items;
    if (item?.type !== 'object') problems.push(`${path}: list-type map needs object items`);
    for (const key of node['x-kubernetes-list-map-keys'] ?? []) {
      const prop = item?.properties?.[key];
      if (!prop) problems.push(`${path}: list-map key ${key} is not a property`);
      else if (!item?.required?.includes(key) && prop.default === undefined) {
        problems.push(`${path}: list-map key ${key} must be required or defaulted`);
      }
    }
    if (!node['x-kubernetes-list-map-keys']?.length) problems.push(`${path}: list-type map without keys`);
  }
  if (node.default !== undefined) {
    const filled = node.type === 'object' ? applyDefaults(node, node.default) : node.default;
    for (const p of validate(node, filled, `${path} default`)) problems.push(p);
  }
  for (const [name, sub] of Object.entries(node.properties ?? {}))
    checkStructural(sub, child(path, name), false, problems);
  if (node.items) checkStructural(node.items, `${path}[]`, false, problems);
  if (typeof node.additionalProperties === 'object') {
    checkStructural(node.additionalProperties, `${path}{}`, false, problems);
  }
  for (const junctor of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = rec[junctor] as JSONSchemaProps[] | undefined;
    list?.forEach((sub, i) => checkStructural(sub, `${path}.${junctor}[${i}]`, true, problems));
  }
  if (rec.not) checkStructural(rec.not as JSONSchemaProps, `${path}.not`, true, problems);
}

/** A small OpenAPI validator, enough to check that defaults are valid values of their schema. */
function validate(node: JSONSchemaProps, value: unknown, path: string): string[] {
  const problems: string[] = [];
  const t = node.type;
  const actual = Array.isArray(value)
    ? 'array'
    : Number.isInteger(value)
      ? 'integer'
      : value === null
        ? 'null'
        : typeof value;
  if (t && !(t === actual || (t === 'number' && actual === 'integer'))) {
    return [`${path}: ${JSON.stringify(value)} is not ${t}`];
  }
  if (node.enum && !node.enum.includes(value)) problems.push(`${path}: ${JSON.stringify(value)} not in enum`);
  if (typeof value === 'number') {
    if (node.minimum !== undefined && value < node.minimum) problems.push(`${path}: below minimum`);
    if (node.maximum !== undefined && value > node.maximum) problems.push(`${path}: above maximum`);
  }
  if (typeof value === 'string') {
    if (node.minLength !== undefined && value.length < node.minLength) problems.push(`${path}: too short`);
    if (node.maxLength !== undefined && value.length > node.maxLength) problems.push(`${path}: too long`);
  }
  if (Array.isArray(value)) {
    if (node.maxItems !== undefined && value.length > node.maxItems) problems.push(`${path}: too many items`);
    value.forEach((v, i) => problems.push(...validate(node.items!, v, `${path}[${i}]`)));
  }
  if (actual === 'object') {
    const obj = value as Record<string, unknown>;
    for (const name of node.required ?? []) if (!(name in obj)) problems.push(`${path}.${name}: required`);
    for (const [name, v] of Object.entries(obj)) {
      const sub = node.properties?.[name] ?? node.additionalProperties;
      if (!sub) problems.push(`${path}.${name}: not declared`);
      else problems.push(...validate(sub, v, `${path}.${name}`));
    }
  }
  return problems;
}

describe('CRD schema is structural', () => {
  it('every node is typed and uses only what Kubernetes allows', () => {
    const problems: string[] = [];
    checkStructural(root, '', false, problems);
    assert.deepEqual(problems, []);
  });

  it('has no JSON-Schema-only keywords anywhere', () => {
    const text = JSON.stringify(crd);
    for (const banned of ['"$schema"', '"$ref"', '"definitions"', '"$defs"', '"propertyNames"', '"const"']) {
      assert.ok(!text.includes(banned), `${banned} found`);
    }
    assert.ok(!text.includes('"additionalProperties":false'), 'additionalProperties: false found');
    assert.ok(!text.includes(String(Number.MAX_SAFE_INTEGER)), "zod's safe-integer bound leaked");
  });

  it('metadata is left to the API server', () => {
    assert.deepEqual(root.properties!.metadata, { type: 'object' });
  });

  it('the structural checker itself catches violations', () => {
    const problems: string[] = [];
    checkStructural(
      {
        type: 'object',
        properties: { a: { description: 'x' } as JSONSchemaProps, b: { type: 'integer', default: 'x' } },
        additionalProperties: { type: 'string' },
        anyOf: [{ type: 'string' } as JSONSchemaProps],
      } as JSONSchemaProps,
      '',
      false,
      problems,
    );
    assert.deepEqual(problems, [
      ': properties and additionalProperties together',
      'a: no type',
      'b default: "x" is not integer',
      '.anyOf[0]: type inside a junctor',
    ]);
  });
});

describe('generator refuses what a structural schema cannot express', () => {
  const convert = (schema: z.ZodType) =>
    toStructural(
      z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' }) as Record<string, unknown>,
      'x',
    );
  const cases: Array<[string, z.ZodType, RegExp]> = [
    [
      'a union',
      z.object({ a: z.union([z.string(), z.number()]).describe('a') }),
      /x\.a: JSON Schema keyword "anyOf"/,
    ],
    ['a missing description', z.object({ a: z.string() }), /x\.a: property has no \.describe\(\) text/],
    [
      "an object default its fields' defaults do not rebuild",
      z.object({
        o: z
          .object({ n: z.number().int().default(1).describe('n') })
          .default({ n: 2 })
          .describe('o'),
      }),
      /x\.o: zod default \{"n":2\} differs from its fields' defaults \{"n":1\}/,
    ],
    ['a free-form object', z.object({ a: z.looseObject({}).describe('a') }), /x\.a: free-form objects/],
    [
      'a pattern that is not a named format',
      z.object({ a: z.string().regex(/^x+$/).describe('a') }),
      /x\.a: pattern \^x\+\$ is not one of STRING_FORMATS/,
    ],
  ];
  for (const [name, schema, message] of cases) {
    it(name, () => assert.throws(() => convert(schema), message));
  }
});

describe('CRD rules of the pod policy', () => {
  it('spec.podOrder: an int32 order, at most 16 entries, each naming a selector, fixed at creation', () => {
    const podOrder = specSchema.properties!.podOrder!;
    assert.equal(podOrder.maxItems, 16);
    assert.ok(podOrder['x-kubernetes-validations']?.some((v) => v.rule === 'self == oldSelf'));
    assert.ok(
      (specSchema['x-kubernetes-validations'] ?? []).some(
        (v) => v.rule === 'has(self.podOrder) == has(oldSelf.podOrder)' && v.fieldPath === '.podOrder',
      ),
      'adding or removing podOrder is refused too',
    );
    const entry = podOrder.items as typeof podOrder;
    // Required fields are CEL rules with a readable message (see the generator).
    assert.ok(entry['x-kubernetes-validations']?.some((v) => v.message === 'order is required'));
    assert.equal(entry.properties!.order!.minimum, -2147483648);
    assert.equal(entry.properties!.order!.maximum, 2147483647);
    assert.ok(
      entry['x-kubernetes-validations']?.some(
        (v) => v.rule === 'has(self.podSelector) || has(self.namespaceSelector)',
      ),
    );
    for (const sel of ['podSelector', 'namespaceSelector']) {
      const ml = entry.properties![sel]!.properties!.matchLabels!;
      assert.equal(ml.maxProperties, 8, `${sel}.matchLabels bounded`);
      assert.ok(ml['x-kubernetes-validations']?.length, `${sel}.matchLabels keys checked`);
    }
    const eviction = specSchema.properties!.eviction!.properties!.skipWaitForDeleteTimeoutSeconds!;
    assert.deepEqual([eviction.minimum, eviction.maximum], [1, 86400]);
    const sel = specSchema.properties!.podSelection!.properties!.ignoreDoNotDisrupt!;
    assert.equal(sel.type, 'boolean');
    const node = statusSchema.properties!.nodes!.items as typeof podOrder;
    assert.ok(
      node.properties!.currentOrder && node.properties!.skipped,
      'status.nodes[] currentOrder, skipped',
    );
  });
});
