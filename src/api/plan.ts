/**
 * The MaintenancePlan API (`maintenance.drainflow.dev/v1alpha1`, cluster-scoped, short name `mp`).
 *
 * These zod schemas are the single source of truth: the TypeScript types are inferred from them and
 * the CRD's OpenAPI v3 schema in `deploy/crds/` is generated from them (`npm run gen:crd`; a test
 * checks the committed YAML is current). Every `.describe()` text becomes the `kubectl explain` text.
 *
 * Units: every `*Seconds` field is in seconds; every time in status is an RFC 3339 string.
 */
import { z } from 'zod';
import {
  DEFAULT_REMEDY_AFTER_SECONDS,
  MAX_DRAIN_TIMEOUT_SECONDS,
  MAX_PLAN_NODES,
  MAX_REMEDY_AFTER_SECONDS,
  MAX_UNAVAILABLE_NODES,
} from './bounds.js';
import {
  LABEL_KEY,
  LABEL_VALUE,
  NAMESPACE_NAME,
  NODE_NAME,
  isLabelKey,
  type StringFormat,
} from './formats.js';
import { WindowFields, WindowStatusSchema } from './windows.js';
import { PlanModeSchema, PreflightReportSchema, previewSpecIssues } from './preflight.js';
import { specCoherenceIssues } from './spec-coherence.js';
import { DisruptionBlockKind, HookPhase, NodePhase, PlanPhase, RemedyKind } from './reasons.js';
import { JobTemplateSchema } from './hook-job.js';

export const GROUP = 'maintenance.drainflow.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'MaintenancePlan';
export const PLURAL = 'maintenanceplans';
export const SINGULAR = 'maintenanceplan';
export const SHORT_NAMES = ['mp'];
/** Finalizer the operator puts on every plan so deletion hands the nodes back first. */
export const FINALIZER = `${GROUP}/cleanup`;
/** Annotation on a Node naming the plan that cordoned it (`<plan name>`): the plan's claim on the node. */
export const NODE_CLAIM_ANNOTATION = `${GROUP}/held-by`;
/**
 * Annotation on a Node holding the `metadata.uid` of the plan named by {@link NODE_CLAIM_ANNOTATION}, so a
 * plan deleted and re-created under the same name is not mistaken for the one that claimed the node.
 */
export const NODE_CLAIM_UID_ANNOTATION = `${GROUP}/held-by-uid`;
/**
 * Annotation on a Node holding its own `metadata.uid` when the plan claimed it. A Node deleted and
 * created again under the same name is another object with another uid (the API server assigns a
 * new one); a claim copied onto it (a Node re-created from a saved manifest) then names a node that
 * is gone, and counts as no claim (src/k8s/node-claim.ts heldBy).
 */
export const NODE_CLAIM_NODE_UID_ANNOTATION = `${GROUP}/claimed-node-uid`;
/** Annotation on a Node recording whether it was unschedulable before the plan cordoned it. */
export const NODE_WAS_UNSCHEDULABLE_ANNOTATION = `${GROUP}/was-unschedulable`;

/** A zod string of a {@link StringFormat}, refused with a message naming what is allowed. */
function formatted(f: StringFormat): z.ZodString {
  return z
    .string()
    .max(f.maxLength)
    .regex(f.pattern, { message: `must be ${f.name}: ${f.allowed}` });
}

/**
 * Bounds of a label selector. Kubernetes sets none, but the API server only accepts CEL rules whose
 * estimated cost is bounded, and the key/value checks run once per entry.
 */
export const MAX_SELECTOR_LABELS = 64;
/** Upper bound of matchExpressions, and of the values of one requirement. See {@link MAX_SELECTOR_LABELS}. */
export const MAX_SELECTOR_EXPRESSIONS = 64;
export const MAX_SELECTOR_VALUES = 256;

/** The operators of a selector requirement that need values. */
export const OPERATORS_WITH_VALUES = ['In', 'NotIn'] as const;
/** The operators of a selector requirement that forbid values. */
export const OPERATORS_WITHOUT_VALUES = ['Exists', 'DoesNotExist'] as const;

/** The size bounds of a label selector schema (see {@link MAX_SELECTOR_LABELS}). */
export interface SelectorBounds {
  labels: number;
  expressions: number;
  values: number;
}

/**
 * metav1.LabelSelectorRequirement with at most `maxValues` values. Like the API server's own
 * selector validation, In and NotIn need at least one value and Exists and DoesNotExist take none.
 */
function selectorRequirementSchema(maxValues: number) {
  return z
    .object({
      key: formatted(LABEL_KEY)
        .refine(isLabelKey, { message: `must be ${LABEL_KEY.name}: ${LABEL_KEY.allowed}` })
        .describe('The label key that the selector applies to.'),
      operator: z
        .enum([...OPERATORS_WITH_VALUES, ...OPERATORS_WITHOUT_VALUES])
        .describe("A key's relationship to a set of values: In, NotIn, Exists or DoesNotExist."),
      values: z
        .array(formatted(LABEL_VALUE))
        .max(maxValues)
        .optional()
        .describe(
          `Values for In and NotIn (at least one, at most ${maxValues}); must be empty for Exists and DoesNotExist.`,
        ),
    })
    .strict()
    .superRefine((r, ctx) => {
      const needs = (OPERATORS_WITH_VALUES as readonly string[]).includes(r.operator);
      const n = r.values?.length ?? 0;
      if (needs && n === 0)
        ctx.addIssue({
          code: 'custom',
          path: ['values'],
          message: `must not be empty for operator ${r.operator}`,
        });
      if (!needs && n > 0)
        ctx.addIssue({
          code: 'custom',
          path: ['values'],
          message: `must be empty for operator ${r.operator}`,
        });
    });
}

/** metav1.LabelSelector (matchLabels AND matchExpressions) within the given bounds. */
function labelSelectorSchema(b: SelectorBounds) {
  return z
    .object({
      matchLabels: z
        .record(z.string(), formatted(LABEL_VALUE))
        .superRefine((m, ctx) => {
          const keys = Object.keys(m);
          if (keys.length > b.labels) ctx.addIssue({ code: 'custom', message: `at most ${b.labels} labels` });
          for (const k of keys.filter((k) => !isLabelKey(k)))
            ctx.addIssue({
              code: 'custom',
              path: [k],
              message: `must be ${LABEL_KEY.name}: ${LABEL_KEY.allowed}`,
            });
        })
        .optional()
        .describe(`Map of {key,value} pairs (at most ${b.labels}); every pair must match.`),
      matchExpressions: z
        .array(selectorRequirementSchema(b.values))
        .max(b.expressions)
        .optional()
        .describe(`List of label selector requirements (at most ${b.expressions}); all must match.`),
    })
    .strict();
}

/** metav1.LabelSelector: matchLabels AND matchExpressions. */
export const LabelSelectorSchema = labelSelectorSchema({
  labels: MAX_SELECTOR_LABELS,
  expressions: MAX_SELECTOR_EXPRESSIONS,
  values: MAX_SELECTOR_VALUES,
});
export type LabelSelector = z.infer<typeof LabelSelectorSchema>;

export const UncordonPolicySchema = z
  .enum(['OnRelease', 'OnDelete', 'Never', 'AfterEachNode'])
  .describe(
    'When drained nodes are handed back (uncordoned): OnRelease when spec.release becomes true, OnDelete when the plan is deleted, Never, AfterEachNode each node on its own once its hooks.afterDrain hook succeeded or, without one, on a per-node release (`drainflow release PLAN --node NODE`, or the node annotation drainflow.dev/release=true); the node holds its slot of maxUnavailableNodes until then, so maxUnavailableNodes bounds the nodes out of service at once. A node that was unschedulable before the plan is never uncordoned by it.',
  );
export type UncordonPolicy = z.infer<typeof UncordonPolicySchema>;

export const CordonPolicySchema = z
  .enum(['PerNode', 'AllAtStart'])
  .describe(
    "When the nodes are cordoned: PerNode when each node's drain starts (as kubectl drain does; evicted pods may be rescheduled onto nodes of this plan still waiting, and evicted again), AllAtStart every node of the plan before the first eviction (replacements go only to nodes outside the plan; the cluster loses the capacity of all of them at once).",
  );
/**
 * When a plan cordons its nodes. `PerNode` is kubectl drain's behaviour; `AllAtStart` claims and
 * cordons every resolved node before the first eviction, so no evicted pod lands on a node the plan
 * has still to drain (measured in bench/notes.md: without it, the 200-node scale scenario evicted
 * its pods more than twice over).
 */
export type CordonPolicy = z.infer<typeof CordonPolicySchema>;

export const RetryBackoffSchema = z
  .object({
    initialSeconds: z
      .number()
      .int()
      .min(1)
      .max(3600)
      .default(5)
      .describe('First wait, in seconds, after a 429 without Retry-After or a transient error.'),
    maxSeconds: z
      .number()
      .int()
      .min(1)
      .max(3600)
      .default(120)
      .describe('Upper bound, in seconds, of the exponential backoff.'),
  })
  .strict();
export type RetryBackoff = z.infer<typeof RetryBackoffSchema>;

/**
 * Default in-flight evictions per node (eviction calls not yet answered, on one node). Chosen by
 * the benchmark's sweep on `fleet` (bench/notes.md, 2026-12-01: 4 took 131 s, 16 took 108 s,
 * 100 took 103 s, with no 429 for any): pods behind PodDisruptionBudgets are bounded by the plan's
 * PDB budget anyway, so a low per-node limit only leaves allowed disruptions unspent. 16 instead
 * of "as many as the PDBs allow" bounds what one node sends at once for pods no PDB guards: the
 * API server shares its mutating budget (`--max-mutating-requests-inflight`, 200 by default)
 * with every client, and `maxUnavailableNodes` nodes drain at once.
 */
export const DEFAULT_MAX_CONCURRENT_PER_NODE = 16;

/** Default of spec.drainTimeoutSeconds, the plan's deadline: one hour. */
export const DEFAULT_DRAIN_TIMEOUT_SECONDS = 3600;

/** Upper bound of eviction.skipWaitForDeleteTimeoutSeconds (one day). */
export const MAX_SKIP_WAIT_FOR_DELETE_SECONDS = 86400;

export const EvictionSchema = z
  .object({
    callTimeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(300)
      .default(10)
      .describe(
        'Timeout, in seconds, of one Eviction API call (the activity start-to-close timeout). A timed-out call may still have taken effect: the pod is checked before it is evicted again.',
      ),
    maxConcurrentPerNode: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(DEFAULT_MAX_CONCURRENT_PER_NODE)
      .describe('Eviction calls in flight at once on one node.'),
    gracePeriodSeconds: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Grace period, in seconds, passed in DeleteOptions; absent means the pod's own."),
    retryBackoff: RetryBackoffSchema.default({ initialSeconds: 5, maxSeconds: 120 }).describe(
      'Backoff for 429s without a Retry-After header, for transient errors, and between tries to claim a node another plan holds (tried again at once when that plan hands it back); maxSeconds also bounds how long a node waits for a change before it looks again.',
    ),
    skipWaitForDeleteTimeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_SKIP_WAIT_FOR_DELETE_SECONDS)
      .optional()
      .describe(
        `A pod still terminating this many seconds after its deletionTimestamp counts as gone, and is reported (status.nodes[].skipped, a Warning Event), as kubectl drain --skip-wait-for-delete-timeout does; for pods held by a finalizer or on an unreachable kubelet. 1 to ${MAX_SKIP_WAIT_FOR_DELETE_SECONDS}; absent: wait until the pod is gone or the deadline passes.`,
      ),
  })
  .strict();
export type EvictionSpec = z.infer<typeof EvictionSchema>;

export const PodSelectionSchema = z
  .object({
    ignoreDaemonSets: z
      .boolean()
      .default(true)
      .describe('Skip DaemonSet-managed pods (kubectl drain --ignore-daemonsets); when false they block.'),
    deleteEmptyDirData: z
      .boolean()
      .default(false)
      .describe('Evict pods using emptyDir volumes (their data is lost); when false they block.'),
    force: z
      .boolean()
      .default(false)
      .describe('Evict pods that no controller manages (they are not re-created); when false they block.'),
    podSelector: LabelSelectorSchema.optional().describe('Only pods matching this selector are evicted.'),
    ignoreDoNotDisrupt: z
      .boolean()
      .optional()
      .describe(
        'Evict pods annotated karpenter.sh/do-not-disrupt: "true" like any other. Absent or false: such a pod is never evicted and blocks its node, reason DoNotDisrupt (until the annotation goes or the deadline policy acts).',
      ),
  })
  .strict();
export type PodSelection = z.infer<typeof PodSelectionSchema>;

// ---- pod order (spec.podOrder) ----

/**
 * Upper bound of spec.podOrder entries. The API server bounds the estimated cost of a CRD's CEL
 * rules, and every label key and value of every selector of every entry is checked by one: 16
 * entries with the smaller {@link POD_ORDER_SELECTOR_BOUNDS} cost about a tenth of the plan's other
 * two selectors.
 */
export const MAX_POD_ORDER_RULES = 16;
/** The bounds of the selectors of a spec.podOrder entry. */
export const POD_ORDER_SELECTOR_BOUNDS: SelectorBounds = { labels: 8, expressions: 8, values: 16 };
const PodOrderSelectorSchema = labelSelectorSchema(POD_ORDER_SELECTOR_BOUNDS);
/** Bounds of spec.podOrder[].order: an int32, as Cluster API's MachineDrainRule `drain.order`. */
export const MIN_POD_ORDER = -2147483648;
export const MAX_POD_ORDER = 2147483647;

export const PodOrderRuleSchema = z
  .object({
    podSelector: PodOrderSelectorSchema.optional().describe(
      'Pods whose labels match this selector (absent: any pod, restricted by namespaceSelector).',
    ),
    namespaceSelector: PodOrderSelectorSchema.optional().describe(
      "Pods in namespaces whose labels match this selector (absent: any namespace; a namespace's name is its label kubernetes.io/metadata.name).",
    ),
    order: z
      .number()
      .int()
      .min(MIN_POD_ORDER)
      .max(MAX_POD_ORDER)
      .describe(
        'The order group of the pods this entry selects: lower groups leave first, and a group is gone from the node before the next one starts. An int32.',
      ),
  })
  .strict()
  .refine((r) => r.podSelector !== undefined || r.namespaceSelector !== undefined, {
    message: 'needs podSelector or namespaceSelector (an entry selecting every pod orders nothing)',
  })
  .describe(
    'One order entry: the pods matching podSelector AND namespaceSelector get order. The first matching entry counts.',
  );
/** One entry of spec.podOrder (see {@link PodOrderRuleSchema}). */
export type PodOrderRule = z.infer<typeof PodOrderRuleSchema>;

/** spec.podOrder (merged into {@link MaintenancePlanSpecSchema}). */
export const PodOrderFields = {
  podOrder: z
    .array(PodOrderRuleSchema)
    .max(MAX_POD_ORDER_RULES)
    .optional()
    .describe(
      `Order groups of the pods on each node, like Cluster API's MachineDrainRule drain.order (at most ${MAX_POD_ORDER_RULES} entries): a pod gets the order of the first entry matching it; a pod no entry matches gets 0, or 1000 when its priorityClassName is system-cluster-critical or system-node-critical (as Karpenter drains critical pods last). The lowest group present on the node is evicted first; the next group starts only once every pod of that group is gone (evicted, finished, or counted gone after eviction.skipWaitForDeleteTimeoutSeconds). Absent: only the default split (non-critical, then critical).`,
    ),
};

// ---- per-node hooks (spec.hooks) ----

/** Longest timeout of one hook, seconds (one day). */
export const MAX_HOOK_TIMEOUT_SECONDS = 86400;

export const WorkflowHookSchema = z
  .object({
    type: z
      .string()
      .min(1)
      .max(200)
      .describe('Workflow type of your own Temporal workflow; it is started with one argument {plan, node}.'),
    taskQueue: z.string().min(1).max(200).describe('Task queue your workers serve that workflow type on.'),
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_HOOK_TIMEOUT_SECONDS)
      .default(600)
      .describe(
        `Workflow execution timeout, in seconds (at most ${MAX_HOOK_TIMEOUT_SECONDS}); a hook that runs longer fails.`,
      ),
  })
  .strict();
/** A hook that is a Temporal workflow of the user's (started as a child workflow of the node's drain). */
export type WorkflowHook = z.infer<typeof WorkflowHookSchema>;

export const JobHookSchema = z
  .object({
    namespace: formatted(NAMESPACE_NAME).describe(
      'Namespace the Job is created in (the worker needs Jobs create/get/delete there).',
    ),
    template: JobTemplateSchema.describe(
      'A Job template ({metadata, spec} as in a CronJob jobTemplate). drainflow names the Job, pins its pod to the node (spec.template.spec.nodeName), adds a toleration of the cordon taint node.kubernetes.io/unschedulable, labels it with the plan, node and hook, and makes the plan its owner (deleted with it).',
    ),
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_HOOK_TIMEOUT_SECONDS)
      .default(600)
      .describe(
        `How long, in seconds, to wait for the Job to complete (at most ${MAX_HOOK_TIMEOUT_SECONDS}); also its activeDeadlineSeconds.`,
      ),
  })
  .strict();
/** A hook that is a Kubernetes Job run on the node. */
export type JobHook = z.infer<typeof JobHookSchema>;

export const HookSchema = z
  .object({
    job: JobHookSchema.optional().describe('Run a Kubernetes Job on the node and wait for it to complete.'),
    workflow: WorkflowHookSchema.optional().describe(
      'Run a Temporal workflow of yours as a child workflow and wait for it.',
    ),
  })
  .strict()
  .superRefine((h, ctx) => {
    if ((h.job === undefined) === (h.workflow === undefined))
      ctx.addIssue({ code: 'custom', message: 'exactly one of job and workflow must be set' });
  });
/** One per-node hook: exactly one of `job` and `workflow`. */
export type Hook = z.infer<typeof HookSchema>;

export const HooksSchema = z
  .object({
    beforeDrain: HookSchema.optional().describe(
      "Runs once per node after it is cordoned, before its first eviction. A failure blocks the node with the hook's message (a per-node release hands it back undrained).",
    ),
    afterDrain: HookSchema.optional().describe(
      "Runs once per node after it is drained, before it is handed back; with uncordon AfterEachNode its success uncordons the node. A failure blocks the node with the hook's message.",
    ),
  })
  .strict();
/** spec.hooks. */
export type Hooks = z.infer<typeof HooksSchema>;

/** Annotation on a Node that releases it (uncordon AfterEachNode) when set to `true`; removed at hand-back. */
export const NODE_RELEASE_ANNOTATION = 'drainflow.dev/release';

// ---- deadline policy (spec.onDeadline, spec.nodeDrainTimeoutSeconds, spec.deadlineWarningSeconds) ----

/** Longest advance notice of a DeletePods deadline, seconds (one day). */
export const MAX_DEADLINE_WARNING_SECONDS = 86400;

export const OnDeadlineSchema = z
  .enum(['Stop', 'SkipNode', 'DeletePods'])
  .describe(
    "What happens to a node still not drained at its deadline. Stop: no more evictions; the node stays cordoned and the plan ends Blocked with reason DeadlineExceeded (kubectl drain --timeout). SkipNode: the node is handed back (uncordoned if the plan cordoned it) and reported Skipped with its blockers; it frees its slot of maxUnavailableNodes and the plan goes on with its other nodes. DeletePods: the pods still on the node are deleted without the Eviction API (PodDisruptionBudgets are bypassed), with their grace period cut to the time left until the plan's deadline (at least 1 s, at most the pod's own), one Warning Event per pod; a Warning Event PodsWillBeDeleted goes out deadlineWarningSeconds before.",
  );
/** What happens at a node's deadline (see {@link OnDeadlineSchema}). */
export type OnDeadline = z.infer<typeof OnDeadlineSchema>;

/** The deadline-policy fields of the spec (merged into {@link MaintenancePlanSpecSchema}). */
export const DeadlinePolicyFields = {
  onDeadline: OnDeadlineSchema.default('Stop'),
  nodeDrainTimeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(MAX_DRAIN_TIMEOUT_SECONDS)
    .optional()
    .describe(
      "Per-node deadline in seconds from the start of the node's drain; the node's deadline is the earlier of this and the plan's (drainTimeoutSeconds). At most drainTimeoutSeconds. Absent: the plan's deadline only.",
    ),
  deadlineWarningSeconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_DEADLINE_WARNING_SECONDS)
    .default(300)
    .describe(
      `With onDeadline DeletePods: how long, in seconds, before a node's deadline the Warning Event PodsWillBeDeleted names the pods to be deleted (at once when the deadline is closer). At most ${MAX_DEADLINE_WARNING_SECONDS}.`,
    ),
};

// ---- remedies (spec.remedies) ----

export const RolloutRestartPolicySchema = z
  .enum(['Never', 'Approve', 'Auto'])
  .describe(
    'For a pod blocked by a PodDisruptionBudget that can never allow a disruption (kind Never) whose owner is a Deployment whose own rollout never lowers availability (computed maxUnavailable 0, maxSurge at least 1: the default strategy for one replica): Never, nothing is done; Approve, the plan proposes a rollout restart of the Deployment (the Remedy condition and an Event name it) and restarts it once approved (`drainflow approve PLAN --workload NS/NAME`, or the Temporal Update approveRemedy); Auto, it restarts it once the block lasted afterSeconds. The restart sets the pod template annotation kubectl.kubernetes.io/restartedAt (as kubectl rollout restart does): the Deployment starts a new pod on another node, waits until it is Ready, then removes the old one. drainflow never changes a PodDisruptionBudget, the replicas or the strategy.',
  );
/** spec.remedies.rolloutRestart (see {@link RolloutRestartPolicySchema}). */
export type RolloutRestartPolicy = z.infer<typeof RolloutRestartPolicySchema>;

export const RemediesSchema = z
  .object({
    rolloutRestart: RolloutRestartPolicySchema.default('Never'),
    afterSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_REMEDY_AFTER_SECONDS)
      .default(DEFAULT_REMEDY_AFTER_SECONDS)
      .describe(
        `With rolloutRestart Auto: how long, in seconds, a Never block lasts (from when the plan first sees it) before the Deployment is restarted. 0 to ${MAX_REMEDY_AFTER_SECONDS}.`,
      ),
  })
  .strict();
/** spec.remedies. */
export type Remedies = z.infer<typeof RemediesSchema>;

export const MaintenancePlanSpecSchema = z
  .object({
    nodeNames: z
      .array(formatted(NODE_NAME))
      .max(MAX_PLAN_NODES)
      .refine((names) => new Set(names).size === names.length, {
        message: 'must not name a node twice',
      })
      .optional()
      .describe(
        `Names of the nodes to drain (at most ${MAX_PLAN_NODES}, each once); the nodes start in this order.`,
      ),
    nodeSelector: LabelSelectorSchema.optional().describe(
      'Label selector of the nodes to drain; resolved once at start, the result recorded in status.nodes. The nodes it matches that nodeNames does not name start after those, in name order.',
    ),
    maxUnavailableNodes: z
      .number()
      .int()
      .min(1)
      .max(MAX_UNAVAILABLE_NODES)
      .default(1)
      .describe(
        `Nodes drained at the same time (at most ${MAX_UNAVAILABLE_NODES}): a node holds its slot until it is drained or its drain ends at the deadline, so a blocked node keeps it. Under cordon AllAtStart every node is cordoned from the start by choice.`,
      ),
    drainTimeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_DRAIN_TIMEOUT_SECONDS)
      .default(DEFAULT_DRAIN_TIMEOUT_SECONDS)
      .describe(
        `Whole-plan deadline in seconds from the start (at most ${MAX_DRAIN_TIMEOUT_SECONDS}, 365 days); when it passes the plan stops evicting and ends Blocked with reason DeadlineExceeded. May be raised (never lowered) on a Running plan, or on one Blocked at its deadline (onDeadline Stop), which then drains its nodes again, still cordoned and claimed (drainflow extend does the same).`,
      ),
    eviction: EvictionSchema.default({
      callTimeoutSeconds: 10,
      maxConcurrentPerNode: DEFAULT_MAX_CONCURRENT_PER_NODE,
      retryBackoff: { initialSeconds: 5, maxSeconds: 120 },
    }).describe('How pods are evicted.'),
    podSelection: PodSelectionSchema.default({
      ignoreDaemonSets: true,
      deleteEmptyDirData: false,
      force: false,
    }).describe("Which pods are evicted, with kubectl drain's rules."),
    paused: z
      .boolean()
      .default(false)
      .describe('Pause: no new evictions while true (in-flight calls finish).'),
    abort: z
      .boolean()
      .default(false)
      .describe('Abort: stop evicting, hand back the nodes this plan cordoned (per uncordon), end Aborted.'),
    release: z
      .boolean()
      .default(false)
      .describe('Maintenance is over: with uncordon OnRelease the drained nodes are uncordoned.'),
    uncordon: UncordonPolicySchema.default('OnDelete'),
    cordon: CordonPolicySchema.default('PerNode'),
    hooks: HooksSchema.optional().describe(
      'Per-node hooks: work done on each node before its drain and after it (patch, reboot, health check), each once per node.',
    ),
    ...DeadlinePolicyFields,
    ...WindowFields,
    mode: PlanModeSchema.default('Drain'),
    ...PodOrderFields,
    remedies: RemediesSchema.default({
      rolloutRestart: 'Never',
      afterSeconds: DEFAULT_REMEDY_AFTER_SECONDS,
    }).describe(
      'Safe ways out of a drain stuck on a PodDisruptionBudget that can never allow a disruption (docs/guides/stuck-drains.md).',
    ),
  })
  .strict()
  .superRefine((spec, ctx) => {
    for (const issue of rollingSpecIssues(spec)) ctx.addIssue({ code: 'custom', ...issue });
    for (const issue of previewSpecIssues(spec)) ctx.addIssue({ code: 'custom', ...issue });
    for (const issue of specCoherenceIssues(spec)) ctx.addIssue({ code: 'custom', ...issue });
  })
  .describe(
    'What to drain and how: the nodes, the deadline, eviction pacing and the pause/abort/release signals.',
  );
export type MaintenancePlanSpec = z.infer<typeof MaintenancePlanSpecSchema>;

/**
 * The combinations uncordon AfterEachNode refuses (the CRD's CEL rules say the same):
 * - cordon AllAtStart: every node would be cordoned from the start, against handing back one at a time;
 * - onDeadline DeletePods without nodeDrainTimeoutSeconds: the pods would be deleted at the plan's
 *   deadline, after which no hook runs and no node is handed back one at a time any more.
 */
export function rollingSpecIssues(spec: {
  uncordon?: string;
  cordon?: string;
  onDeadline?: string;
  nodeDrainTimeoutSeconds?: number;
}): { path: string[]; message: string }[] {
  if (spec.uncordon !== 'AfterEachNode') return [];
  const out: { path: string[]; message: string }[] = [];
  if (spec.cordon === 'AllAtStart') out.push({ path: ['cordon'], message: ROLLING_MESSAGES.allAtStart });
  if (spec.onDeadline === 'DeletePods' && spec.nodeDrainTimeoutSeconds === undefined)
    out.push({ path: ['onDeadline'], message: ROLLING_MESSAGES.deletePods });
  return out;
}

/** Messages of {@link rollingSpecIssues} (shared with the CRD's CEL rules). */
export const ROLLING_MESSAGES = {
  allAtStart:
    'must not be AllAtStart with uncordon AfterEachNode: AllAtStart keeps every node cordoned from the start, AfterEachNode hands them back one at a time',
  deletePods:
    'DeletePods with uncordon AfterEachNode needs nodeDrainTimeoutSeconds: at the plan deadline alone the pods would be deleted when no hook or per-node hand-back can follow',
};
/** The spec as a user writes it (defaults not yet applied). */
export type MaintenancePlanSpecInput = z.input<typeof MaintenancePlanSpecSchema>;

export const PlanPhaseSchema = z
  .enum(PlanPhase)
  .describe(
    'Where the plan is: Pending, Running, Paused, Blocked, Drained, Completed, Aborted, Failed, or Previewed (spec.mode Preflight: the report is in status.preflight; nothing was cordoned or evicted).',
  );

export const NodePhaseSchema = z
  .enum(NodePhase)
  .describe(
    'Where one node is: Pending, Waiting (held by another plan), Cordoned, Draining, Paused, Blocked, Drained, Released, Aborted, Failed, Deleted (the Node object was deleted during the drain), Skipped (handed back at its deadline, onDeadline SkipNode) or Previewed (examined by a Preflight plan, not cordoned).',
  );

/** metav1.Condition. `reason` is CamelCase (Kubernetes API conventions). */
export const ConditionSchema = z
  .object({
    type: z.string().describe('Condition type: Progressing, Drained, Blocked, Paused or Previewed.'),
    status: z.enum(['True', 'False', 'Unknown']).describe('True, False or Unknown.'),
    observedGeneration: z
      .number()
      .int()
      .optional()
      .describe('metadata.generation this condition was set for.'),
    lastTransitionTime: z.string().describe('RFC 3339 time the status last changed.'),
    reason: z.string().describe('CamelCase reason for the last transition.'),
    message: z.string().describe('Human-readable details.'),
  })
  .strict();
export type Condition = z.infer<typeof ConditionSchema>;

export const BlockerSchema = z
  .object({
    pod: z.string().describe('The blocking pod as namespace/name.'),
    pdb: z.string().optional().describe('The PodDisruptionBudget as namespace/name, when one blocks.'),
    reason: z.string().describe('CamelCase reason, e.g. DisruptionBudget, NoController, EmptyDirData.'),
    kind: z
      .enum(DisruptionBlockKind)
      .optional()
      .describe(
        'Reason DisruptionBudget: why the PodDisruptionBudget blocks. Transient (N more pods must become Ready), Never (maxUnavailable 0, minAvailable at or above the pods expected, a single replica: a person must act), UnhealthyElsewhere (pods on other nodes not Ready, named in the message), ReplacementsUnschedulable (pods Pending: the scheduler is quoted), SpentByOthers (evictions not of this plan). Absent while unknown.',
      ),
    owner: z
      .string()
      .optional()
      .describe(
        "With kind: the pods' controller as Kind namespace/name (a ReplicaSet's Deployment), when known.",
      ),
    remedy: z
      .enum(RemedyKind)
      .optional()
      .describe(
        'Kind Never: RolloutRestart when the owner is a Deployment whose own rollout never lowers availability (spec.remedies.rolloutRestart can move the pod by surge), None when no safe remedy exists (the message says why).',
      ),
    message: z.string().describe('Human-readable details.'),
    since: z.string().optional().describe('RFC 3339 time this blocker was first seen.'),
    attempts: z.number().int().optional().describe('Eviction calls sent for this pod so far.'),
  })
  .strict();
/**
 * status.nodes[].blockedBy[]: what keeps one pod on its node. Made by `nodeBlockers` in
 * src/drain/node/decide.ts from the node workflow's per-pod state (`PodRecord`), sent to the plan with
 * the node's progress and written by the status projection.
 */
export type Blocker = z.infer<typeof BlockerSchema>;

export const SkippedPodSchema = z
  .object({
    pod: z.string().describe('The pod as namespace/name.'),
    reason: z.string().describe('CamelCase reason: DrainLabelSkip or DeleteTimeoutPassed.'),
    message: z.string().describe('Human-readable details.'),
  })
  .strict();
/** A pod listed in status.nodes[].skipped. */
export type SkippedPod = z.infer<typeof SkippedPodSchema>;

export const HookStatusSchema = z
  .object({
    name: z.enum(['beforeDrain', 'afterDrain']).describe('Which hook: beforeDrain or afterDrain.'),
    phase: z
      .enum(HookPhase)
      .describe(
        'Running, Succeeded, Failed, or Stopped (the plan was aborted while it ran: its Job deleted or its workflow cancelled).',
      ),
    started: z.string().optional().describe('RFC 3339 time the hook started.'),
    ref: z.string().optional().describe('The Job (namespace/name) or the child workflow ID running it.'),
    message: z.string().optional().describe("The hook's failure message, or what it waits for."),
  })
  .strict();
/** status.nodes[].hook. */
export type HookStatus = z.infer<typeof HookStatusSchema>;

export const NodeStatusSchema = z
  .object({
    name: z.string().describe('Node name.'),
    phase: NodePhaseSchema,
    reason: z
      .string()
      .optional()
      .describe(
        'CamelCase reason of the node phase, e.g. NodeHeldByOtherPlan, PodsNotEvictable, NodeUncordonedExternally, NodeDeleted, DeadlineExceeded.',
      ),
    message: z.string().optional().describe('Human-readable details of the node phase.'),
    heldBy: z
      .string()
      .optional()
      .describe(
        'Phase Waiting, reason NodeHeldByOtherPlan: the plan whose claim the node carries (read by other plans to find claim cycles).',
      ),
    podsTotal: z.number().int().describe('Pods to evict from this node.'),
    podsEvicted: z.number().int().describe('Pods evicted and gone.'),
    podsDeleted: z
      .number()
      .int()
      .optional()
      .describe('Pods deleted without the Eviction API at the deadline (onDeadline DeletePods).'),
    podsGoneWithoutEviction: z
      .number()
      .int()
      .optional()
      .describe(
        "Pods that left without this drain's eviction (deleted by someone else, finished, already terminating); not counted in podsEvicted.",
      ),
    deadline: z
      .string()
      .optional()
      .describe("RFC 3339 deadline of this node's drain, when it is earlier than the plan's."),
    blockedBy: z
      .array(BlockerSchema)
      .optional()
      .describe(
        'What keeps the node from being drained, sorted by pod, capped; absent while the node is paused (the pause holds it), skipped or aborted.',
      ),
    currentOrder: z
      .number()
      .int()
      .optional()
      .describe(
        'The order group being drained now (spec.podOrder; the lowest group with pods left on the node); absent when nothing is left to evict.',
      ),
    skipped: z
      .array(SkippedPodSchema)
      .optional()
      .describe(
        'Pods the drain left alone by choice: label drainflow.dev/drain or cluster.x-k8s.io/drain "skip" (reason DrainLabelSkip), or still terminating past eviction.skipWaitForDeleteTimeoutSeconds (reason DeleteTimeoutPassed). Sorted by pod, capped.',
      ),
    hook: HookStatusSchema.optional().describe("The node's last hook run (spec.hooks)."),
  })
  .strict();
export type NodeStatus = z.infer<typeof NodeStatusSchema>;

export const EvictionProgressSchema = z
  .object({
    total: z.number().int().describe('Pods to evict over all nodes.'),
    evicted: z.number().int().describe('Pods evicted and gone.'),
    pending: z.number().int().describe('Pods still to evict (not those left on a Skipped node).'),
    failed: z.number().int().describe('Pods that cannot be evicted (blockers that waiting never fixes).'),
    attempts: z.number().int().describe('Eviction API calls sent.'),
    tooManyRequests: z.number().int().describe('Eviction API calls answered 429.'),
    deleted: z
      .number()
      .int()
      .optional()
      .describe(
        'Pods deleted without the Eviction API at the deadline (onDeadline DeletePods), not counted in evicted.',
      ),
    goneWithoutEviction: z
      .number()
      .int()
      .optional()
      .describe(
        "Pods that left without this drain's eviction (deleted by someone else, finished, already terminating), not counted in evicted.",
      ),
    nextActionAt: z
      .string()
      .optional()
      .describe('RFC 3339 time of the next eviction attempt while cooling down; absent otherwise.'),
    lastError: z.string().optional().describe('The last eviction error message.'),
  })
  .strict();
export type EvictionProgress = z.infer<typeof EvictionProgressSchema>;

export const WorkflowRefSchema = z
  .object({
    namespace: z.string().describe('Temporal namespace.'),
    workflowId: z.string().describe('Temporal workflow ID.'),
    runId: z.string().optional().describe('Temporal run ID of the first run.'),
    url: z.string().optional().describe('URL of the run in the Temporal UI.'),
  })
  .strict();
export type WorkflowRef = z.infer<typeof WorkflowRefSchema>;

export const DeadlineActionSchema = z
  .object({
    policy: OnDeadlineSchema,
    at: z.string().optional().describe('RFC 3339 time of the next deadline among the nodes it concerns.'),
    nodes: z
      .array(z.string())
      .optional()
      .describe('Nodes it will happen to if they are not drained by then (sorted, capped).'),
    warningAt: z
      .string()
      .optional()
      .describe('DeletePods: RFC 3339 time the Warning Event PodsWillBeDeleted goes (or went) out.'),
    message: z.string().describe('What will happen, to which nodes, and when, in words.'),
  })
  .strict();
/** status.deadlineAction: the advance notice of what the deadline policy will do. */
export type DeadlineAction = z.infer<typeof DeadlineActionSchema>;

export const MaintenancePlanStatusSchema = z
  .object({
    phase: PlanPhaseSchema.optional(),
    reason: z.string().optional().describe('CamelCase reason for the phase.'),
    message: z.string().optional().describe('Human-readable details of the phase.'),
    observedGeneration: z.number().int().optional().describe('metadata.generation the status reflects.'),
    conditions: z
      .array(ConditionSchema)
      .optional()
      .describe('Progressing, Drained, Blocked and Paused; Previewed for a Preflight plan.'),
    workflow: WorkflowRefSchema.optional().describe('The Temporal workflow running this plan.'),
    startedAt: z.string().optional().describe('RFC 3339 time the drain started.'),
    deadline: z
      .string()
      .optional()
      .describe(
        'RFC 3339 time the plan stops evicting (startedAt + drainTimeoutSeconds, or later once extended).',
      ),
    completedAt: z.string().optional().describe('RFC 3339 time the plan reached a final phase.'),
    estimatedCompletion: z
      .string()
      .optional()
      .describe(
        "RFC 3339 time the drain is expected to end: the pods left at the pace this plan kept recently (so its PodDisruptionBudgets' rounds and replacements' time to Ready), updated with the status writes. Absent until a pace is known, while paused, while a node is held up by what waiting does not fix, and once the plan ends (docs/guides/first-plan.md).",
      ),
    nodesTotal: z.number().int().optional().describe('Nodes in the plan.'),
    nodesDrained: z.number().int().optional().describe('Nodes drained.'),
    nodes: z.array(NodeStatusSchema).optional().describe('Per-node progress, in plan order.'),
    evictionProgress: EvictionProgressSchema.optional().describe('Eviction counters over the whole plan.'),
    deadlineAction: DeadlineActionSchema.optional().describe(
      'What spec.onDeadline will do at the deadline, to which nodes, and when (absent once no node is left to it).',
    ),
    window: WindowStatusSchema.optional().describe(
      'With spec.windows: whether a maintenance window is open, when it closes and when the next opens (absent in a final phase).',
    ),
    preflight: PreflightReportSchema.optional().describe(
      "spec.mode Preflight: what a drain would evict, skip and be blocked by, per node and per PodDisruptionBudget, with the API server's dry-run verdicts.",
    ),
  })
  .strict()
  .describe('Observed state of the plan, written by the operator from its Temporal workflow.');
export type MaintenancePlanStatus = z.infer<typeof MaintenancePlanStatusSchema>;

/** A MaintenancePlan as read from the API server (spec already defaulted by the CRD schema). */
export interface MaintenancePlan {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: {
    name: string;
    uid: string;
    generation?: number;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: MaintenancePlanSpec;
  status?: MaintenancePlanStatus;
}

/**
 * Parses a user-written spec and applies the defaults its schema declares.
 * @throws z.ZodError naming the bad field.
 */
export function parseSpec(input: unknown): MaintenancePlanSpec {
  return MaintenancePlanSpecSchema.parse(input);
}
