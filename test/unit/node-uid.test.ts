/**
 * Nodes are identified by UID in a node's observation (src/activities/observe.ts snapshot,
 * src/activities/node-pods.ts observationFingerprint): a Node deleted and created again under the
 * claimed node's name is observed as itself, without its pods.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { snapshot } from '../../src/activities/observe.js';
import { observationFingerprint } from '../../src/activities/node-pods.js';

const selection = { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false };
const pod: V1Pod = {
  metadata: {
    namespace: 'app',
    name: 'web-0',
    uid: 'p1',
    ownerReferences: [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true },
    ],
  },
  spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
  status: { phase: 'Running' },
};
const node = (uid: string): V1Node => ({ metadata: { name: 'n1', uid }, spec: { unschedulable: true } });
const look = (n: V1Node | undefined, claimed?: string) =>
  snapshot(n, [pod], () => [], selection, undefined, {}, claimed);

describe('observeNode snapshot: the node by uid', () => {
  it('the claimed Node: its uid and its pods', () => {
    const c = look(node('u1'), 'u1');
    assert.deepEqual(c.node, { exists: true, unschedulable: true, uid: 'u1' });
    assert.deepEqual(
      c.pods.map((p) => p.key),
      ['app/web-0'],
    );
  });
  it('another Node under the name: its uid, none of its pods or PDBs', () => {
    const c = look(node('u2'), 'u1');
    assert.deepEqual(c, { node: { exists: true, unschedulable: true, uid: 'u2' }, pods: [], pdbs: [] });
  });
  it('no claimed uid (before the claim): every pod, as before', () => {
    assert.equal(look(node('u2')).pods.length, 1);
  });
  it('no Node: nothing', () => {
    assert.deepEqual(look(undefined, 'u1'), {
      node: { exists: false, unschedulable: false },
      pods: [],
      pdbs: [],
    });
  });
  it("the node's uid is part of the fingerprint: a Node created again under the name wakes the drain", () => {
    const a = { node: { exists: true, unschedulable: true, uid: 'u1' }, pods: [], pdbs: [] };
    const b = { ...a, node: { ...a.node, uid: 'u2' } };
    assert.notEqual(observationFingerprint(a), observationFingerprint(b));
  });
});
