/**
 * `drainflow preflight`'s pure parts: kubectl-style label selectors, the spec the flags describe
 * (validated by the plan's schema), and the text rendering of a report (also used by
 * `drainflow status` for a Previewed plan).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PREFLIGHT_EXIT_BLOCKERS,
  PREFLIGHT_EXIT_INCOMPLETE,
  parseLabelSelector,
  preflightExitCode,
  specFromFlags,
} from '../../src/cli/preflight.js';
import { renderPreflight } from '../../src/cli/render-preflight.js';
import { renderPlan } from '../../src/cli/render.js';
import { buildPreflightNode, failedPreflightNode, summarizePreflight } from '../../src/drain/preflight.js';
import type { PodInfo } from '../../src/drain/pods.js';

describe('parseLabelSelector', () => {
  const rows: Array<[string, unknown]> = [
    ['a=b', { matchLabels: { a: 'b' } }],
    ['a==b,c=', { matchLabels: { a: 'b', c: '' } }],
    ['a!=b', { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['b'] }] }],
    [
      'env in (prod, dev),x',
      {
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['prod', 'dev'] },
          { key: 'x', operator: 'Exists' },
        ],
      },
    ],
    [
      'k notin (a),!gone',
      {
        matchExpressions: [
          { key: 'k', operator: 'NotIn', values: ['a'] },
          { key: 'gone', operator: 'DoesNotExist' },
        ],
      },
    ],
    ['example.com/pool=blue', { matchLabels: { 'example.com/pool': 'blue' } }],
  ];
  for (const [text, want] of rows)
    it(text, () => assert.deepEqual(parseLabelSelector(text, '--selector'), want));

  for (const [text, message] of [
    ['a=b,', /--selector: has an empty requirement .* in "a=b,"/],
    ['a in ()', /--selector: "a in \(\)" needs at least one value/],
    ['a=b=c', /--selector: "b=c" is not a label value/],
    ['Team/x=y', /--selector: "Team\/x" is not a label key/],
  ] as const)
    it(`refuses ${text}`, () => assert.throws(() => parseLabelSelector(text, '--selector'), message));
});

describe('specFromFlags', () => {
  it('--nodes and the podSelection flags become the spec, defaulted', () => {
    const spec = specFromFlags({
      nodes: 'n1, n2',
      ignoreDaemonsets: false,
      force: true,
      podSelector: 'app=web',
    });
    assert.deepEqual(spec.nodeNames, ['n1', 'n2']);
    assert.deepEqual(spec.podSelection, {
      ignoreDaemonSets: false,
      deleteEmptyDirData: false,
      force: true,
      podSelector: { matchLabels: { app: 'web' } },
    });
    assert.equal(spec.mode, 'Drain');
  });
  it('a plan file gives the nodes and options; flags override it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'df-preflight-'));
    const file = join(dir, 'plan.yaml');
    writeFileSync(
      file,
      'apiVersion: maintenance.drainflow.dev/v1alpha1\nkind: MaintenancePlan\nmetadata: {name: p}\nspec:\n  nodeSelector: {matchLabels: {pool: blue}}\n  podSelection: {deleteEmptyDirData: true, force: true}\n',
    );
    const spec = specFromFlags({ filename: file, force: false });
    assert.deepEqual(spec.nodeSelector, { matchLabels: { pool: 'blue' } });
    assert.equal(spec.podSelection.deleteEmptyDirData, true);
    assert.equal(spec.podSelection.force, false);
  });
  it('refuses no nodes, and names the bad field', () => {
    assert.throws(() => specFromFlags({}), /name the nodes: --nodes a,b, --selector k=v, or -f plan.yaml/);
    assert.throws(() => specFromFlags({ nodes: ',' }), /--nodes: give at least one node name/);
    assert.throws(
      () => specFromFlags({ nodes: 'Bad_Node' }),
      /invalid plan: spec\.nodeNames\[0\]: must be a node name/,
    );
    assert.throws(() => specFromFlags({ nodes: 'a,a' }), /spec\.nodeNames: must not name a node twice/);
    assert.throws(
      () => specFromFlags({ filename: '/nonexistent/plan.yaml' }),
      /-f \/nonexistent\/plan\.yaml: /,
    );
  });
});

describe('renderPreflight', () => {
  const pod = (name: string, owner = true): PodInfo => ({
    metadata: {
      namespace: 'app',
      name,
      uid: name,
      labels: { app: name },
      ...(owner
        ? {
            ownerReferences: [
              { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'r', controller: true },
            ],
          }
        : {}),
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const report = summarizePreflight([
    buildPreflightNode({
      node: 'n1',
      pods: [pod('web'), pod('db'), pod('bare', false)],
      pdbs: [
        {
          namespace: 'app',
          name: 'db',
          selector: { matchLabels: { app: 'db' } },
          hasStatus: true,
          generation: 1,
          observedGeneration: 1,
          disruptionsAllowed: 0,
        },
      ],
      selection: { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false },
      dryRun: {
        'app/web': { verdict: 'Accepted' },
        'app/db': {
          verdict: 'Refused',
          code: 429,
          reason: 'DisruptionBudget',
          pdb: 'app/db',
          message: 'needs 1',
        },
      },
    }),
  ]);
  it('prints the summary, the node, its blockers, refusals and the PDBs', () => {
    const text = renderPreflight(report);
    assert.equal(
      text,
      [
        'preflight: 1 node(s) examined, nothing cordoned or evicted: 2 pod(s) to evict, 0 skipped, 2 blocker(s) on 1 node(s); dry-run evictions: 1 accepted, 1 refused; PodDisruptionBudget app/db allows no disruption: the drain cannot finish while it does',
        'node n1',
        '  2 to evict, 0 skipped, 2 blocker(s) on 2 pod(s); dry-run evictions 1 accepted, 1 refused',
        '  to evict:',
        '    app/db (PDB app/db) dry-run Refused',
        '    app/web dry-run Accepted',
        '  blockers:',
        `    NoController app/bare: ${report.nodes[0]!.blockers![0]!.message}`,
        `    DisruptionBudget Transient app/db: ${report.nodes[0]!.blockers![1]!.message}`,
        '  refused by the API server (dry run):',
        '    app/db: 429 DisruptionBudget (app/db): needs 1',
        'PodDisruptionBudgets:',
        '  app/db: blocked: 1 pod(s) to evict behind it and it allows 0 disruptions: no round can start until it allows one',
      ].join('\n'),
    );
  });
  it('drainflow status shows the report of a Previewed plan', () => {
    const text = renderPlan(
      {
        metadata: { name: 'p', uid: 'u' },
        status: { phase: 'Previewed', reason: 'BlockersFound', preflight: report },
      },
      0,
    );
    assert.match(text, /^MaintenancePlan p: Previewed \(BlockersFound\)/);
    assert.match(text, /\n {2}preflight: 1 node\(s\) examined/);
    assert.match(text, /\n {4}refused by the API server \(dry run\):/);
  });
});

describe('preflightExitCode: a gate for scripts and CI', () => {
  const selection = { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false };
  const owned = (name: string, annotations?: Record<string, string>): PodInfo => ({
    metadata: {
      namespace: 'app',
      name,
      uid: name,
      labels: { app: name },
      ...(annotations ? { annotations } : {}),
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'r', controller: true },
      ],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const clean = buildPreflightNode({ node: 'n1', pods: [owned('web')], pdbs: [], selection });
  const held = buildPreflightNode({
    node: 'n2',
    pods: [owned('batch', { 'karpenter.sh/do-not-disrupt': 'true' })],
    pdbs: [],
    selection,
  });
  const refused = buildPreflightNode({
    node: 'n3',
    pods: [owned('web')],
    pdbs: [],
    selection,
    dryRun: { 'app/web': { verdict: 'Refused', code: 403, reason: 'Forbidden', message: 'webhook says no' } },
  });
  const rows: Array<[string, Parameters<typeof summarizePreflight>[0], number]> = [
    ['every node can drain', [clean], 0],
    ['a blocker on one node of two', [clean, held], PREFLIGHT_EXIT_BLOCKERS],
    ['a dry-run refusal only', [refused], PREFLIGHT_EXIT_BLOCKERS],
    [
      'a node not examined',
      [clean, failedPreflightNode('n9', 'node n9 not found')],
      PREFLIGHT_EXIT_INCOMPLETE,
    ],
    [
      'a node not examined and blockers',
      [held, failedPreflightNode('n9', 'boom')],
      PREFLIGHT_EXIT_INCOMPLETE,
    ],
  ];
  for (const [name, nodes, code] of rows)
    it(`${name}: ${code}`, () => assert.equal(preflightExitCode(summarizePreflight(nodes)), code));
  it('the codes differ from 0 and from 1 (bad flags, no cluster)', () => {
    assert.deepEqual(new Set([0, 1, PREFLIGHT_EXIT_BLOCKERS, PREFLIGHT_EXIT_INCOMPLETE]).size, 4);
  });
});
