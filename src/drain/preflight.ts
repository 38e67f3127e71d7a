/**
 * The preflight report builder: what a drain of a node would evict, skip and be blocked by, from
 * the node's pods, the PodDisruptionBudgets of their namespaces and the API server's answers to
 * dry-run evictions. Used by the `preflightNode` activity (for `spec.mode: Preflight` plans) and by
 * `drainflow preflight`, so both print the same report.
 *
 * The pods are classified with the drain's own rules ({@link classifyPods}, kubectl drain's); the
 * PodDisruptionBudget rules below are those of the eviction subresource
 * (k8s.io/kubernetes/pkg/registry/core/pod/storage/eviction.go), checked in its order:
 *
 * 1. A pod that is Pending (or finished, or terminating) is evicted without any PDB check.
 * 2. More than one PDB selecting the pod: refused (HTTP 500) → `MultiplePodDisruptionBudgets`.
 * 3. A pod that is not Ready (condition Ready not True) is evicted without spending a disruption
 *    when its PDB's `unhealthyPodEvictionPolicy` is `AlwaysAllow`, or when the budget is healthy
 *    (status.currentHealthy >= status.desiredHealthy > 0, the default `IfHealthyBudget`).
 * 4. status.observedGeneration < metadata.generation: refused (429, "still being processed") →
 *    `PdbNotSynced`; likewise a condition DisruptionAllowed False with reason SyncFailed (the
 *    disruption controller could not compute the budget and set disruptionsAllowed to 0).
 * 5. status.disruptionsAllowed <= 0: refused → `UnhealthyPodGuarded` for a pod not Ready (case 3
 *    did not apply), else `DisruptionBudget`.
 *
 * Cases 1 and 3 are {@link pdbExemption} (src/drain/eviction-gate.ts), the rule the drain evicts
 * by: such a pod is no blocker and needs no round of its PDB.
 *
 * Plus `karpenter.sh/do-not-disrupt: "true"` (a `DoNotDisrupt` blocker, which the API server does
 * not know; not with `podSelection.ignoreDoNotDisrupt`): like the drain, which never evicts such a
 * pod, the report does not list it to evict, counts it in no total or PDB round and sends it no
 * dry-run eviction; its other reasons (a PDB at 0, no controller) are named beside it. And a node
 * claimed by another plan. Pods the classification skips are listed with its reason, terminating
 * pods too; its `Block` decisions and any `Wait` other than `Terminating` (a pod waited for until it
 * finishes) are blockers. The rounds a PDB needs are ceil(pods behind it to evict /
 * disruptionsAllowed): the drain evicts at most disruptionsAllowed of them at once, then waits for
 * the replacements to become healthy.
 *
 * PURE and DETERMINISTIC: no I/O, no clock (the caller passes the time). Type-only imports.
 */
import type { PodSelection } from '../api/plan.js';
import { DO_NOT_DISRUPT_ANNOTATION, hasDoNotDisrupt } from './pod-policy.js';
import type {
  PreflightBlocker,
  PreflightNode,
  PreflightPdb,
  PreflightPod,
  PreflightRefusal,
  PreflightReport,
  PreflightSkipped,
} from '../api/preflight.js';
import {
  PREFLIGHT_LIST_CAP,
  PREFLIGHT_MESSAGE_CAP,
  PREFLIGHT_NODE_CAP,
  PREFLIGHT_PDB_CAP,
} from '../api/bounds.js';
import { DisruptionBlockKind, PodReason, PreflightReason } from '../api/reasons.js';
import type { EvictResult } from '../contract/eviction.js';
import { classifyPods, podKey, type PodInfo } from './pods.js';
import { exemptionOf, isPodReady } from './eviction-gate.js';
import {
  returnReason,
  returningClause,
  returningFields,
  type ReturningInput,
} from './preflight-returning.js';
import { compareStrings } from './conditions.js';
import { matchesLabelSelector } from './selector.js';
import type { DryRunVerdict, PreflightPdbInput } from './preflight-input.js';
import { diagnosePdb, pdbFields } from './pdb-diagnosis.js';
import { diagnosisMessage } from './pdb-diagnosis-words.js';

/** What the builder needs to know about one node. */
export interface PreflightNodeInput extends ReturningInput {
  node: string;
  /** spec.unschedulable of the node. */
  unschedulable?: boolean;
  /** The plan named by the node's claim annotation (maintenance.drainflow.dev/held-by), if any. */
  heldBy?: string;
  /** The plan doing the preflight (a claim by it is not a blocker); absent for the CLI. */
  planName?: string;
  /** Every pod bound to the node. */
  pods: readonly PodInfo[];
  /** The PDBs of the pods' namespaces (others are ignored). */
  pdbs: readonly PreflightPdbInput[];
  /** spec.podSelection with defaults applied. */
  selection: PodSelection;
  /** Dry-run answers by pod key (namespace/name); a pod to evict without one counts as not asked. */
  dryRun?: Readonly<Record<string, DryRunVerdict>>;
}

/** What one PDB means for one node's pods to evict (summed over nodes by {@link summarizePreflight}). */
export interface PreflightPdbUse {
  pdb: string;
  /** Pods of this node behind it that the drain would evict. */
  pods: number;
  disruptionsAllowed: number;
  currentHealthy?: number;
  desiredHealthy?: number;
}

/** The result of {@link buildPreflightNode}: the node's report and the PDBs its pods to evict sit behind. */
export interface NodePreflight {
  report: PreflightNode;
  pdbs: PreflightPdbUse[];
}

const pdbKey = (p: Pick<PreflightPdbInput, 'namespace' | 'name'>): string => `${p.namespace}/${p.name}`;

/** `text` cut to {@link PREFLIGHT_MESSAGE_CAP} characters (an ellipsis marks the cut). */
export function capMessage(text: string): string {
  return text.length <= PREFLIGHT_MESSAGE_CAP ? text : `${text.slice(0, PREFLIGHT_MESSAGE_CAP - 1)}…`;
}

/**
 * Whether the PDB's status is in sync, and why not: no status yet or status.observedGeneration
 * behind metadata.generation (the eviction subresource answers 429 "still being processed"), or
 * condition DisruptionAllowed False with reason SyncFailed (the disruption controller's fail-safe).
 * @returns undefined when in sync, else the reason in words.
 */
export function pdbNotSynced(pdb: PreflightPdbInput): string | undefined {
  const gen = pdb.generation ?? 0;
  if (!pdb.hasStatus) return 'has no status yet: the disruption controller has not processed it';
  if ((pdb.observedGeneration ?? 0) < gen)
    return `status.observedGeneration ${pdb.observedGeneration ?? 0} is behind metadata.generation ${gen}: the disruption controller has not processed its latest spec`;
  const failed = (pdb.conditions ?? []).find(
    (c) => c.type === 'DisruptionAllowed' && c.status === 'False' && c.reason === 'SyncFailed',
  );
  if (failed)
    return `the disruption controller failed to sync it (condition DisruptionAllowed False, reason SyncFailed${failed.message ? `: ${failed.message}` : ''})`;
  return undefined;
}

/** status.disruptionsAllowed as the eviction subresource sees it: 0 while the status is not in sync. */
export function allowedOf(pdb: PreflightPdbInput): number {
  if (pdbNotSynced(pdb) !== undefined) return 0;
  return pdb.disruptionsAllowed ?? 0;
}

/**
 * The dry-run verdict of an Eviction API answer: 2xx Accepted; 404 or a vanished pod Gone; 429,
 * 500 (several PDBs), 403, 409 and other 4xx Refused with the answer's reason. A call that got no
 * answer (the caller passes the error) is `Error`.
 */
export function dryRunVerdict(answer: EvictResult | { error: string }): DryRunVerdict {
  if ('error' in answer)
    return { verdict: 'Error', reason: PreflightReason.NoAnswer, message: capMessage(answer.error) };
  switch (answer.outcome) {
    case 'Evicted':
      return { verdict: 'Accepted' };
    case 'Gone':
      return { verdict: 'Gone', message: 'the pod is gone' };
    case 'TooManyRequests':
      return {
        verdict: 'Refused',
        code: 429,
        reason: answer.cause,
        ...(answer.pdb ? { pdb: answer.pdb } : {}),
        message: capMessage(answer.message),
      };
    case 'Retry':
    case 'Failed':
      return {
        verdict: 'Refused',
        code: answer.code,
        reason: answer.reason,
        message: capMessage(answer.message),
      };
  }
}

/** The pods a drain of the node would evict (`Evict` decisions): those a preflight sends a dry-run eviction for. */
export function podsToDryRun(
  pods: readonly PodInfo[],
  selection: PodSelection,
): Array<{ namespace: string; name: string; uid: string }> {
  const byKey = new Map(pods.map((p) => [podKey(p), p]));
  // The plan's own selection: a karpenter.sh/do-not-disrupt pod (not ignored) is a blocker a drain
  // never evicts, so it gets no dry-run eviction either.
  return classifyPods(pods, selection)
    .filter((d) => d.action === 'Evict')
    .map((d) => {
      const p = byKey.get(d.pod)!;
      return { namespace: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid };
    });
}

/** The PDB blocker of one pod to evict, per the eviction subresource's rules (see the module comment). */
function pdbBlocker(pod: PodInfo, key: string, pdbs: PreflightPdbInput[]): PreflightBlocker | undefined {
  if (pdbs.length === 0 || exemptionOf(pod, pdbs) === 'NotRunning') return undefined;
  const names = pdbs.map(pdbKey).sort(compareStrings);
  if (pdbs.length > 1)
    return {
      pod: key,
      pdbs: names,
      reason: PreflightReason.MultiplePodDisruptionBudgets,
      message: `selected by ${names.length} PodDisruptionBudgets (${names.join(', ')}): the eviction subresource refuses a pod under more than one (HTTP 500); change their selectors so one selects it`,
    };
  const pdb = pdbs[0]!;
  const name = names[0]!;
  if (exemptionOf(pod, pdbs) !== undefined) return undefined;
  const stale = pdbNotSynced(pdb);
  if (stale)
    return {
      pod: key,
      pdbs: [name],
      reason: PreflightReason.PdbNotSynced,
      message: capMessage(`PodDisruptionBudget ${name} ${stale}; its pods are not evicted until it is`),
    };
  const allowed = pdb.disruptionsAllowed ?? 0;
  if (allowed > 0) return undefined;
  if (!isPodReady(pod))
    return {
      pod: key,
      pdbs: [name],
      reason: PreflightReason.UnhealthyPodGuarded,
      message: `pod is not Ready and PodDisruptionBudget ${name} (unhealthyPodEvictionPolicy ${pdb.unhealthyPodEvictionPolicy ?? 'IfHealthyBudget, the default'}) is not healthy (currentHealthy ${pdb.currentHealthy ?? 0} < desiredHealthy ${pdb.desiredHealthy ?? 0}) and allows ${allowed} disruptions: set unhealthyPodEvictionPolicy AlwaysAllow on it, or fix the pods`,
    };
  // Why it blocks (src/drain/pdb-diagnosis.ts), from the PDB and this pod: Never shows before the drain.
  const d = diagnosePdb({
    pdb: { key: name, ...pdbFields(pdb, allowed) },
    node: '',
    pods: [{ key, ready: true, ...(pod.status?.phase ? { phase: pod.status.phase } : {}) }],
  });
  return {
    pod: key,
    pdbs: [name],
    reason: PreflightReason.DisruptionBudget,
    ...(d ? { kind: d.kind } : {}),
    message: `PodDisruptionBudget ${name} allows ${allowed} disruptions (currentHealthy ${pdb.currentHealthy ?? 0}, desiredHealthy ${pdb.desiredHealthy ?? 0}): ${d?.kind === DisruptionBlockKind.Never ? diagnosisMessage(d) : 'the drain waits until it allows one'}`,
  };
}

/**
 * Builds the preflight of one node (see the module comment for the rules). Lists are sorted by pod
 * and capped at {@link PREFLIGHT_LIST_CAP}; counts are exact.
 *
 * @returns the node's report, and per PDB behind its pods to evict the pod count and the budget.
 */
export function buildPreflightNode(input: PreflightNodeInput): NodePreflight {
  const { selection } = input;
  // The do-not-disrupt annotation is checked below, so that the report names every reason a pod is
  // held (classifyPods would stop at the annotation).
  const decisions = classifyPods(input.pods, { ...selection, ignoreDoNotDisrupt: true });
  const byKey = new Map(input.pods.map((p) => [podKey(p), p]));
  const pdbsIn = new Map<string, PreflightPdbInput[]>();
  for (const p of input.pdbs) {
    const list = pdbsIn.get(p.namespace) ?? [];
    list.push(p);
    pdbsIn.set(p.namespace, list);
  }
  const ignoreDoNotDisrupt = selection.ignoreDoNotDisrupt === true;
  /** The DoNotDisrupt blocker of a pod annotated karpenter.sh/do-not-disrupt "true", unless the plan ignores it. */
  const doNotDisrupt = (pod: PodInfo, key: string): PreflightBlocker | undefined =>
    !ignoreDoNotDisrupt && hasDoNotDisrupt(pod.metadata.annotations)
      ? {
          pod: key,
          reason: PreflightReason.DoNotDisrupt,
          message: `pod is annotated ${DO_NOT_DISRUPT_ANNOTATION}: "true": it must not be disrupted voluntarily; remove the annotation or move the pod`,
        }
      : undefined;

  const evict: PreflightPod[] = [];
  const skipped: PreflightSkipped[] = [];
  const blockers: PreflightBlocker[] = [];
  const refusals: PreflightRefusal[] = [];
  const uses = new Map<string, PreflightPdbUse>();
  let accepted = 0;
  const returning: Parameters<typeof returningFields>[0] = [];

  if (input.heldBy && input.heldBy !== input.planName)
    blockers.push({
      reason: PreflightReason.NodeHeldByOtherPlan,
      message: `node ${input.node} is held by plan ${input.heldBy}: a drain waits until that plan hands it back`,
    });

  for (const d of decisions) {
    const pod = byKey.get(d.pod)!;
    // A terminating pod is going anyway: skipped. Any other Wait (a pod the drain waits for until
    // it finishes) holds the node until then: a blocker, under the classification's reason.
    if (d.action === 'Skip' || (d.action === 'Wait' && d.reason === PodReason.Terminating)) {
      skipped.push({ pod: d.pod, reason: d.reason, message: capMessage(d.message) });
      continue;
    }
    const held = doNotDisrupt(pod, d.pod);
    if (d.action === 'Block' || d.action === 'Wait') {
      blockers.push({ pod: d.pod, reason: d.reason, message: capMessage(d.message) });
      if (held) blockers.push(held);
      continue;
    }
    const mine = (pdbsIn.get(pod.metadata.namespace) ?? []).filter(
      (p) => p.selector !== undefined && matchesLabelSelector(pod.metadata.labels, p.selector),
    );
    if (held) {
      // A drain never evicts it (src/drain/pods.ts blocks it): a blocker only, not a pod to evict,
      // no dry-run, no PDB round. Its PDB blocker is named too, so removing the annotation holds no surprise.
      blockers.push(held);
      const pdb = pdbBlocker(pod, d.pod, mine);
      if (pdb) blockers.push(pdb);
      continue;
    }
    // Evict: the PDB rules and the server's verdict. A pod the API server evicts without a PDB
    // check (not running; not Ready under its PDB's unhealthyPodEvictionPolicy) spends no
    // disruption: it needs no round of its PDB (the drain evicts it at once too).
    const names = mine.map(pdbKey).sort(compareStrings);
    const exemption = exemptionOf(pod, mine);
    for (const p of exemption !== undefined ? [] : mine) {
      const k = pdbKey(p);
      const use = uses.get(k) ?? {
        pdb: k,
        pods: 0,
        disruptionsAllowed: allowedOf(p),
        ...(p.currentHealthy !== undefined ? { currentHealthy: p.currentHealthy } : {}),
        ...(p.desiredHealthy !== undefined ? { desiredHealthy: p.desiredHealthy } : {}),
      };
      use.pods++;
      uses.set(k, use);
    }
    const blocker = pdbBlocker(pod, d.pod, mine);
    if (blocker) blockers.push(blocker);
    const verdict = input.dryRun?.[d.pod];
    if (verdict?.verdict === 'Accepted') accepted++;
    else if (verdict && verdict.verdict !== 'Gone')
      refusals.push({
        pod: d.pod,
        ...(verdict.code !== undefined ? { code: verdict.code } : {}),
        reason: verdict.reason ?? verdict.verdict,
        ...(verdict.pdb ? { pdb: verdict.pdb } : {}),
        message: verdict.message ?? '',
      });
    const returns = returnReason(pod, input.node, input.owners);
    if (returns) returning.push({ pod, reason: returns });
    evict.push({
      pod: d.pod,
      ...(names.length ? { pdbs: names } : {}),
      ...(exemption ? { pdbExempt: exemption } : {}),
      ...(returns ? { returns } : {}),
      ...(verdict ? { dryRun: verdict.verdict } : {}),
    });
  }

  blockers.sort(
    (a, b) =>
      compareStrings(a.pod ?? '', b.pod ?? '') ||
      compareStrings(a.reason, b.reason) ||
      compareStrings(a.message, b.message),
  );
  /** `{ [key]: list }` capped at PREFLIGHT_LIST_CAP, or nothing for an empty list. */
  const cap = <K extends string, T>(key: K, list: T[]) =>
    (list.length ? { [key]: list.slice(0, PREFLIGHT_LIST_CAP) } : {}) as Partial<Record<K, T[]>>;
  const podsBlocked = new Set(blockers.filter((b) => b.pod).map((b) => b.pod)).size;
  const report: PreflightNode = {
    name: input.node,
    ...(input.unschedulable ? { unschedulable: true } : {}),
    podsToEvict: evict.length,
    podsSkipped: skipped.length,
    ...returningFields(returning, input),
    podsBlocked,
    blockerCount: blockers.length,
    dryRunAccepted: accepted,
    dryRunRefused: refusals.length,
    ...cap('evict', evict),
    ...cap('skipped', skipped),
    ...cap('blockers', blockers),
    ...cap('dryRunRefusals', refusals),
  };
  return { report, pdbs: [...uses.values()].sort((x, y) => compareStrings(x.pdb, y.pdb)) };
}

/** The report of a node that could not be examined. */
export function failedPreflightNode(node: string, error: string): NodePreflight {
  return {
    report: {
      name: node,
      podsToEvict: 0,
      podsSkipped: 0,
      podsBlocked: 0,
      blockerCount: 0,
      dryRunAccepted: 0,
      dryRunRefused: 0,
      error: capMessage(error),
    },
    pdbs: [],
  };
}

/** Whether a node's report shows anything that would keep its drain from finishing. */
export function nodeBlocked(n: PreflightNode): boolean {
  return n.blockerCount > 0 || n.dryRunRefused > 0 || n.error !== undefined;
}

/**
 * The plan-wide report from the nodes' results: totals, per PDB the rounds it needs over every node
 * (ceil(pods / disruptionsAllowed); none when it allows 0), nodes with blockers first (then by
 * name) capped at {@link PREFLIGHT_NODE_CAP}, PDBs slowest first capped at {@link PREFLIGHT_PDB_CAP}.
 *
 * @param nodes one result per node examined.
 * @param nowMs the time the report is completed, ms since epoch (absent: no completedAt).
 */
export function summarizePreflight(nodes: readonly NodePreflight[], nowMs?: number): PreflightReport {
  const sum = (f: (n: PreflightNode) => number) => nodes.reduce((a, n) => a + f(n.report), 0);
  const byPdb = new Map<string, PreflightPdbUse>();
  for (const n of nodes)
    for (const u of n.pdbs) {
      const prev = byPdb.get(u.pdb);
      // The same PDB seen from two nodes: the pods add up; the budget is the one last read.
      byPdb.set(u.pdb, prev ? { ...u, pods: prev.pods + u.pods } : { ...u });
    }
  const pdbs: PreflightPdb[] = [...byPdb.values()].map((u) => {
    const rounds = u.disruptionsAllowed > 0 ? Math.ceil(u.pods / u.disruptionsAllowed) : undefined;
    return {
      pdb: u.pdb,
      podsToEvict: u.pods,
      disruptionsAllowed: u.disruptionsAllowed,
      ...(u.currentHealthy !== undefined ? { currentHealthy: u.currentHealthy } : {}),
      ...(u.desiredHealthy !== undefined ? { desiredHealthy: u.desiredHealthy } : {}),
      ...(rounds !== undefined ? { rounds } : {}),
      message:
        rounds === undefined
          ? `${u.pods} pod(s) to evict behind it and it allows ${u.disruptionsAllowed} disruptions: no round can start until it allows one`
          : `${u.pods} pod(s) to evict, ${u.disruptionsAllowed} at a time: ${rounds} round(s), each waiting for the replacements to become healthy`,
    };
  });
  pdbs.sort(
    (a, b) =>
      (a.rounds === undefined ? 0 : 1) - (b.rounds === undefined ? 0 : 1) ||
      (b.rounds ?? 0) - (a.rounds ?? 0) ||
      compareStrings(a.pdb, b.pdb),
  );
  const rounds = pdbs.map((p) => p.rounds).filter((r): r is number => r !== undefined);
  const maxRounds = rounds.length ? Math.max(...rounds) : undefined;
  const ordered = nodes
    .map((n) => n.report)
    .sort((a, b) => Number(nodeBlocked(b)) - Number(nodeBlocked(a)) || compareStrings(a.name, b.name));
  const nodesBlocked = ordered.filter(nodeBlocked).length;
  const report: Omit<PreflightReport, 'summary'> = {
    ...(nowMs !== undefined ? { completedAt: new Date(nowMs).toISOString() } : {}),
    nodesExamined: nodes.length,
    nodesBlocked,
    podsToEvict: sum((n) => n.podsToEvict),
    podsSkipped: sum((n) => n.podsSkipped),
    blockerCount: sum((n) => n.blockerCount),
    dryRunAccepted: sum((n) => n.dryRunAccepted),
    dryRunRefused: sum((n) => n.dryRunRefused),
    ...(maxRounds !== undefined ? { maxRounds } : {}),
    nodes: ordered.slice(0, PREFLIGHT_NODE_CAP),
    ...(pdbs.length ? { pdbs: pdbs.slice(0, PREFLIGHT_PDB_CAP) } : {}),
  };
  const errors = ordered.filter((n) => n.error !== undefined).length;
  const podsReturning = sum((n) => n.podsReturning ?? 0);
  const stuck = pdbs.filter((p) => p.rounds === undefined).map((p) => p.pdb);
  const summary =
    `${report.nodesExamined} node(s) examined, nothing cordoned or evicted: ${report.podsToEvict} pod(s) to evict, ` +
    `${report.podsSkipped} skipped, ${report.blockerCount} blocker(s) on ${nodesBlocked} node(s)` +
    `; dry-run evictions: ${report.dryRunAccepted} accepted, ${report.dryRunRefused} refused` +
    roundsClause(stuck, maxRounds) +
    returningClause(nodes.map((n) => n.report)) +
    (errors ? `; ${errors} node(s) could not be examined` : '');
  return { summary, ...report, ...(podsReturning ? { podsReturning } : {}) };
}

/**
 * The summary's clause on PodDisruptionBudget rounds. A PDB allowing 0 disruptions with pods behind
 * it holds the drain whatever the others need, so it comes first: `; PodDisruptionBudget ns/db
 * allows no disruption: the drain cannot finish while it does (the others need at most 4
 * round(s))`. Else the slowest PDB's rounds; empty without PDBs.
 *
 * @param stuck the PDBs allowing 0 (sorted), `maxRounds` the most rounds among the others.
 */
export function roundsClause(stuck: readonly string[], maxRounds: number | undefined): string {
  const others = maxRounds !== undefined ? ` (the others need at most ${maxRounds} round(s))` : '';
  if (stuck.length === 1)
    return `; PodDisruptionBudget ${stuck[0]} allows no disruption: the drain cannot finish while it does${others}`;
  if (stuck.length > 1) {
    const shown = stuck.slice(0, 3).join(', ');
    const more = stuck.length > 3 ? ` and ${stuck.length - 3} more` : '';
    return `; ${stuck.length} PodDisruptionBudgets allow no disruption (${shown}${more}): the drain cannot finish while they do${others}`;
  }
  return maxRounds !== undefined ? `; the slowest PodDisruptionBudget needs ${maxRounds} round(s)` : '';
}

/** The plan reason of a finished preflight: PreflightIncomplete, BlockersFound or NoBlockers. */
export function preflightOutcome(report: PreflightReport): string {
  if (report.nodes.some((n) => n.error !== undefined)) return PreflightReason.PreflightIncomplete;
  return report.nodesBlocked > 0 ? PreflightReason.BlockersFound : PreflightReason.NoBlockers;
}
