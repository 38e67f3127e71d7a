/** Table tests of the next-step decision (src/drain/scheduler.ts): every branch. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nextActionAtMs, planNextStep, type PdbTrack, type PodTrack } from '../../src/drain/scheduler.js';

const NOW = 1_000_000;
function pod(key: string, over: Partial<PodTrack> = {}): PodTrack {
  const [namespace, name] = key.split('/') as [string, string];
  return {
    key,
    namespace,
    name,
    uid: `u-${key}`,
    pdbs: [],
    state: 'Pending',
    attempts: 0,
    notBeforeMs: 0,
    ...over,
  };
}
function pdbs(...list: [string, number, Partial<PdbTrack>?][]): Map<string, PdbTrack> {
  return new Map(
    list.map(([key, allowed, over]) => [key, { key, allowed, waiting: false, waitRounds: 0, ...over }]),
  );
}
const limits = { nowMs: NOW, maxInFlight: 4, paused: false };

describe('planNextStep', () => {
  const cases: {
    name: string;
    pods: PodTrack[];
    pdbs?: Map<string, PdbTrack>;
    limits?: Partial<typeof limits>;
    evict: string[];
    waitPdbs?: string[];
    wakeAtMs?: number;
    done?: boolean;
  }[] = [
    { name: 'evicts eligible pods in key order', pods: [pod('a/b'), pod('a/a')], evict: ['a/a', 'a/b'] },
    { name: 'nothing while paused', pods: [pod('a/a')], limits: { paused: true }, evict: [] },
    {
      name: 'paused still reports when a cooldown ends',
      pods: [pod('a/a', { notBeforeMs: NOW + 5000 })],
      limits: { paused: true },
      evict: [],
      wakeAtMs: NOW + 5000,
    },
    {
      name: 'respects maxInFlight, counting calls already in flight',
      pods: [pod('a/1', { state: 'Evicting' }), pod('a/2'), pod('a/3'), pod('a/4')],
      limits: { maxInFlight: 2 },
      evict: ['a/2'],
    },
    {
      name: 'no eviction before the cooldown ends',
      pods: [pod('a/a', { notBeforeMs: NOW + 1 }), pod('a/b', { notBeforeMs: NOW })],
      evict: ['a/b'],
      wakeAtMs: NOW + 1,
    },
    {
      name: 'spends the PDB budget: one eviction when it allows one, no waiter while it is in flight',
      pods: [pod('a/1', { pdbs: ['a/p'] }), pod('a/2', { pdbs: ['a/p'] })],
      pdbs: pdbs(['a/p', 1]),
      evict: ['a/1'],
      waitPdbs: [],
    },
    {
      name: 'a PDB allowing nothing gets one waiter and no eviction',
      pods: [pod('a/1', { pdbs: ['a/p'] }), pod('a/2', { pdbs: ['a/p'] })],
      pdbs: pdbs(['a/p', 0]),
      evict: [],
      waitPdbs: ['a/p'],
    },
    {
      name: 'no second waiter for a PDB already waited for',
      pods: [pod('a/1', { pdbs: ['a/p'] })],
      pdbs: pdbs(['a/p', 0, { waiting: true }]),
      evict: [],
      waitPdbs: [],
    },
    {
      name: 'no waiter while an eviction behind the PDB is in flight',
      pods: [pod('a/1', { pdbs: ['a/p'], state: 'Evicting' }), pod('a/2', { pdbs: ['a/p'] })],
      pdbs: pdbs(['a/p', 0]),
      evict: [],
      waitPdbs: [],
    },
    {
      name: 'pods of other PDBs go on while one PDB is exhausted',
      pods: [pod('a/1', { pdbs: ['a/p'] }), pod('a/2', { pdbs: ['a/q'] }), pod('a/3')],
      pdbs: pdbs(['a/p', 0], ['a/q', 2]),
      evict: ['a/2', 'a/3'],
      waitPdbs: ['a/p'],
    },
    {
      name: 'a pod under two PDBs is sent (the server answers 500, a permanent blocker)',
      pods: [pod('a/1', { pdbs: ['a/p', 'a/q'] })],
      pdbs: pdbs(['a/p', 0], ['a/q', 0]),
      evict: ['a/1'],
    },
    {
      name: 'done when every pod is Gone or Failed',
      pods: [pod('a/1', { state: 'Gone' }), pod('a/2', { state: 'Failed' })],
      evict: [],
      done: true,
    },
    {
      name: 'not done while a pod terminates',
      pods: [pod('a/1', { state: 'Terminating' })],
      evict: [],
      done: false,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const step = planNextStep(c.pods, c.pdbs ?? new Map(), { ...limits, ...c.limits });
      assert.deepEqual(step.evict, c.evict);
      if (c.waitPdbs) assert.deepEqual(step.waitPdbs, c.waitPdbs);
      assert.equal(step.wakeAtMs, c.wakeAtMs);
      if (c.done !== undefined) assert.equal(step.done, c.done);
    });
  }
});

describe('nextActionAtMs', () => {
  it('is the earliest future cooldown end of pods and PDB waits', () => {
    const ps = [pod('a/1', { notBeforeMs: NOW + 9000 }), pod('a/2', { notBeforeMs: NOW - 1 })];
    assert.equal(
      nextActionAtMs(ps, pdbs(['a/p', 0, { waiting: true, waitUntilMs: NOW + 4000 }]), NOW),
      NOW + 4000,
    );
    assert.equal(nextActionAtMs(ps, new Map(), NOW), NOW + 9000);
  });
  it('is absent when nothing cools down', () => {
    assert.equal(
      nextActionAtMs([pod('a/1', { state: 'Gone', notBeforeMs: NOW + 5 })], new Map(), NOW),
      undefined,
    );
  });
});
