import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LabelSelector } from '../../src/api/plan.js';
import { matchesLabelSelector, matchesRequirement } from '../../src/drain/selector.js';

const labels = { app: 'web', tier: 'frontend', env: 'prod' };

describe('matchesLabelSelector', () => {
  const cases: Array<{
    name: string;
    labels: Record<string, string> | undefined;
    selector: LabelSelector | undefined;
    want: boolean;
  }> = [
    { name: 'undefined selector matches everything', labels, selector: undefined, want: true },
    { name: 'empty selector matches everything', labels, selector: {}, want: true },
    { name: 'empty selector matches a pod without labels', labels: undefined, selector: {}, want: true },
    {
      name: 'empty lists match everything',
      labels,
      selector: { matchLabels: {}, matchExpressions: [] },
      want: true,
    },
    {
      name: 'matchLabels all equal',
      labels,
      selector: { matchLabels: { app: 'web', env: 'prod' } },
      want: true,
    },
    {
      name: 'matchLabels one differs',
      labels,
      selector: { matchLabels: { app: 'web', env: 'dev' } },
      want: false,
    },
    { name: 'matchLabels key missing', labels, selector: { matchLabels: { team: 'a' } }, want: false },
    {
      name: 'matchLabels on unlabelled object',
      labels: undefined,
      selector: { matchLabels: { app: 'web' } },
      want: false,
    },
    {
      name: 'matchLabels empty value needs the key',
      labels: { a: '' },
      selector: { matchLabels: { a: '' } },
      want: true,
    },
    {
      name: 'matchLabels empty value, key absent',
      labels: {},
      selector: { matchLabels: { a: '' } },
      want: false,
    },
    {
      name: 'In matches',
      labels,
      selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['backend', 'frontend'] }] },
      want: true,
    },
    {
      name: 'In value not in set',
      labels,
      selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['backend'] }] },
      want: false,
    },
    {
      name: 'In key absent',
      labels,
      selector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
      want: false,
    },
    {
      name: 'NotIn value not in set',
      labels,
      selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev'] }] },
      want: true,
    },
    {
      name: 'NotIn value in set',
      labels,
      selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod', 'dev'] }] },
      want: false,
    },
    {
      name: 'NotIn key absent matches',
      labels,
      selector: { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] },
      want: true,
    },
    {
      name: 'Exists present',
      labels,
      selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] },
      want: true,
    },
    {
      name: 'Exists absent',
      labels,
      selector: { matchExpressions: [{ key: 'zone', operator: 'Exists' }] },
      want: false,
    },
    {
      name: 'DoesNotExist absent',
      labels,
      selector: { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] },
      want: true,
    },
    {
      name: 'DoesNotExist present',
      labels,
      selector: { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] },
      want: false,
    },
    {
      name: 'matchLabels AND matchExpressions: both hold',
      labels,
      selector: {
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['prod'] },
          { key: 'x', operator: 'DoesNotExist' },
        ],
      },
      want: true,
    },
    {
      name: 'matchLabels AND matchExpressions: expression fails',
      labels,
      selector: {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'env', operator: 'In', values: ['dev'] }],
      },
      want: false,
    },
    {
      name: 'matchLabels AND matchExpressions: label fails',
      labels,
      selector: {
        matchLabels: { app: 'db' },
        matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }],
      },
      want: false,
    },
    {
      name: 'invalid In without values matches nothing',
      labels,
      selector: { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] },
      want: false,
    },
    {
      name: 'invalid NotIn without values matches nothing',
      labels,
      selector: { matchExpressions: [{ key: 'zone', operator: 'NotIn' }] },
      want: false,
    },
    {
      name: 'invalid Exists with values matches nothing',
      labels,
      selector: { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['web'] }] },
      want: false,
    },
    {
      name: 'inherited property is not a label',
      labels: {},
      selector: { matchExpressions: [{ key: 'toString', operator: 'Exists' }] },
      want: false,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(matchesLabelSelector(c.labels, c.selector), c.want);
    });
  }
});

describe('matchesRequirement', () => {
  it('DoesNotExist on an unlabelled object', () => {
    assert.equal(matchesRequirement(undefined, { key: 'a', operator: 'DoesNotExist' }), true);
  });
  it('NotIn on an unlabelled object', () => {
    assert.equal(matchesRequirement(undefined, { key: 'a', operator: 'NotIn', values: ['x'] }), true);
  });
});
