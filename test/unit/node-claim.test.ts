import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node } from '@kubernetes/client-node';
import { NODE_CLAIM_ANNOTATION, type MaintenancePlan } from '../../src/api/plan.js';
import {
  NODE_CLAIM_NODE_UID_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  claimWaitOutcome,
  copiedClaim,
  heldBy,
  showsHolder,
} from '../../src/k8s/node-claim.js';
import { uncordonOnDelete } from '../../src/operator/controller.js';

const plan = { name: 'p', uid: 'u1' };
const node = (annotations?: Record<string, string>): V1Node => ({ metadata: { name: 'n', annotations } });

describe('heldBy', () => {
  it('no or empty claim: none', () => {
    assert.equal(heldBy(node(), plan), 'none');
    assert.equal(heldBy(node({ [NODE_CLAIM_ANNOTATION]: '' }), plan), 'none');
  });
  it('name and uid match: self; a claim without the uid annotation counts by name', () => {
    assert.equal(
      heldBy(node({ [NODE_CLAIM_ANNOTATION]: 'p', [NODE_CLAIM_UID_ANNOTATION]: 'u1' }), plan),
      'self',
    );
    assert.equal(heldBy(node({ [NODE_CLAIM_ANNOTATION]: 'p' }), plan), 'self');
  });
  it('another name, or the same name with another uid (a re-created plan): other', () => {
    assert.equal(
      heldBy(node({ [NODE_CLAIM_ANNOTATION]: 'q', [NODE_CLAIM_UID_ANNOTATION]: 'u1' }), plan),
      'other',
    );
    assert.equal(
      heldBy(node({ [NODE_CLAIM_ANNOTATION]: 'p', [NODE_CLAIM_UID_ANNOTATION]: 'u2' }), plan),
      'other',
    );
  });
});

describe('a claim copied onto a Node created again under the name (nodes are identified by uid)', () => {
  const withUid = (uid: string, annotations: Record<string, string>): V1Node => ({
    metadata: { name: 'n', uid, annotations },
  });
  const claim = { [NODE_CLAIM_ANNOTATION]: 'p', [NODE_CLAIM_UID_ANNOTATION]: 'u1' };
  const cases: [string, V1Node, boolean, 'none' | 'self' | 'other'][] = [
    [
      'the claimed Node',
      withUid('n-1', { ...claim, [NODE_CLAIM_NODE_UID_ANNOTATION]: 'n-1' }),
      false,
      'self',
    ],
    [
      'another Node with a copy of the claim',
      withUid('n-2', { ...claim, [NODE_CLAIM_NODE_UID_ANNOTATION]: 'n-1' }),
      true,
      'none',
    ],
    [
      "another Node with a copy of another plan's claim",
      withUid('n-2', { [NODE_CLAIM_ANNOTATION]: 'q', [NODE_CLAIM_NODE_UID_ANNOTATION]: 'n-1' }),
      true,
      'none',
    ],
    ['a claim written before the node uid was recorded: by name', withUid('n-2', claim), false, 'self'],
  ];
  for (const [name, n, copied, held] of cases)
    it(`${name}: copied ${copied}, heldBy ${held}`, () => {
      assert.equal(copiedClaim(n), copied);
      assert.equal(heldBy(n, plan), held);
    });
});

describe('claimWaitOutcome', () => {
  const cases: [string, Parameters<typeof claimWaitOutcome>[0], ReturnType<typeof claimWaitOutcome>][] = [
    ['the node is gone', undefined, 'NodeNotFound'],
    [
      'the holder still holds it',
      node({ [NODE_CLAIM_ANNOTATION]: 'q', [NODE_CLAIM_UID_ANNOTATION]: 'uq' }),
      undefined,
    ],
    ['the holder still holds it (no uid annotation)', node({ [NODE_CLAIM_ANNOTATION]: 'q' }), undefined],
    ['no claim left', node(), 'Released'],
    ['an empty claim', node({ [NODE_CLAIM_ANNOTATION]: '' }), 'Released'],
    [
      'this plan holds it',
      node({ [NODE_CLAIM_ANNOTATION]: 'p', [NODE_CLAIM_UID_ANNOTATION]: 'u1' }),
      'Released',
    ],
    [
      'a third plan holds it',
      node({ [NODE_CLAIM_ANNOTATION]: 'r', [NODE_CLAIM_UID_ANNOTATION]: 'ur' }),
      'Released',
    ],
    [
      "a re-created plan of the waiting plan's name holds it: the holder let go",
      node({ [NODE_CLAIM_ANNOTATION]: 'p', [NODE_CLAIM_UID_ANNOTATION]: 'u2' }),
      'Released',
    ],
  ];
  for (const [name, n, want] of cases)
    it(`${name}: ${String(want)}`, () => assert.equal(claimWaitOutcome(n, plan, 'q'), want));
  it('a view not yet confirmed (a cache that may lag) never says Released; gone is gone', () => {
    assert.equal(claimWaitOutcome(node(), plan, 'q', false), undefined);
    assert.equal(claimWaitOutcome(node({ [NODE_CLAIM_ANNOTATION]: 'r' }), plan, 'q', false), undefined);
    assert.equal(claimWaitOutcome(node({ [NODE_CLAIM_ANNOTATION]: 'q' }), plan, 'q', false), undefined);
    assert.equal(claimWaitOutcome(undefined, plan, 'q', false), 'NodeNotFound');
  });
  it('showsHolder: only the holder, as another plan', () => {
    assert.equal(showsHolder(node({ [NODE_CLAIM_ANNOTATION]: 'q' }), plan, 'q'), true);
    assert.equal(showsHolder(node({ [NODE_CLAIM_ANNOTATION]: 'r' }), plan, 'q'), false);
    assert.equal(showsHolder(node(), plan, 'q'), false);
    assert.equal(showsHolder(undefined, plan, 'q'), false);
    assert.equal(
      showsHolder(node({ [NODE_CLAIM_ANNOTATION]: 'p', [NODE_CLAIM_UID_ANNOTATION]: 'u1' }), plan, 'p'),
      false,
    );
  });
  it('held by an older plan of the same name (another uid): still held until it lets go', () => {
    const old = node({ [NODE_CLAIM_ANNOTATION]: 'p', [NODE_CLAIM_UID_ANNOTATION]: 'u0' });
    assert.equal(claimWaitOutcome(old, plan, 'p'), undefined);
    assert.equal(claimWaitOutcome(node(), plan, 'p'), 'Released');
  });
});

describe('uncordonOnDelete', () => {
  const withSpec = (spec: unknown) => ({ metadata: { name: 'p', uid: 'u1' }, spec }) as MaintenancePlan;
  it('OnDelete (also the default) and OnRelease uncordon, Never does not', () => {
    assert.equal(uncordonOnDelete(withSpec({ nodeNames: ['n'] })), true);
    assert.equal(uncordonOnDelete(withSpec({ nodeNames: ['n'], uncordon: 'OnDelete' })), true);
    assert.equal(uncordonOnDelete(withSpec({ nodeNames: ['n'], uncordon: 'OnRelease' })), true);
    assert.equal(uncordonOnDelete(withSpec({ nodeNames: ['n'], uncordon: 'Never' })), false);
  });
  it('an otherwise invalid spec still has its uncordon read', () => {
    assert.equal(uncordonOnDelete(withSpec({ bogus: 1, uncordon: 'Never' })), false);
    assert.equal(uncordonOnDelete(withSpec({ bogus: 1 })), true);
    assert.equal(uncordonOnDelete(withSpec(undefined)), true);
  });
});
