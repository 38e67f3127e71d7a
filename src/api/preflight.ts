/**
 * Preflight (`spec.mode: Preflight`, `drainflow preflight`): the words and the report shape.
 *
 * A preflight resolves the plan's nodes and, without cordoning or evicting anything, reports per
 * node what a drain would evict, what it would skip and why, what would block it, and what the API
 * server itself answers to a dry-run eviction (`dryRun: ["All"]`: admission and the
 * PodDisruptionBudget check run, nothing is deleted and no budget is spent). The report is written
 * to `status.preflight` (see {@link PreflightReportSchema}); its lists are capped, its counts are not.
 *
 * Pure: zod schemas only (used by src/api/plan.ts). Workflow code imports only its types; the
 * size caps it needs are in src/api/bounds.ts.
 */
import { z } from 'zod';
import { DisruptionBlockKind } from './reasons.js';
import { PREFLIGHT_LIST_CAP, PREFLIGHT_NODE_CAP, PREFLIGHT_PDB_CAP } from './bounds.js';

/** `spec.mode`: Drain (the default) or Preflight. */
export const PlanModeSchema = z
  .enum(['Drain', 'Preflight'])
  .describe(
    'Drain: cordon and drain the nodes. Preflight: resolve the nodes and report, without cordoning or evicting anything, what a drain would evict, skip and be blocked by, with the API server\'s verdict from dry-run evictions (dryRun: ["All"]) and the rounds each PodDisruptionBudget needs; the plan ends in phase Previewed with the report in status.preflight.',
  );
/** `spec.mode` (see {@link PlanModeSchema}). */
export type PlanMode = z.infer<typeof PlanModeSchema>;

/** Messages of {@link previewSpecIssues} (shared with the CRD's CEL rule). */
export const PREVIEW_MESSAGES = {
  paused:
    'must not be true with mode Preflight: a preview cordons and evicts nothing, so there is nothing to pause (abort or delete the plan to stop it)',
};

/**
 * What spec.mode Preflight refuses (the CRD's CEL rule says the same): `paused: true`. A preview
 * holds nothing that a pause could stop; refusing it beats a plan that reads Paused and goes on.
 */
export function previewSpecIssues(spec: { mode?: string; paused?: boolean }): {
  path: string[];
  message: string;
}[] {
  return spec.mode === 'Preflight' && spec.paused === true
    ? [{ path: ['paused'], message: PREVIEW_MESSAGES.paused }]
    : [];
}

/** One pod a drain would evict. */
export const PreflightPodSchema = z
  .object({
    pod: z.string().describe('The pod as namespace/name.'),
    pdbs: z
      .array(z.string())
      .optional()
      .describe('The PodDisruptionBudgets selecting it, as namespace/name (absent: none).'),
    pdbExempt: z
      .string()
      .optional()
      .describe(
        'Set when the API server evicts it without a PodDisruptionBudget check: NotRunning (not Running), UnhealthyPodEvictionPolicy (not Ready and its PDB lets an unhealthy pod go). It needs no disruption.',
      ),
    returns: z
      .string()
      .optional()
      .describe(
        "ReturnsToNode warning: NodeNameInTemplate when its controller's pod template sets spec.nodeName to this node, ToleratesCordon or PinnedToNode when it tolerates the cordon (node.kubernetes.io/unschedulable): its replacement may come back to the node; the drain evicts it once and leaves a pod that comes back.",
      ),
    dryRun: z
      .string()
      .optional()
      .describe(
        "The API server's answer to a dry-run eviction: Accepted, Refused, Gone or Error (absent: not asked).",
      ),
  })
  .strict();
export type PreflightPod = z.infer<typeof PreflightPodSchema>;

/** A workload whose pods on the node would come back after their eviction (a warning, not a blocker). */
export const PreflightReturningSchema = z
  .object({
    workload: z
      .string()
      .describe(
        "Kind namespace/name of the workload: the Deployment of a ReplicaSet, the CronJob of a Job, else the pods' controller.",
      ),
    reason: z
      .string()
      .describe(
        'Why they come back: NodeNameInTemplate (its pod template sets spec.nodeName to this node), PinnedToNode (they tolerate the cordon and may run on this node only), ToleratesCordon (they tolerate the cordon).',
      ),
    pods: z.number().int().describe('Its pods on the node that a drain would evict.'),
    message: z.string().describe('What the drain does with them and what the admin can do.'),
  })
  .strict();
export type PreflightReturning = z.infer<typeof PreflightReturningSchema>;

/** One pod a drain would leave alone (or wait for), and why. */
export const PreflightSkippedSchema = z
  .object({
    pod: z.string().describe('The pod as namespace/name.'),
    reason: z
      .string()
      .describe('CamelCase reason, e.g. DaemonSetPod, MirrorPod, PodFinished, NotSelected, Terminating.'),
    message: z.string().describe('Human-readable details.'),
  })
  .strict();
export type PreflightSkipped = z.infer<typeof PreflightSkippedSchema>;

/** One thing that would keep a node from being drained. */
export const PreflightBlockerSchema = z
  .object({
    pod: z
      .string()
      .optional()
      .describe('The blocking pod as namespace/name (absent for a node-level blocker).'),
    pdbs: z.array(z.string()).optional().describe('The PodDisruptionBudgets involved, as namespace/name.'),
    reason: z
      .string()
      .describe(
        'CamelCase reason: NoController, EmptyDirData, DaemonSetPod, DisruptionBudget, MultiplePodDisruptionBudgets, PdbNotSynced, UnhealthyPodGuarded, DoNotDisrupt, NodeHeldByOtherPlan.',
      ),
    kind: z
      .enum(DisruptionBlockKind)
      .optional()
      .describe(
        "Reason DisruptionBudget: why the PodDisruptionBudget blocks, as status.nodes[].blockedBy[].kind (from the PDB and this node's pods: Never, or Transient with how many more pods must become Ready).",
      ),
    message: z.string().describe('Human-readable details, with what would lift it.'),
  })
  .strict();
export type PreflightBlocker = z.infer<typeof PreflightBlockerSchema>;

/** The API server's answer to one dry-run eviction that was not an acceptance. */
export const PreflightRefusalSchema = z
  .object({
    pod: z.string().describe('The pod as namespace/name.'),
    code: z.number().int().optional().describe('HTTP status code of the answer (absent: no answer).'),
    reason: z
      .string()
      .describe(
        'CamelCase reason, e.g. DisruptionBudget (429), MultiplePodDisruptionBudgets (500), Forbidden.',
      ),
    pdb: z.string().optional().describe('The PodDisruptionBudget the server named, as namespace/name.'),
    message: z.string().describe("The server's message."),
  })
  .strict();
export type PreflightRefusal = z.infer<typeof PreflightRefusalSchema>;

/** The preflight of one node. */
export const PreflightNodeSchema = z
  .object({
    name: z.string().describe('Node name.'),
    unschedulable: z.boolean().optional().describe('True when the node is already cordoned.'),
    podsToEvict: z.number().int().describe('Pods a drain would evict (blocked ones included).'),
    podsSkipped: z.number().int().describe('Pods a drain would leave alone or only wait for.'),
    podsReturning: z
      .number()
      .int()
      .optional()
      .describe(
        'Of podsToEvict, the pods whose replacements would come back to the node (ReturnsToNode warning): their pod template sets spec.nodeName to it, or they tolerate the cordon.',
      ),
    returning: z
      .array(PreflightReturningSchema)
      .optional()
      .describe(
        `The workloads of podsReturning, sorted, at most ${PREFLIGHT_LIST_CAP}: the drain evicts their pods once and ends the node Drained with the replacements that come back.`,
      ),
    ownersUnread: z
      .number()
      .int()
      .optional()
      .describe(
        'Controllers of pods to evict that could not be read (e.g. no RBAC get on replicasets, statefulsets, jobs or replicationcontrollers): their pod templates were not checked for spec.nodeName.',
      ),
    podsBlocked: z.number().int().describe('Pods with at least one blocker.'),
    blockerCount: z.number().int().describe('Blockers found (each listed in blockers, up to the cap).'),
    dryRunAccepted: z.number().int().describe('Dry-run evictions the API server accepted.'),
    dryRunRefused: z
      .number()
      .int()
      .describe('Dry-run evictions the API server refused (or that got no answer).'),
    evict: z
      .array(PreflightPodSchema)
      .optional()
      .describe(`Pods a drain would evict, sorted, at most ${PREFLIGHT_LIST_CAP}.`),
    skipped: z
      .array(PreflightSkippedSchema)
      .optional()
      .describe(`Pods a drain would skip and why, sorted, at most ${PREFLIGHT_LIST_CAP}.`),
    blockers: z
      .array(PreflightBlockerSchema)
      .optional()
      .describe(`What would block the drain, sorted by pod, at most ${PREFLIGHT_LIST_CAP}.`),
    dryRunRefusals: z
      .array(PreflightRefusalSchema)
      .optional()
      .describe(
        `The API server's refusals of dry-run evictions, sorted by pod, at most ${PREFLIGHT_LIST_CAP}.`,
      ),
    error: z.string().optional().describe('Why the node could not be examined (then the counts are 0).'),
  })
  .strict();
export type PreflightNode = z.infer<typeof PreflightNodeSchema>;

/** What one PodDisruptionBudget allows and how many rounds of evictions it needs. */
export const PreflightPdbSchema = z
  .object({
    pdb: z.string().describe('The PodDisruptionBudget as namespace/name.'),
    podsToEvict: z
      .number()
      .int()
      .describe('Pods behind it that the drain would evict, over every node examined.'),
    disruptionsAllowed: z
      .number()
      .int()
      .describe('status.disruptionsAllowed (0 while its status is not in sync).'),
    currentHealthy: z.number().int().optional().describe('status.currentHealthy.'),
    desiredHealthy: z.number().int().optional().describe('status.desiredHealthy.'),
    rounds: z
      .number()
      .int()
      .optional()
      .describe(
        "ceil(podsToEvict / disruptionsAllowed): evictions in rounds, each waiting for the evicted pods' replacements to become healthy. Absent when it allows 0 disruptions (no round can start).",
      ),
    message: z.string().describe('The estimate in words.'),
  })
  .strict();
export type PreflightPdb = z.infer<typeof PreflightPdbSchema>;

/** status.preflight: the report of a Preflight plan (and the output of `drainflow preflight`). */
export const PreflightReportSchema = z
  .object({
    completedAt: z.string().optional().describe('RFC 3339 time the report was completed.'),
    summary: z.string().describe('The report in one sentence.'),
    nodesExamined: z.number().int().describe('Nodes examined.'),
    nodesBlocked: z.number().int().describe('Nodes with at least one blocker, refusal or error.'),
    podsToEvict: z.number().int().describe('Pods a drain would evict, over all nodes.'),
    podsSkipped: z.number().int().describe('Pods a drain would skip, over all nodes.'),
    podsReturning: z
      .number()
      .int()
      .optional()
      .describe(
        'Pods to evict whose replacements would come back to their node (pinned by their template, or tolerating the cordon), over all nodes (a warning).',
      ),
    blockerCount: z.number().int().describe('Blockers found, over all nodes.'),
    dryRunAccepted: z.number().int().describe('Dry-run evictions accepted, over all nodes.'),
    dryRunRefused: z.number().int().describe('Dry-run evictions refused, over all nodes.'),
    maxRounds: z
      .number()
      .int()
      .optional()
      .describe(
        'The most rounds any PodDisruptionBudget needs (absent: no PodDisruptionBudget, or one allowing 0).',
      ),
    nodes: z
      .array(PreflightNodeSchema)
      .describe(
        `Per-node reports, nodes with blockers first, at most ${PREFLIGHT_NODE_CAP} (every node is counted).`,
      ),
    pdbs: z
      .array(PreflightPdbSchema)
      .optional()
      .describe(
        `PodDisruptionBudgets behind the pods to evict, slowest first, at most ${PREFLIGHT_PDB_CAP}.`,
      ),
  })
  .strict();
/** status.preflight (see {@link PreflightReportSchema}). */
export type PreflightReport = z.infer<typeof PreflightReportSchema>;
