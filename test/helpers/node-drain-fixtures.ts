/**
 * Fixtures of the node drain's table tests (src/drain/node/): pod and observation builders, eviction
 * answers, and `Drain`, which plays the node workflow's part around one state (an observation gets
 * `++observeSeq` when it starts, answers see `observeSeq`).
 */
import assert from 'node:assert/strict';
import type { EvictResult } from '../../src/contract/eviction.js';
import type { NodeObservation, ObservedPod } from '../../src/contract/observation.js';
import { applyEvictionAnswer } from '../../src/drain/node/answers.js';
import { decideNode } from '../../src/drain/node/decide.js';
import { applyObservation } from '../../src/drain/node/observation.js';
import {
  type EvictionCallFailure,
  initialNodeState,
  type NodeDecision,
  type NodeDrainSettings,
  type NodeDrainState,
  type PodRecord,
} from '../../src/drain/node/state.js';

export const NOW = 1_700_000_000_000;
export const S = 1000;
export const DEADLINE = NOW + 3600 * S;
export const BACKOFF = { initialSeconds: 5, maxSeconds: 120 };
export const SETTINGS: NodeDrainSettings = { maxConcurrentPerNode: 4, retryBackoff: BACKOFF };
export const uidOf = (key: string) => `uid-${key}`;

// ---- fixture builders ----

export class PodBuilder {
  readonly item: ObservedPod;
  constructor(key: string) {
    const [namespace, name] = key.split('/') as [string, string];
    this.item = {
      key,
      namespace,
      name,
      uid: uidOf(key),
      action: 'Evict',
      reason: 'Evictable',
      message: '',
      pdbs: [],
    };
  }
  withPdb(...keys: string[]): this {
    this.item.pdbs.push(...keys);
    return this;
  }
  blocked(reason = 'NoController', message = 'pod has no controller'): this {
    Object.assign(this.item, { action: 'Block', reason, message });
    return this;
  }
  terminating(): this {
    Object.assign(this.item, {
      action: 'Wait',
      reason: 'Terminating',
      message: 'pod is terminating',
      deletionTimestampMs: NOW,
    });
    return this;
  }
  skipped(reason = 'DaemonSetPod'): this {
    Object.assign(this.item, { action: 'Skip', reason, message: 'left alone' });
    return this;
  }
}
export const aPod = (key: string) => new PodBuilder(key);

export type ChangedObservation = Extract<NodeObservation, { changed: true }>;
export class ObservationBuilder {
  private nodeView: { exists: boolean; unschedulable: boolean; uid?: string } = {
    exists: true,
    unschedulable: true,
  };
  private items: ObservedPod[] = [];
  private budgets: { key: string; disruptionsAllowed: number }[] = [];
  node(v: Partial<{ exists: boolean; unschedulable: boolean; uid: string }>): this {
    this.nodeView = { ...this.nodeView, ...v };
    return this;
  }
  pods(...ps: PodBuilder[]): this {
    this.items.push(...ps.map((p) => ({ ...p.item, pdbs: [...p.item.pdbs] })));
    return this;
  }
  pdb(key: string, disruptionsAllowed: number): this {
    this.budgets.push({ key, disruptionsAllowed });
    return this;
  }
  build(): ChangedObservation {
    const exists = this.nodeView.exists;
    const pods = exists ? [...this.items].sort((a, b) => (a.key < b.key ? -1 : 1)) : [];
    return {
      changed: true,
      fingerprint: JSON.stringify([this.nodeView, pods, this.budgets]),
      node: { ...this.nodeView },
      pods,
      pdbs: exists ? [...this.budgets] : [],
    };
  }
}
export const anObservation = () => new ObservationBuilder();

export const evicted: EvictResult = { outcome: 'Evicted' };
export const gone: EvictResult = { outcome: 'Gone' };
export const pdbRefusal = (o: { pdb?: string; retryAfterSeconds?: number } = {}): EvictResult => ({
  outcome: 'TooManyRequests',
  cause: 'DisruptionBudget',
  message: 'Cannot evict pod as it would violate the pod disruption budget.',
  ...o,
});
export const throttled = (retryAfterSeconds?: number): EvictResult => ({
  outcome: 'TooManyRequests',
  cause: 'Throttled',
  message: 'Too many requests, please try again later.',
  ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
});
export const retry = (reason: 'Conflict' | 'NamespaceTerminating'): EvictResult => ({
  outcome: 'Retry',
  code: reason === 'Conflict' ? 409 : 403,
  reason,
  message: `${reason} answer`,
});
export const failed = (code: number, reason: string): EvictResult => ({
  outcome: 'Failed',
  code,
  reason,
  message: `${reason} answer`,
});
export const callFailed = (o: Partial<EvictionCallFailure> = {}): EvictionCallFailure => ({
  outcome: 'CallFailed',
  timedOut: true,
  message: 'eviction timed out',
  ...o,
});

/** Plays the node workflow's part around one {@link NodeDrainState}. */
export class Drain {
  readonly s: NodeDrainState;
  now = NOW;
  settings: NodeDrainSettings = SETTINGS;
  constructor(o: { deadlineMs?: number; paused?: boolean } = {}) {
    this.s = initialNodeState('node-1', o.deadlineMs ?? DEADLINE, o.paused ?? false);
  }
  /** An observation that starts now and is applied at once. */
  observe(b: ObservationBuilder): this {
    return this.applyObserved(b, this.startObserve());
  }
  /** Starts an observation (its answer is applied later with {@link applyObserved}). */
  startObserve(): number {
    return ++this.s.observeSeq;
  }
  applyObserved(b: ObservationBuilder, seq: number): this {
    applyObservation(this.s, b.build(), seq, this.now);
    return this;
  }
  decide(quiesce = false): NodeDecision {
    return decideNode(this.s, this.now, this.settings, quiesce);
  }
  /** Decides and returns the pod keys to evict. */
  evicts(quiesce = false): string[] {
    return this.decide(quiesce).evict.map((u) => this.s.pods[u]!.key);
  }
  answer(key: string, a: EvictResult | EvictionCallFailure): this {
    applyEvictionAnswer(this.s, uidOf(key), a, this.now, BACKOFF);
    return this;
  }
  at(ms: number): this {
    this.now = ms;
    return this;
  }
  pod(key: string): PodRecord | undefined {
    return this.s.pods[uidOf(key)];
  }
  /** `key state[ reason]` of every tracked pod, in key order. */
  states(): string[] {
    return Object.values(this.s.pods)
      .sort((a, b) => (a.key < b.key ? -1 : 1))
      .map((p) => `${p.key} ${p.state}${p.reason ? ` ${p.reason}` : ''}`);
  }
}

/** One pod `app/a` (behind PDB `app/p` allowing `allowed`, when given) whose eviction is in flight. */
export function evicting(o: { allowed?: number; more?: PodBuilder[] } = {}): Drain {
  const obs = anObservation();
  if (o.allowed !== undefined) obs.pods(aPod('app/a').withPdb('app/p')).pdb('app/p', o.allowed);
  else obs.pods(aPod('app/a'));
  obs.pods(...(o.more ?? []));
  const d = new Drain().observe(obs);
  d.settings = { ...SETTINGS, maxConcurrentPerNode: 1 };
  assert.deepEqual(d.evicts(), ['app/a']);
  d.settings = SETTINGS;
  return d;
}
/** The same observation as {@link evicting} with `allowed` for `app/p` and `app/b` behind it too. */
export const twoBehindPdb = (allowed: number, o: { aGone?: boolean } = {}) =>
  anObservation()
    .pods(...(o.aGone ? [] : [aPod('app/a').withPdb('app/p')]), aPod('app/b').withPdb('app/p'))
    .pdb('app/p', allowed);
