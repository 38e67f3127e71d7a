/**
 * An in-memory cluster implementing the activity contract ({@link DrainActivities}) for workflow
 * tests in the time-skipping environment. It models what the workflow depends on, where the real
 * cluster's behaviour matters to the drain:
 *
 * - node claims and cordons, and external changes (an admin uncordons, cordons or deletes a node);
 * - terminating pods: an evicted pod stays terminating for `graceMs` of real time (observations
 *   show it with action `Wait`, reason `Terminating` and a `deletionTimestampMs`), then it is gone;
 * - replacement readiness: a PDB in {@link SimCluster.refill} gets its allowance back only when the
 *   evicted pod's replacement is Ready, `readyDelayMs` of real time after the old pod is gone;
 * - the Eviction API's answers: 201, 404 (Gone), 429 DisruptionBudget without Retry-After when the
 *   PDB allows 0, the multiple-PDB 500, 200 for a pod already terminating; and, on request
 *   ({@link SimCluster.refuse}), 429 "still being processed" (Retry-After 10), 429 Throttled with a
 *   Retry-After, Retry-After 0, a 429 naming an unknown PDB, 409 Conflict and 403
 *   NamespaceTerminating (both `Retry`), plus scripted answers per pod (`script`);
 * - injected activity faults ({@link SimCluster.fail}): the next N calls of an activity throw a
 *   retryable error, throw `ApplicationFailure.nonRetryable`, or hang (no heartbeat) so the server
 *   times them out, optionally after the call took effect;
 * - `waitClaimReleased` like the real activity: at once when the node is gone or no longer held by
 *   the plan named, else it polls for up to `claimPollMs` of real time and answers `StillHeld`;
 * - Deployments ({@link SimCluster.addDeployment}) and `restartDeployment` like the real activity
 *   (idempotent on the annotation value): a restart requested moves the Deployment's pods off their
 *   nodes by surge, `readyDelayMs` of real time later (the new pod Ready elsewhere, the old one
 *   removed by the Deployment controller, no eviction);
 * - `observeNode` like the real activity: at once when the world differs from `since`, else it polls
 *   for up to `observePollMs` of real time and answers `{ changed: false }` (the workflow paces
 *   unchanged answers with a durable timer, so skipped time advances). The fingerprint is the real
 *   activity's {@link observationFingerprint}.
 *
 * Every call is recorded with the Temporal server's (skipped) time, so tests can assert orderings
 * and cooldowns. Real-cluster behaviour is covered by the e2e tests.
 */
import type { NotUncordoned } from '../../src/drain/hand-back.js';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type {
  ClaimWaitResult,
  CordonResult,
  DrainActivities,
  NodePods,
  ResolvedNodes,
} from '../../src/activities/types.js';
import type { EvictResult } from '../../src/contract/eviction.js';
import type { RemedyActivities } from '../../src/activities/remedy.js';
import { createClaimCycleActivities, type ClaimCycleActivities } from '../../src/activities/claim-cycle.js';
import type { NodeObservation, ObservedPod } from '../../src/contract/observation.js';
import { NODE_CLAIM_ANNOTATION, type MaintenancePlanStatus } from '../../src/api/plan.js';
import { observationFingerprint } from '../../src/activities/node-pods.js';
import { statusEquals } from '../../src/drain/conditions.js';
import { diagnosePdb, type DiagnosisInput } from '../../src/drain/pdb-diagnosis.js';
import { renderPlanStatus } from '../../src/drain/plan-status.js';

export interface SimPod {
  namespace: string;
  name: string;
  uid: string;
  node: string;
  action?: ObservedPod['action'];
  reason?: ObservedPod['reason'];
  pdbs?: string[];
  /** Scripted answers for the next eviction calls (consumed in order; then the cluster's rules apply). */
  script?: EvictResult[];
  gone?: boolean;
  /** Real ms this pod stays terminating once evicted (default: the cluster's `graceMs`). */
  graceMs?: number;
  /** Terminating (evicted or its namespace deleted): gone at this real time (ms). */
  terminatingUntil?: number;
  /** metadata.deletionTimestamp (server time of the eviction, ms) while terminating. */
  deletionTimestampMs?: number;
  /** Eviction calls that took effect on this pod (201 on a live pod, or 200 on a terminating one). */
  evictedTimes?: number;
  /** spec.terminationGracePeriodSeconds as the observation reports it (absent: not reported). */
  terminationGracePeriodSeconds?: number;
  /** DELETE calls (no Eviction API) that took effect, with their grace period. */
  deletions?: { atMs: number; gracePeriodSeconds: number }[];
  /** The order group the observation reports (spec.podOrder; absent: 0). */
  order?: number;
  /** The pod's controller as the observation reports it. */
  controller?: { uid: string; ref: string };
  /** The observation's `returns` (the pod tolerates the cordon). */
  returns?: ObservedPod['returns'];
  /** The observation's `pdbExempt`; the sim's Eviction API then skips the PDB check, as the API server does. */
  pdbExempt?: ObservedPod['pdbExempt'];
  /**
   * Its controller binds a replacement (same fields, a new name and UID) to the same node as soon
   * as it is gone: a pod that comes back (src/drain/returning.ts).
   */
  comesBack?: boolean;
}

export interface SimNode {
  /** metadata.uid: a new one when the node is created again under its name ({@link SimCluster.recreateNode}). */
  uid: string;
  unschedulable: boolean;
  heldBy?: string;
  wasUnschedulable?: boolean;
  /** The node uid the claim recorded (a claim copied onto a node created again names another). */
  claimedUid?: string;
  /** The annotation drainflow.dev/release=true (removed by releaseNode, as the real activity does). */
  releaseAnnotation?: boolean;
}

export interface CallRecord {
  name: string;
  /** Server (skipped) time of the call, ms since epoch. */
  atMs: number;
  arg: unknown;
  result?: unknown;
}

/** Eviction refusals the cluster can give without a per-pod script (see {@link SimCluster.refuse}). */
export type RefusalKind =
  /** 429 DisruptionBudget, Retry-After 10: the PDB's status is not yet processed. */
  | 'PdbProcessing'
  /** 429 Throttled (API Priority and Fairness) with `retryAfterSeconds` (default 1). */
  | 'Throttled'
  /** 429 Throttled with Retry-After 0 (the real activity reports it as absent; this sends the 0). */
  | 'RetryAfterZero'
  /** 429 DisruptionBudget naming a PDB that covers no pod of the node (`app/unknown-pdb`). */
  | 'UnknownPdb'
  /** 409 Conflict while the pod still exists: `Retry`. */
  | 'Conflict'
  /** 403 NamespaceTerminating: `Retry`; the namespace deletion then terminates the pod. */
  | 'NamespaceTerminating';

interface Refusal {
  kind: RefusalKind;
  pod?: string;
  times: number;
  retryAfterSeconds?: number;
}

/** Activity faults (see {@link SimCluster.fail}). */
export type FaultKind = 'retryable' | 'nonRetryable' | 'hang';

/** The activities of the sim (the drain contract and the remedy's restart). */
export type SimActivities = DrainActivities & RemedyActivities & ClaimCycleActivities;

/** A Deployment of the sim: its pods (keys) and its pod template's restartedAt annotation. */
export interface SimDeployment {
  pods: string[];
  restartedAt?: string;
  /** Rollouts requested (annotation changes). */
  rollouts: number;
}

interface Fault {
  activity: keyof SimActivities;
  kind: FaultKind;
  times: number;
  /** For 'hang': do the call's work first, then hang (the answer is lost, the effect is not). */
  afterEffect: boolean;
  /** For 'hang': real ms to hang (cancellable). */
  hangMs: number;
}

/** The PDB key named by {@link RefusalKind} `UnknownPdb`. */
export const UNKNOWN_PDB = 'app/unknown-pdb';

/** Time of the current activity attempt on the Temporal server's clock (skipped time). */
function serverNow(): number {
  return Context.current().info.currentAttemptScheduledTimestampMs;
}

export interface SimOptions {
  /** Real ms an evicted pod stays terminating (default 20). */
  graceMs?: number;
  /** Real ms from a pod's end until its replacement is Ready and a `refill` PDB allows again (default 0). */
  readyDelayMs?: number;
  /** Longest real ms `observeNode` polls for a change before answering unchanged (default 200). */
  observePollMs?: number;
  /**
   * Longest real ms `waitClaimReleased` polls for the hand-back of a held node before answering
   * `StillHeld` (default: `observePollMs`).
   */
  claimPollMs?: number;
  /** Real ms an eviction call takes before it takes effect and answers (default 0). */
  evictDelayMs?: number;
  /** Real ms between an eviction call taking effect and its answer (a slow response; default 0). */
  answerDelayMs?: number;
  /** Node name → real ms its `cordonNode` call takes before it takes effect (default 0): orders node starts. */
  cordonDelayMs?: Record<string, number>;
}

/** An eviction call sent while more calls were in flight behind its PDB than the PDB allowed. */
export interface OverBudgetCall {
  pdb: string;
  /** Calls in flight behind the PDB, this one included. */
  inFlight: number;
  /** disruptionsAllowed when the call was sent. */
  allowed: number;
}

export class SimCluster {
  nodes = new Map<string, SimNode>();
  pods = new Map<string, SimPod>();
  /** PDB key → disruptions allowed now. */
  pdbs = new Map<string, number>();
  /**
   * PDB key → what src/drain/pdb-diagnosis.ts reads of it (its spec and status but the allowance,
   * its pods, its owner): set to have observations say why the PDB blocks, as observeNode does.
   */
  pdbShapes = new Map<
    string,
    Omit<DiagnosisInput, 'pdb' | 'node'> & {
      pdb: {
        spec: DiagnosisInput['pdb']['spec'];
        status: Omit<DiagnosisInput['pdb']['status'], 'disruptionsAllowed'>;
      };
    }
  >();
  /** PDBs whose allowance comes back when an evicted pod's replacement is Ready. */
  refill = new Set<string>();
  calls: CallRecord[] = [];
  statuses: { atMs: number; status: MaintenancePlanStatus }[] = [];
  events: { type: string; reason: string; message: string }[] = [];
  /** `namespace/name` → the Deployment (see {@link SimCluster.addDeployment}). */
  deployments = new Map<string, SimDeployment>();
  /** Replacements bound back so far (names their pods). */
  private returned = 0;
  graceMs: number;
  readyDelayMs: number;
  observePollMs: number;
  claimPollMs: number;
  evictDelayMs: number;
  answerDelayMs: number;
  cordonDelayMs: Record<string, number>;
  /**
   * Called synchronously as each call is recorded (after it took effect, before its answer returns
   * to the worker): a test changes the cluster at an exact point of the workflow's progress
   * instead of polling for it, which a loaded host can make late.
   */
  onCall?: (call: CallRecord) => void;
  /** `waitClaimReleased` calls running now (started, not yet answered, failed or cancelled). */
  claimWaitsRunning = 0;
  /** Calls sent beyond what their PDB allowed, counting the calls in flight (see {@link OverBudgetCall}). */
  overBudget: OverBudgetCall[] = [];
  /** Most eviction calls in flight at once behind each PDB. */
  maxInFlight = new Map<string, number>();
  private inFlight = new Map<string, number>();
  /** PDB key → [allowed, resourceVersion] as last observed: the version grows when the allowance changes. */
  private pdbVersions = new Map<string, [number, number]>();
  private lastVersion = 0;
  private refusals: Refusal[] = [];
  private faults: Fault[] = [];
  /** Replacements not Ready yet: the PDB whose allowance comes back, at this real time. */
  private replacements: { pdb: string; readyAt: number }[] = [];

  constructor(opts: SimOptions = {}) {
    this.graceMs = opts.graceMs ?? 20;
    this.readyDelayMs = opts.readyDelayMs ?? 0;
    this.observePollMs = opts.observePollMs ?? 200;
    this.claimPollMs = opts.claimPollMs ?? this.observePollMs;
    this.evictDelayMs = opts.evictDelayMs ?? 0;
    this.answerDelayMs = opts.answerDelayMs ?? 0;
    this.cordonDelayMs = opts.cordonDelayMs ?? {};
  }

  /** Every write of a PDB's status gets a new resourceVersion (an eviction, a replacement Ready). */
  private bumpPdbVersion(key: string): void {
    this.pdbVersions.set(key, [Math.max(0, this.pdbs.get(key) ?? 0), ++this.lastVersion]);
  }

  /** The PDB's resourceVersion: a new one after each status write, or when a test changed its allowance. */
  private pdbVersion(key: string, allowed: number): string {
    const known = this.pdbVersions.get(key);
    if (!known || known[0] !== allowed) this.pdbVersions.set(key, [allowed, ++this.lastVersion]);
    return String(this.pdbVersions.get(key)![1]);
  }

  private nodeSeq = 0;

  addNode(name: string, unschedulable = false): this {
    this.nodes.set(name, { uid: `node-uid-${++this.nodeSeq}`, unschedulable });
    return this;
  }

  /**
   * The node is deleted and created again under its name: a new uid; `copy` keeps its annotations
   * and spec.unschedulable (a Node restored from a saved manifest: the claim copied), else it is
   * fresh (schedulable, no claim). Its pods stay bound to the name (the pod garbage collector
   * leaves pods of a Node that is back within its quarantine).
   */
  recreateNode(node: string, copy: boolean): this {
    const old = this.nodes.get(node)!;
    const uid = `node-uid-${++this.nodeSeq}`;
    this.nodes.set(node, copy ? { ...old, uid } : { uid, unschedulable: false });
    return this;
  }

  /** Whether the node's claim is its own (not copied from a Node deleted before). */
  private ownClaim(n: SimNode): boolean {
    return n.heldBy !== undefined && (n.claimedUid === undefined || n.claimedUid === n.uid);
  }

  addPod(p: Omit<SimPod, 'uid'> & { uid?: string }): this {
    const key = `${p.namespace}/${p.name}`;
    this.pods.set(key, { uid: `uid-${key}`, ...p });
    return this;
  }

  /** A Deployment owning `pods` (keys of pods added with {@link addPod}). */
  addDeployment(key: string, pods: string[]): this {
    this.deployments.set(key, { pods, rollouts: 0 });
    return this;
  }

  /** An admin uncordons the node (spec.unschedulable false); the claim annotation stays. */
  uncordonExternally(node: string): this {
    this.nodes.get(node)!.unschedulable = false;
    return this;
  }

  /** An admin sets the node annotation drainflow.dev/release=true (a per-node release). */
  annotateRelease(node: string): this {
    this.nodes.get(node)!.releaseAnnotation = true;
    return this;
  }

  /** An admin cordons the node. */
  cordonExternally(node: string): this {
    this.nodes.get(node)!.unschedulable = true;
    return this;
  }

  /** The node is deleted: observations show `exists: false`; its pods are gone with it. */
  deleteNode(node: string): this {
    this.nodes.delete(node);
    for (const p of this.pods.values()) if (p.node === node) p.gone = true;
    return this;
  }

  /** The PDB is deleted: it covers no pod any more. */
  deletePdb(key: string): this {
    this.pdbs.delete(key);
    this.refill.delete(key);
    for (const p of this.pods.values()) if (p.pdbs?.includes(key)) p.pdbs = p.pdbs.filter((k) => k !== key);
    return this;
  }

  /** The next `times` eviction calls (of `pod`, a `namespace/name`, or of any pod) get this refusal. */
  refuse(kind: RefusalKind, opts: { pod?: string; times?: number; retryAfterSeconds?: number } = {}): this {
    this.refusals.push({
      kind,
      times: opts.times ?? Infinity,
      ...(opts.pod ? { pod: opts.pod } : {}),
      ...(opts.retryAfterSeconds !== undefined ? { retryAfterSeconds: opts.retryAfterSeconds } : {}),
    });
    return this;
  }

  /**
   * The next `times` calls of `activity` fail: `retryable` throws a plain error (Temporal retries
   * per the activity's retry policy), `nonRetryable` throws `ApplicationFailure.nonRetryable`,
   * `hang` sleeps `hangMs` of real time without heartbeating (cancellable), so the server times the
   * call out; with `afterEffect` the call's work is done before it hangs (or throws).
   */
  fail(
    activity: keyof SimActivities,
    kind: FaultKind,
    opts: { times?: number; afterEffect?: boolean; hangMs?: number } = {},
  ): this {
    this.faults.push({
      activity,
      kind,
      times: opts.times ?? 1,
      afterEffect: opts.afterEffect ?? false,
      hangMs: opts.hangMs ?? 60_000,
    });
    return this;
  }

  evictions(): CallRecord[] {
    return this.calls.filter((c) => c.name === 'evictPod');
  }

  lastStatus(): MaintenancePlanStatus | undefined {
    return this.statuses.at(-1)?.status;
  }

  private record(name: string, arg: unknown, result?: unknown): void {
    const call = { name, atMs: serverNow(), arg, result };
    this.calls.push(call);
    this.onCall?.(call);
  }

  /** Advances what real time changed: terminating pods end, replacements become Ready. */
  private tick(): void {
    const now = Date.now();
    for (const p of this.pods.values()) {
      if (!p.gone && p.terminatingUntil !== undefined && now >= p.terminatingUntil) this.end(p, now);
    }
    const ready = this.replacements.filter((r) => r.readyAt <= now);
    this.replacements = this.replacements.filter((r) => r.readyAt > now);
    for (const r of ready)
      if (this.pdbs.has(r.pdb)) {
        this.pdbs.set(r.pdb, (this.pdbs.get(r.pdb) ?? 0) + 1);
        this.bumpPdbVersion(r.pdb);
      }
  }

  /** The pod is gone; its replacement becomes Ready `readyDelayMs` later (refill PDBs get it back then). */
  private end(p: SimPod, now: number): void {
    p.gone = true;
    if (p.comesBack) {
      const name = `${p.name.replace(/-r\d+$/, '')}-r${++this.returned}`;
      this.pods.set(`${p.namespace}/${name}`, {
        namespace: p.namespace,
        name,
        uid: `uid-${p.namespace}/${name}`,
        node: p.node,
        comesBack: true,
        ...(p.controller ? { controller: p.controller } : {}),
        ...(p.returns ? { returns: p.returns } : {}),
        ...(p.pdbs ? { pdbs: [...p.pdbs] } : {}),
      });
    }
    const pdb = p.pdbs?.[0];
    if (pdb && this.refill.has(pdb) && p.evictedTimes)
      this.replacements.push({ pdb, readyAt: now + this.readyDelayMs });
  }

  private startTerminating(p: SimPod): void {
    if (p.terminatingUntil !== undefined) return;
    p.terminatingUntil = Date.now() + (p.graceMs ?? this.graceMs);
    p.deletionTimestampMs = serverNow();
  }

  /** The pods of a node as the activities see them, with the PDBs covering them. */
  private nodePods(node: string, requested: readonly string[] = []): NodePods {
    this.tick();
    const pods: ObservedPod[] = [...this.pods.values()]
      .filter((p) => p.node === node && !p.gone)
      .map((p) => ({
        key: `${p.namespace}/${p.name}`,
        namespace: p.namespace,
        name: p.name,
        uid: p.uid,
        action: p.terminatingUntil !== undefined ? 'Wait' : (p.action ?? 'Evict'),
        reason: p.terminatingUntil !== undefined ? 'Terminating' : (p.reason ?? 'Evictable'),
        message: p.terminatingUntil !== undefined ? 'pod is terminating' : (p.reason ?? 'evictable'),
        ...(p.deletionTimestampMs !== undefined ? { deletionTimestampMs: p.deletionTimestampMs } : {}),
        ...(p.terminationGracePeriodSeconds !== undefined
          ? { terminationGracePeriodSeconds: p.terminationGracePeriodSeconds }
          : {}),
        pdbs: p.pdbs ?? [],
        ...(p.order !== undefined ? { order: p.order } : {}),
        ...(p.controller ? { controller: p.controller } : {}),
        ...(p.returns ? { returns: p.returns } : {}),
        ...(p.pdbExempt && p.terminatingUntil === undefined ? { pdbExempt: p.pdbExempt } : {}),
      }))
      .sort((a, b) => a.key.localeCompare(b.key));
    const keys = new Set([...pods.flatMap((p) => p.pdbs), ...requested]);
    const pdbs = [...keys]
      .filter((k) => this.pdbs.has(k))
      .sort()
      .map((key) => {
        const allowed = Math.max(0, this.pdbs.get(key) ?? 0);
        const shape = this.pdbShapes.get(key);
        const diagnosis = shape
          ? diagnosePdb({
              ...shape,
              node,
              pdb: {
                key,
                spec: shape.pdb.spec,
                status: { ...shape.pdb.status, disruptionsAllowed: allowed },
              },
            })
          : undefined;
        return {
          key,
          disruptionsAllowed: allowed,
          resourceVersion: this.pdbVersion(key, allowed),
          ...(diagnosis ? { diagnosis } : {}),
        };
      });
    return { pods, pdbs };
  }

  private observe(
    node: string,
    requested?: readonly string[],
    pdbVersions: boolean | readonly string[] = false,
    listedPdbsOnly = false,
    claimedUid?: string,
  ) {
    const n = this.nodes.get(node);
    // As the real activity: another Node under the name than the claimed one shows none of its pods.
    const content = n
      ? {
          node: {
            exists: true,
            unschedulable: n.unschedulable,
            ...(n.releaseAnnotation ? { released: true } : {}),
            uid: n.uid,
          },
          ...(claimedUid !== undefined && claimedUid !== n.uid
            ? { pods: [], pdbs: [] }
            : this.nodePods(node, requested)),
        }
      : { node: { exists: false, unschedulable: false }, pods: [], pdbs: [] };
    return { content, fingerprint: observationFingerprint(content, pdbVersions, listedPdbsOnly) };
  }

  /** Consumes one injected fault of `activity`, if any: throws, or hangs (before or after the work). */
  private async faulted<T>(activity: keyof SimActivities, arg: unknown, work: () => Promise<T>): Promise<T> {
    const f = this.faults.find((x) => x.activity === activity && x.times > 0);
    if (!f) return work();
    f.times--;
    // A hang after the effect is recorded by the work itself (the call took effect; its answer is lost).
    if (!f.afterEffect) this.record(activity, arg, { fault: f.kind });
    else await work();
    if (f.kind === 'retryable') throw new Error(`injected failure of ${activity}`);
    if (f.kind === 'nonRetryable')
      throw ApplicationFailure.nonRetryable(
        `injected non-retryable failure of ${activity}`,
        'InjectedFailure',
      );
    await Context.current().sleep(f.hangMs);
    throw new Error(`injected hang of ${activity} ended`);
  }

  private evictionAnswer(pod: SimPod | undefined, uid: string): EvictResult {
    if (!pod || pod.gone || pod.uid !== uid) return { outcome: 'Gone' };
    if (pod.script?.length) return pod.script.shift()!;
    const key = `${pod.namespace}/${pod.name}`;
    // A pod already terminating: the eviction subresource answers 200 without a PDB check.
    if (pod.terminatingUntil !== undefined) return { outcome: 'Evicted' };
    const refusal = this.refusals.find((r) => r.times > 0 && (r.pod === undefined || r.pod === key));
    if (refusal) {
      refusal.times--;
      switch (refusal.kind) {
        case 'PdbProcessing':
          return {
            outcome: 'TooManyRequests',
            cause: 'DisruptionBudget',
            retryAfterSeconds: 10,
            ...(pod.pdbs?.[0] ? { pdb: pod.pdbs[0] } : {}),
            message: 'the disruption budget is still being processed by the server',
          };
        case 'Throttled':
          return {
            outcome: 'TooManyRequests',
            cause: 'Throttled',
            retryAfterSeconds: refusal.retryAfterSeconds ?? 1,
            message: 'Too many requests, please try again later.',
          };
        case 'RetryAfterZero':
          return {
            outcome: 'TooManyRequests',
            cause: 'Throttled',
            retryAfterSeconds: 0,
            message: 'Too many requests',
          };
        case 'UnknownPdb':
          return {
            outcome: 'TooManyRequests',
            cause: 'DisruptionBudget',
            pdb: UNKNOWN_PDB,
            message: `Cannot evict pod as it would violate the pod's disruption budget (${UNKNOWN_PDB}).`,
          };
        case 'Conflict':
          return { outcome: 'Retry', code: 409, reason: 'Conflict', message: 'the object has been modified' };
        case 'NamespaceTerminating':
          this.startTerminating(pod);
          return {
            outcome: 'Retry',
            code: 403,
            reason: 'NamespaceTerminating',
            message: `namespace ${pod.namespace} is being terminated`,
          };
      }
    }
    // A pod the API server evicts without a PDB check (src/drain/eviction-gate.ts).
    const pdbs = pod.pdbExempt ? [] : (pod.pdbs ?? []).filter((k) => this.pdbs.has(k));
    if (pdbs.length > 1)
      return {
        outcome: 'Failed',
        code: 500,
        reason: 'MultiplePodDisruptionBudgets',
        message: 'more than one PDB',
      };
    if (pdbs.length === 1 && (this.pdbs.get(pdbs[0]!) ?? 0) <= 0)
      return {
        outcome: 'TooManyRequests',
        cause: 'DisruptionBudget',
        pdb: pdbs[0]!,
        message: `Cannot evict pod as it would violate the pod's disruption budget.`,
      };
    return { outcome: 'Evicted' };
  }

  /** One eviction call's effect and answer. */
  private evict(input: { namespace: string; name: string; uid: string }): EvictResult {
    this.tick();
    const pod = this.pods.get(`${input.namespace}/${input.name}`);
    const res = this.evictionAnswer(pod, input.uid);
    if (res.outcome === 'Evicted' && pod) {
      pod.evictedTimes = (pod.evictedTimes ?? 0) + 1;
      if (pod.terminatingUntil === undefined) {
        this.startTerminating(pod);
        const pdb = pod.pdbExempt ? undefined : pod.pdbs?.find((k) => this.pdbs.has(k));
        if (pdb) {
          this.pdbs.set(pdb, (this.pdbs.get(pdb) ?? 0) - 1);
          this.bumpPdbVersion(pdb);
        }
      }
    }
    this.record('evictPod', input, res);
    return res;
  }

  activities(): SimActivities {
    // The real claim-cycle activity over the sim's nodes: a node's claim annotation is its
    // `heldBy`; the sim keeps the status of the plan under test only, so no other plan's waits are
    // read (a cycle through other plans is the e2e's to show).
    const claimCycle = createClaimCycleActivities({
      readNode: async (name) => {
        const n = this.nodes.get(name);
        if (!n) return undefined;
        return {
          metadata: {
            name,
            annotations: Object.fromEntries(
              n.heldBy !== undefined ? [[NODE_CLAIM_ANNOTATION, n.heldBy]] : [],
            ),
          },
        };
      },
      readPlan: async () => undefined,
    });
    return {
      claimWaitGraph: async (input) =>
        this.faulted('claimWaitGraph', input, async () => {
          const res = await claimCycle.claimWaitGraph(input);
          this.record('claimWaitGraph', input, { edges: res.edges.length });
          return res;
        }),
      restartDeployment: async (input) =>
        this.faulted('restartDeployment', input, async () => {
          const d = this.deployments.get(`${input.namespace}/${input.name}`);
          let res: Awaited<ReturnType<RemedyActivities['restartDeployment']>>;
          if (!d) res = { outcome: 'Failed', code: 404, message: `deployments "${input.name}" not found` };
          else if (d.restartedAt === input.restartedAt) res = { outcome: 'AlreadyRestarted' };
          else {
            d.restartedAt = input.restartedAt;
            d.rollouts++;
            // The new pod is Ready elsewhere, then the Deployment controller removes the old one.
            setTimeout(() => {
              for (const key of d.pods) this.pods.get(key)!.gone = true;
            }, this.readyDelayMs).unref();
            res = { outcome: 'Restarted' };
          }
          this.record('restartDeployment', input, res);
          return res;
        }),
      resolveNodes: async (input): Promise<ResolvedNodes> =>
        this.faulted('resolveNodes', input, async () => {
          const names = new Set(input.nodeNames ?? []);
          if (input.nodeSelector) for (const n of this.nodes.keys()) names.add(n);
          const nodes = [...names].filter((n) => this.nodes.has(n)).sort();
          const missing = [...names].filter((n) => !this.nodes.has(n)).sort();
          this.record('resolveNodes', input, { nodes, missing });
          return { nodes, missing };
        }),
      cordonNode: async ({ plan, node, nodeUid }): Promise<CordonResult> =>
        this.faulted('cordonNode', { node }, async () => {
          const delayMs = this.cordonDelayMs[node] ?? 0;
          if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
          const n = this.nodes.get(node);
          let res: CordonResult;
          if (!n) res = { outcome: 'NodeNotFound' };
          else if (nodeUid !== undefined && n.uid !== nodeUid)
            res = { outcome: 'NodeReplaced', nodeUid: n.uid };
          else if (this.ownClaim(n) && n.heldBy !== plan.uid)
            res = { outcome: 'HeldByOtherPlan', heldBy: n.heldBy! };
          else {
            if (!this.ownClaim(n)) {
              n.heldBy = plan.uid;
              n.wasUnschedulable = n.unschedulable;
              n.claimedUid = n.uid;
            }
            n.unschedulable = true;
            res = { outcome: 'Cordoned', wasUnschedulable: n.wasUnschedulable ?? false, nodeUid: n.uid };
          }
          this.record('cordonNode', { node }, res);
          return res;
        }),
      releaseNode: async ({ plan, node, uncordon, nodeUid }) =>
        this.faulted('releaseNode', { node, uncordon }, async () => {
          const n = this.nodes.get(node);
          // As the real activity: uncordoned only when it was cordoned, and why not otherwise.
          const replaced =
            n !== undefined &&
            ((nodeUid !== undefined && n.uid !== nodeUid) || (n.heldBy !== undefined && !this.ownClaim(n)));
          let res: { uncordoned: boolean; left?: NotUncordoned } = {
            uncordoned: false,
            left: !n ? 'gone' : replaced ? 'replaced' : 'notClaimed',
          };
          if (n && !replaced && n.heldBy === plan.uid) {
            if (!uncordon) res = { uncordoned: false, left: 'notAsked' };
            else if (n.wasUnschedulable) res = { uncordoned: false, left: 'wasUnschedulable' };
            else if (!n.unschedulable) res = { uncordoned: false, left: 'alreadySchedulable' };
            else {
              n.unschedulable = false;
              res = { uncordoned: true };
            }
            delete n.heldBy;
            delete n.wasUnschedulable;
            delete n.claimedUid;
            delete n.releaseAnnotation;
          }
          this.record('releaseNode', { node, uncordon }, res);
          return res;
        }),
      // Unlike the real activity, which waits up to maxWaitSeconds for a change, this one answers
      // "unchanged" after observePollMs of real time; the node then looks again only once its bound
      // (retryBackoff.maxSeconds) of workflow time has passed, so tests that need a node to see a
      // change soon after its last look use a short bound.
      observeNode: async (input): Promise<NodeObservation> =>
        this.faulted('observeNode', { node: input.node, since: input.since }, async () => {
          const { node, since, maxWaitSeconds } = input;
          let seen = this.observe(node, input.pdbs, input.pdbVersions, input.listedPdbsOnly, input.nodeUid);
          const waitMs = Math.min(this.observePollMs, Math.max(0, maxWaitSeconds) * 1000);
          const end = Date.now() + waitMs;
          while (since !== undefined && seen.fingerprint === since && Date.now() < end) {
            await new Promise((r) => setTimeout(r, 10));
            seen = this.observe(node, input.pdbs, input.pdbVersions, input.listedPdbsOnly, input.nodeUid);
          }
          const res: NodeObservation =
            since !== undefined && seen.fingerprint === since
              ? { changed: false, fingerprint: since }
              : { changed: true, fingerprint: seen.fingerprint, ...seen.content };
          this.record('observeNode', { node, since }, { changed: res.changed });
          return res;
        }),
      waitClaimReleased: async (input): Promise<ClaimWaitResult> =>
        this.faulted('waitClaimReleased', { node: input.node, heldBy: input.heldBy }, async () => {
          // As the real activity: at once when the node is gone or no longer held by `heldBy`, else
          // polls for up to `claimPollMs` of real time (heartbeating, cancellable), then StillHeld.
          const ctx = Context.current();
          const outcome = (): ClaimWaitResult['outcome'] | undefined => {
            const n = this.nodes.get(input.node);
            if (!n) return 'NodeNotFound';
            return n.heldBy === input.heldBy ? undefined : 'Released';
          };
          const end = Date.now() + Math.min(this.claimPollMs, Math.max(0, input.maxWaitSeconds) * 1000);
          let beat = Date.now();
          let seen = outcome();
          this.claimWaitsRunning++;
          try {
            while (seen === undefined && Date.now() < end) {
              await ctx.sleep(10); // throws the cancellation
              if (Date.now() - beat >= 1000) {
                ctx.heartbeat();
                beat = Date.now();
              }
              seen = outcome();
            }
          } finally {
            this.claimWaitsRunning--;
          }
          const res: ClaimWaitResult = { outcome: seen ?? 'StillHeld' };
          this.record('waitClaimReleased', { node: input.node, heldBy: input.heldBy }, res);
          return res;
        }),
      evictPod: async (input): Promise<EvictResult> =>
        this.faulted('evictPod', input, async () => {
          const pdbOf = this.pods
            .get(`${input.namespace}/${input.name}`)
            ?.pdbs?.find((k) => this.pdbs.has(k));
          if (pdbOf !== undefined) {
            const n = (this.inFlight.get(pdbOf) ?? 0) + 1;
            this.inFlight.set(pdbOf, n);
            this.maxInFlight.set(pdbOf, Math.max(n, this.maxInFlight.get(pdbOf) ?? 0));
            const allowed = this.pdbs.get(pdbOf) ?? 0;
            if (n > allowed) this.overBudget.push({ pdb: pdbOf, inFlight: n, allowed });
          }
          try {
            if (this.evictDelayMs > 0) await new Promise((r) => setTimeout(r, this.evictDelayMs));
            const result = this.evict(input);
            if (this.answerDelayMs > 0) await new Promise((r) => setTimeout(r, this.answerDelayMs));
            return result;
          } finally {
            if (pdbOf !== undefined) this.inFlight.set(pdbOf, (this.inFlight.get(pdbOf) ?? 1) - 1);
          }
        }),
      // DELETE without the Eviction API: PDBs are not consulted; the pod terminates for graceMs.
      deletePod: async (input) =>
        this.faulted('deletePod', input, async () => {
          this.tick();
          const pod = this.pods.get(`${input.namespace}/${input.name}`);
          if (!pod || pod.gone || pod.uid !== input.uid) return { outcome: 'Gone' as const };
          (pod.deletions ??= []).push({ atMs: serverNow(), gracePeriodSeconds: input.gracePeriodSeconds });
          this.startTerminating(pod);
          this.record('deletePod', input, { outcome: 'Deleted' });
          return { outcome: 'Deleted' as const };
        }),
      publishStatus: async (input) =>
        this.faulted('publishStatus', { phase: input.status.phase }, async () => {
          const last = this.lastStatus();
          if (last && statusEquals(last, input.status)) return { written: false, exists: true };
          this.statuses.push({ atMs: serverNow(), status: input.status });
          return { written: true, exists: true };
        }),
      // The status-write activity renders the status from the workflow's state as
      // src/activities/plan-status.ts does: the previous conditions are the stored status's.
      writePlanStatus: async ({ state }) =>
        this.faulted('writePlanStatus', { phase: state.state.phase }, async () => {
          const last = this.lastStatus();
          const status = renderPlanStatus({
            ...state,
            state: { ...state.state, conditions: last?.conditions ?? [] },
          });
          if (last && statusEquals(last, status)) return { written: false, exists: true };
          this.statuses.push({ atMs: serverNow(), status });
          return { written: true, exists: true };
        }),
      recordEvent: async (input) =>
        this.faulted('recordEvent', { reason: input.reason }, async () => {
          this.events.push({ type: input.type, reason: input.reason, message: input.message });
          this.record('recordEvent', { type: input.type, reason: input.reason }, undefined);
        }),
    };
  }
}
