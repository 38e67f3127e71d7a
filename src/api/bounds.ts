/**
 * Size bounds of the MaintenancePlan API: how many nodes one plan may drain, at once and in all,
 * and how long the lists of status.preflight grow. src/api/plan.ts and src/api/preflight.ts put
 * them into the schemas and the CRD; the workflows and src/drain read them from here.
 *
 * No imports: workflow code takes these values without evaluating the zod schemas. The Temporal
 * worker evaluates a workflow bundle's modules again for every workflow it creates (each workflow
 * gets its own module state, kept while the workflow is cached), so a schema module in the
 * workflows' import graph is built again for each new node workflow, continue-as-new and replay,
 * and held once per cached workflow.
 */

/**
 * Upper bound of spec.maxUnavailableNodes. Each node drained at once is one running child workflow
 * with one observation and up to maxConcurrentPerNode eviction activities pending in the plan's
 * Temporal namespace; Temporal refuses more than 2,000 pending child workflows or activities per
 * workflow by default (limit.numPendingChildExecutions, limit.numPendingActivities).
 */
export const MAX_UNAVAILABLE_NODES = 500;

/**
 * Upper bound of spec.drainTimeoutSeconds and spec.nodeDrainTimeoutSeconds: 365 days, in seconds.
 * A deadline further out is almost surely a unit mistake (milliseconds or a stray digit); it would
 * keep a blocked node cordoned and its workflow open for years. Plans that need longer are split.
 */
export const MAX_DRAIN_TIMEOUT_SECONDS = 365 * 24 * 3600;

/** Upper bound of the nodes of one plan (spec.nodeNames; a nodeSelector matching more fails the plan). */
export const MAX_PLAN_NODES = 5000;

/** Pods, skipped pods, blockers and dry-run refusals listed per node at most (the counts are exact). */
export const PREFLIGHT_LIST_CAP = 10;
/** Nodes given a full entry in status.preflight.nodes at most (those with blockers first; every node is counted). */
export const PREFLIGHT_NODE_CAP = 20;
/** PodDisruptionBudgets listed in status.preflight.pdbs at most (slowest first). */
export const PREFLIGHT_PDB_CAP = 20;
/** Characters kept of a message (API server answers can be long). */
export const PREFLIGHT_MESSAGE_CAP = 300;

/** Default of spec.remedies.afterSeconds: how long a Never block lasts before Auto restarts, seconds. */
export const DEFAULT_REMEDY_AFTER_SECONDS = 300;
/** Upper bound of spec.remedies.afterSeconds, seconds (one day). */
export const MAX_REMEDY_AFTER_SECONDS = 86400;
