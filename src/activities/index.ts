/**
 * The drain activities: every Kubernetes call the workflows make (DESIGN §2), implementing the
 * {@link DrainActivities} contract of `./types.ts`.
 *
 * Each activity does one thing, is safe to retry, and classifies errors at this edge:
 *
 * | what happened                                                    | what the activity does                                   |
 * | ---------------------------------------------------------------- | -------------------------------------------------------- |
 * | network error, timeout, 5xx (but the multiple-PDB 500), 408, 429  | throws {@link TransientKubernetesError} (retryable)      |
 * | eviction 429                                                      | returns `TooManyRequests` with its Retry-After (a 0 is   |
 * |                                                                   | reported as absent, so the caller uses its backoff)      |
 * | eviction 404 / 409 when the pod with that UID is gone             | returns `Gone` (the pod is already gone = success)       |
 * | eviction 409 while the pod with that UID still exists             | returns `Retry`/`Conflict` (heals: retry after backoff)  |
 * | eviction 403 with cause NamespaceTerminating                      | returns `Retry`/`NamespaceTerminating` (the namespace    |
 * |                                                                   | deletion takes the pod; wait for it to go)               |
 * | eviction 500 "more than one PodDisruptionBudget", other 403,      | returns `Failed` (waiting never fixes it)                |
 * | other 4xx                                                         |                                                          |
 * | eviction activity cancelled while its call is in flight           | aborts the HTTP request, throws `CancelledFailure`       |
 * | other 4xx on the other activities                                 | throws `ApplicationFailure.nonRetryable`                 |
 *
 * {@link DrainActivities.evictPod} heartbeats every {@link EVICTION_HEARTBEAT_INTERVAL_MS} while its
 * Eviction API call is in flight (Temporal only delivers a cancellation to an activity that heartbeats).
 *
 * The waiting activities ({@link DrainActivities.waitPodGone}, {@link DrainActivities.waitDisruptionAllowed})
 * watch the object (reacting within the watch latency, well under a second), heartbeat every
 * {@link HEARTBEAT_INTERVAL_MS} and stop when the activity is cancelled.
 *
 * Outside a Temporal activity context (CLI preflight, tests) the activities work the same, minus
 * heartbeats and cancellation.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  Observable,
  PatchStrategy,
  PolicyV1Api,
  ResponseContext,
  Watch,
  setHeaderOptions,
  type ConfigurationOptions,
  type CoreV1Event,
  type KubeConfig,
  type ObservableMiddleware,
  type V1Node,
  type V1PodDisruptionBudget,
} from '@kubernetes/client-node';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { pino, type Logger } from 'pino';
import {
  API_VERSION,
  GROUP,
  KIND,
  NODE_CLAIM_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  PLURAL,
  VERSION,
  type LabelSelector,
  type MaintenancePlan,
} from '../api/plan.js';
import { parseRetryAfter } from '../drain/backoff.js';
import { statusEquals } from '../drain/conditions.js';
import { matchesLabelSelector } from '../drain/selector.js';
import { NODE_CLAIM_UID_ANNOTATION, heldBy } from '../k8s/node-claim.js';
import type { WatchCache } from '../k8s/watch-cache.js';
import { deletePodActivity } from './delete-pod.js';
import { buildNodePods, observedAllowed } from './node-pods.js';
import { createObserveNode } from './observe.js';
import type {
  CordonResult,
  DrainActivities,
  EvictInput,
  EvictResult,
  PodState,
  ResolvedNodes,
} from './types.js';

/** Re-exported from the shared claim module (src/k8s/node-claim.ts), where it is defined. */
export { NODE_CLAIM_UID_ANNOTATION };

/** Namespace of the Events recorded on (cluster-scoped) MaintenancePlans, as Kubernetes does for Nodes. */
export const EVENT_NAMESPACE = 'default';

/** `source.component` / `reportingComponent` of the Events this operator records. */
export const EVENT_COMPONENT = 'drainflow';

/** How often the waiting activities heartbeat, in ms (their heartbeat timeout should be >= 3x this). */
export const HEARTBEAT_INTERVAL_MS = 2000;

/** Attempts of one read-modify-write before a 409 Conflict is given up as transient. */
const CONFLICT_ATTEMPTS = 5;

/** Page size of list calls. */
const LIST_PAGE_SIZE = 500;

/** PDB list calls in flight at once in listNodePods (one per namespace with pods on the node). */
const LIST_CONCURRENCY = 8;

/** Server-side timeout of one watch request, in seconds; the wait then re-lists and re-watches. */
const WATCH_TIMEOUT_SECONDS = 60;

/** Dependencies of {@link createActivities}. */
export interface ActivityDeps {
  /** Where and as whom to reach the Kubernetes API (the worker loads it from $KUBECONFIG or in-cluster). */
  kubeConfig: KubeConfig;
  /** Structured logger; a pino logger named `drainflow.activities` at level `info` when absent. */
  logger?: Logger;
  /**
   * The watch cache `observeNode` reads; the owner closes it (the worker does when it stops). Absent:
   * a cache of this object's own, started on the first `observeNode` and never closed.
   */
  watchCache?: WatchCache;
}

/**
 * A Kubernetes API failure that waiting may fix (network error, 5xx, 408, 429 outside the Eviction API,
 * conflicts that kept recurring): Temporal retries the activity with its retry policy. Its `name` is the
 * Temporal failure `type`.
 */
export class TransientKubernetesError extends Error {
  /** HTTP status, when the server answered. */
  readonly code: number | undefined;
  constructor(message: string, code?: number) {
    super(message);
    this.name = 'TransientKubernetesError';
    this.code = code;
  }
}

/** Temporal failure `type` of the non-retryable Kubernetes API errors (4xx other than 404/408/409/429 where handled). */
export const KUBERNETES_API_ERROR_TYPE = 'KubernetesApiError';

// ---------------------------------------------------------------------------------------------------
// Kubernetes Status bodies and API errors
// ---------------------------------------------------------------------------------------------------

/** The fields of a `metav1.Status` body this module reads. */
interface K8sStatus {
  kind?: string;
  status?: string;
  code?: number;
  reason?: string;
  message?: string;
  details?: {
    name?: string;
    kind?: string;
    retryAfterSeconds?: number;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
  };
}

/** One HTTP answer: status code, headers (any case) and raw body text. */
export interface RawAnswer {
  code: number;
  headers: Record<string, string>;
  text: string;
}

/** Reads a header case-insensitively. */
function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const want = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === want) return v;
  return undefined;
}

/**
 * Parses a response body into a `metav1.Status` when it is one (JSON with `kind: Status`, or at least a
 * `code`/`reason`); `undefined` for anything else, e.g. the plain-text body of an API Priority and
 * Fairness 429 ("Too many requests, please try again later.").
 */
function parseStatus(body: unknown): K8sStatus | undefined {
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as K8sStatus;
  if (v.kind === 'Status' || typeof v.code === 'number' || typeof v.reason === 'string') return v;
  return undefined;
}

/** Whether `err` is a `@kubernetes/client-node` ApiException (the server answered with a non-2xx code). */
function isApiException(err: unknown): err is ApiException<unknown> {
  if (err instanceof ApiException) return true;
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { code?: unknown }).code === 'number' &&
    'body' in err &&
    'headers' in err
  );
}

/** Status code of an ApiException, `undefined` for transport errors. */
function apiCode(err: unknown): number | undefined {
  return isApiException(err) ? err.code : undefined;
}

/** One line describing a server answer: `HTTP 403 Forbidden: pods "x" is forbidden: ...`, body text capped. */
function describeAnswer(code: number, body: unknown): string {
  const status = parseStatus(body);
  if (status)
    return `HTTP ${code}${status.reason ? ` ${status.reason}` : ''}: ${status.message ?? ''}`.trim();
  const text = typeof body === 'string' ? body.trim() : body === undefined ? '' : String(body);
  return `HTTP ${code}${text ? `: ${text.slice(0, 300)}` : ''}`;
}

/** Whether an HTTP code is worth retrying as is: 408, 429 (outside the Eviction API) and 5xx. */
function isTransientCode(code: number): boolean {
  return code === 408 || code === 429 || code >= 500;
}

/**
 * Turns an error of a Kubernetes call into what an activity throws: transport errors and transient codes
 * as {@link TransientKubernetesError} (retryable), other 4xx as a non-retryable `ApplicationFailure` of
 * type {@link KUBERNETES_API_ERROR_TYPE} whose details are `[{ code, reason }]`. Temporal failures
 * (cancellation, already-classified failures) pass through.
 *
 * @param what the call, for the message, e.g. `patch node kwok-node-0`.
 */
function classifyError(err: unknown, what: string): Error {
  if (
    err instanceof ApplicationFailure ||
    err instanceof CancelledFailure ||
    err instanceof TransientKubernetesError
  ) {
    return err;
  }
  if (isApiException(err)) {
    const text = `${what}: ${describeAnswer(err.code, err.body)}`;
    if (isTransientCode(err.code)) return new TransientKubernetesError(text, err.code);
    const reason = parseStatus(err.body)?.reason ?? `HTTP${err.code}`;
    return ApplicationFailure.nonRetryable(text, KUBERNETES_API_ERROR_TYPE, { code: err.code, reason });
  }
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new TransientKubernetesError(`${what}: ${message}`);
}

// ---------------------------------------------------------------------------------------------------
// Eviction answers
// ---------------------------------------------------------------------------------------------------

/** StatusCause type (JSON `reason`) the eviction subresource attaches to PDB refusals (`policyv1.DisruptionBudgetCause`). */
const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';

/**
 * The PDB name inside a DisruptionBudget cause message: "The disruption budget NAME needs N healthy pods
 * and has M currently" or "The disruption budget NAME is still being processed by the server."
 * (pkg/registry/core/pod/storage/eviction.go). The cause carries no structured name, so this is the one
 * place text is parsed, and only for the name; the classification itself uses code and cause type.
 */
const PDB_NAME_IN_CAUSE =
  /disruption budget ([a-z0-9]([-a-z0-9.]*[a-z0-9])?) (?:needs|is still being processed)/i;

/**
 * The eviction subresource's answer for a pod matched by several PDBs. It is a `metav1.Status` with
 * `code: 500` and no `reason` and no cause (eviction.go builds it by hand: `Status{Status: Failure,
 * Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not
 * support.", Code: 500}`), so the message is the only thing that tells it from a genuine internal error.
 * Matching it is required to avoid retrying forever something that waiting never fixes.
 */
const MULTIPLE_PDBS_MESSAGE = /more than one PodDisruptionBudget/i;

/** StatusCause type (JSON `reason`) the NamespaceLifecycle admission plugin attaches to its 403 (`v1.NamespaceTerminatingCause`). */
const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

/**
 * How often {@link DrainActivities.evictPod} heartbeats while its Eviction API call is in flight, in ms.
 * A call normally answers in milliseconds, but the API server may hold it for ~10 s (it retries its own
 * conflicts, e.g. on a terminating pod) and APF may queue it; Temporal delivers a cancellation to the
 * worker only with a heartbeat answer, so the activity heartbeats while it waits. The worker throttles
 * what it sends to the server, so frequent heartbeats are cheap.
 */
export const EVICTION_HEARTBEAT_INTERVAL_MS = 1000;

/** `n` when it is a finite number > 0, else `undefined`. */
function positiveSeconds(n: number | undefined): number | undefined {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * Classifies one Eviction API answer (STACK.md §7) by status code and Status cause. `'conflict'` is
 * returned for a 409, which the caller resolves by reading the pod (Gone when the pod with that UID is
 * gone, else Retry/Conflict).
 *
 * - 2xx → Evicted, unless the body is a `Status` with status Failure (its code counts, e.g. the
 *   multiple-PDB 500 that the REST storage returns as a result object);
 * - 404 → Gone; 409 → `'conflict'`;
 * - 429 → TooManyRequests: cause DisruptionBudget when a `DisruptionBudget` StatusCause is present (the
 *   PDB name parsed from its message), else Throttled; `retryAfterSeconds` from the `Retry-After` header
 *   (seconds or HTTP-date), else `details.retryAfterSeconds`, and absent when neither is > 0;
 * - 500 "more than one PodDisruptionBudget" → Failed/MultiplePodDisruptionBudgets;
 * - 403 with cause NamespaceTerminating → Retry/NamespaceTerminating; other 403 and 4xx → Failed with
 *   the Status reason (`HTTP<code>` without one).
 *
 * @param answer the raw answer (code, headers, body text).
 * @param pdbNamespace the pod's namespace, which is the PDB's.
 * @param nowMs the current time, for an HTTP-date Retry-After.
 * @throws TransientKubernetesError for 5xx other than the multiple-PDB 500, and 408.
 */
export function classifyEviction(
  answer: RawAnswer,
  pdbNamespace: string,
  nowMs: number = Date.now(),
): EvictResult | 'conflict' {
  const status = parseStatus(answer.text);
  // A `Status` with status Failure carries the real code even when HTTP said 201 (the multiple-PDB
  // Status is returned by the REST storage as a result object, not as an error).
  const code =
    status?.status === 'Failure' && typeof status.code === 'number' && status.code > 0
      ? status.code
      : answer.code;
  if (code >= 200 && code < 300) return { outcome: 'Evicted' };
  if (code === 404) return { outcome: 'Gone' };
  if (code === 409) return 'conflict';
  if (code === 429) {
    const causes = status?.details?.causes ?? [];
    const pdbCause = causes.find((c) => c.reason === DISRUPTION_BUDGET_CAUSE);
    // A Retry-After of 0 (header "0", an HTTP-date not in the future, or details.retryAfterSeconds 0)
    // is reported as absent, never as 0: "retry at once" would make the workflow re-evict without any
    // pause, a hot loop against a budget or a flow-control level that keeps refusing. The API server
    // itself never sends 0 (it sets the header only when retryAfterSeconds > 0, STACK.md §7), so a 0
    // comes from something in between or a clock skew; absent makes the caller use its backoff.
    const retryAfterSeconds =
      positiveSeconds(parseRetryAfter(header(answer.headers, 'retry-after'), nowMs)) ??
      positiveSeconds(status?.details?.retryAfterSeconds);
    const message = pdbCause?.message
      ? `${status?.message ?? ''} ${pdbCause.message}`.trim()
      : (status?.message ?? answer.text.trim()) || 'HTTP 429 Too Many Requests';
    const result: Extract<EvictResult, { outcome: 'TooManyRequests' }> = {
      outcome: 'TooManyRequests',
      cause: pdbCause ? 'DisruptionBudget' : 'Throttled',
      message,
    };
    if (retryAfterSeconds !== undefined) result.retryAfterSeconds = retryAfterSeconds;
    const pdbName = pdbCause?.message ? PDB_NAME_IN_CAUSE.exec(pdbCause.message)?.[1] : undefined;
    if (pdbName) result.pdb = `${pdbNamespace}/${pdbName}`;
    return result;
  }
  const message = status?.message ?? answer.text.trim();
  if (code === 500 && (MULTIPLE_PDBS_MESSAGE.test(message) || causesMatch(status, MULTIPLE_PDBS_MESSAGE))) {
    return { outcome: 'Failed', code, reason: 'MultiplePodDisruptionBudgets', message };
  }
  if (isTransientCode(code)) {
    throw new TransientKubernetesError(`evict pod: ${describeAnswer(code, answer.text)}`, code);
  }
  // 403 with cause NamespaceTerminating (NamespaceLifecycle admission refuses every create, the
  // eviction too, in a namespace being deleted): the namespace deletion takes the pod with it. That
  // heals by itself, so it is a Retry, not a Failed: the drain waits for the pod to go and retries
  // after its backoff (kubectl drain retries it too).
  if (code === 403 && status?.details?.causes?.some((c) => c.reason === NAMESPACE_TERMINATING_CAUSE)) {
    return {
      outcome: 'Retry',
      code,
      reason: 'NamespaceTerminating',
      message: message || `HTTP ${code}`,
    };
  }
  return {
    outcome: 'Failed',
    code,
    reason: status?.reason ?? `HTTP${code}`,
    message: message || `HTTP ${code}`,
  };
}

function causesMatch(status: K8sStatus | undefined, re: RegExp): boolean {
  return (status?.details?.causes ?? []).some((c) => re.test(c.message ?? ''));
}

/**
 * A per-call middleware that keeps the raw answer (code, headers, body text) of the request, so an
 * answer can be classified from its real body whatever the generated client makes of it (it would
 * deserialize a `Status` body of a 201 into an empty `V1Eviction`, and keeps error bodies as text).
 *
 * With `signal`, its `pre` hook sets the signal on the request (`RequestContext.setSignal`):
 * client-node 2.0.1 sends requests with undici's `fetch(url, { ..., signal: request.getSignal() })`
 * (dist/gen/http/isomorphic-fetch.js), which rejects at once without sending when the signal is
 * already aborted, and otherwise aborts the connection (and a body still being read) when it aborts,
 * rejecting with the signal's reason.
 */
function captureAnswer(signal?: AbortSignal): {
  options: ConfigurationOptions<ObservableMiddleware>;
  answer: () => RawAnswer | undefined;
} {
  let captured: RawAnswer | undefined;
  const middleware: ObservableMiddleware = {
    pre: (ctx) => {
      if (signal) ctx.setSignal(signal);
      return new Observable(Promise.resolve(ctx));
    },
    post: (resp) =>
      new Observable(
        (async () => {
          const text = await resp.body.text();
          captured = { code: resp.httpStatusCode, headers: { ...resp.headers }, text };
          return new ResponseContext(resp.httpStatusCode, resp.headers, {
            text: () => Promise.resolve(text),
            binary: () => Promise.resolve(Buffer.from(text)),
            stream: () => null,
          });
        })(),
      ),
  };
  return {
    options: { middleware: [middleware], middlewareMergeStrategy: 'append' },
    answer: () => captured,
  };
}

// ---------------------------------------------------------------------------------------------------
// Activity context (heartbeats, cancellation), optional outside a worker
// ---------------------------------------------------------------------------------------------------

/** The current activity context, or `undefined` when not running inside a Temporal activity. */
function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** Request options making a PATCH a JSON merge patch (RFC 7386; client-node 2.x defaults to JSON patch). */
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Minimal shape of the objects the waits evaluate (typed client objects and raw watch JSON alike). */
interface WatchedObject {
  metadata?: { uid?: string; generation?: number; resourceVersion?: string };
  status?: { observedGeneration?: number; disruptionsAllowed?: number };
}

/** What {@link waitOnObject} needs to follow one named object. */
interface WaitSpec<R> {
  /** For logs and errors, e.g. `pod ns/name`. */
  what: string;
  /** Collection path to watch, e.g. `/api/v1/namespaces/ns/pods`. */
  collectionPath: string;
  /** metadata.name of the object. */
  name: string;
  /** Reads the object: its current state (undefined when absent) and the list's resourceVersion to watch from. */
  list(): Promise<{ item: WatchedObject | undefined; resourceVersion: string | undefined }>;
  /** The result when the wait is over for this state, `undefined` to keep waiting. */
  evaluate(item: WatchedObject | undefined): R | undefined;
  /** The result when `timeoutSeconds` passed. */
  onTimeout(): R;
  timeoutSeconds: number;
}

/** A promise resolved after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

// ---------------------------------------------------------------------------------------------------
// The activities
// ---------------------------------------------------------------------------------------------------

/**
 * Builds the drain activities around one KubeConfig (the worker registers the returned object).
 *
 * The API clients are created once; every call goes to the current context's cluster. RBAC the
 * activities need: nodes get/list/watch/patch; pods get/list/watch; pods/eviction create;
 * poddisruptionbudgets get/list/watch; maintenanceplans get and maintenanceplans/status update;
 * events get/create/patch in `default`.
 *
 * @param deps the KubeConfig to use and an optional pino logger.
 * @returns an object implementing {@link DrainActivities}, one method per activity.
 */
export function createActivities(deps: ActivityDeps): DrainActivities {
  const kc = deps.kubeConfig;
  const log = deps.logger ?? pino({ name: 'drainflow.activities', level: 'info' });
  const core = kc.makeApiClient(CoreV1Api);
  const policy = kc.makeApiClient(PolicyV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const watcher = new Watch(kc);

  /** Reads a node, `undefined` when it does not exist. */
  async function readNode(name: string): Promise<V1Node | undefined> {
    try {
      return await core.readNode({ name });
    } catch (err) {
      if (apiCode(err) === 404) return undefined;
      throw classifyError(err, `get node ${name}`);
    }
  }

  /**
   * Applies a merge patch to a node guarded by `resourceVersion` (a resourceVersion in a patch body is an
   * optimistic-concurrency precondition: the API server answers 409 Conflict when it is stale).
   * @returns `'conflict'` on 409, `'gone'` on 404.
   */
  async function patchNode(name: string, patch: object): Promise<V1Node | 'conflict' | 'gone'> {
    try {
      return await core.patchNode({ name, body: patch }, MERGE_PATCH);
    } catch (err) {
      const code = apiCode(err);
      if (code === 409) return 'conflict';
      if (code === 404) return 'gone';
      throw classifyError(err, `patch node ${name}`);
    }
  }

  /**
   * Follows one object until `spec.evaluate` says the wait is over, `spec.timeoutSeconds` pass or the
   * activity is cancelled: list (the truth), then watch from the list's resourceVersion; any watch end
   * or error re-lists, so no change is missed. Heartbeats every {@link HEARTBEAT_INTERVAL_MS}.
   *
   * @throws CancelledFailure (the activity's cancellation reason) when cancelled;
   *   a non-retryable ApplicationFailure when the list is refused with a 4xx.
   */
  async function waitOnObject<R>(spec: WaitSpec<R>): Promise<R> {
    const ctx = activityContext();
    const cancel = ctx?.cancellationSignal;
    const stop = new AbortController();
    const deadline = Date.now() + Math.max(0, spec.timeoutSeconds) * 1000;
    let result: { value: R } | undefined;
    let failure: unknown;
    const settle = (value: R): void => {
      if (result === undefined && failure === undefined) result = { value };
      stop.abort();
    };
    const onCancel = (): void => {
      failure ??= cancel?.reason ?? new CancelledFailure(`wait for ${spec.what} cancelled`);
      stop.abort();
    };
    cancel?.addEventListener('abort', onCancel, { once: true });
    if (cancel?.aborted) onCancel();
    const beat = setInterval(() => ctx?.heartbeat(), HEARTBEAT_INTERVAL_MS);
    const timer = setTimeout(() => settle(spec.onTimeout()), Math.max(0, deadline - Date.now()));
    ctx?.heartbeat();
    let retryDelayMs = 500;
    try {
      while (!stop.signal.aborted) {
        let listed: Awaited<ReturnType<WaitSpec<R>['list']>>;
        try {
          listed = await spec.list();
        } catch (err) {
          const e = classifyError(err, `get ${spec.what}`);
          if (!(e instanceof TransientKubernetesError)) throw e;
          log.warn({ err: e.message }, `wait: list of ${spec.what} failed, retrying`);
          await pause(retryDelayMs, stop.signal);
          retryDelayMs = Math.min(retryDelayMs * 2, 5000);
          continue;
        }
        const now = spec.evaluate(listed.item);
        if (now !== undefined) {
          settle(now);
          break;
        }
        // Watch from the list's resourceVersion until the stream ends, then loop to re-list.
        await new Promise<void>((resolve) => {
          let controller: AbortController | undefined;
          const end = (): void => {
            stop.signal.removeEventListener('abort', end);
            controller?.abort();
            resolve();
          };
          stop.signal.addEventListener('abort', end, { once: true });
          watcher
            .watch(
              spec.collectionPath,
              {
                fieldSelector: `metadata.name=${spec.name}`,
                resourceVersion: listed.resourceVersion,
                allowWatchBookmarks: true,
                timeoutSeconds: WATCH_TIMEOUT_SECONDS,
              },
              (type: string, obj: WatchedObject) => {
                if (type === 'ERROR') return end(); // e.g. 410 Gone: re-list
                if (type === 'BOOKMARK') return;
                const value = spec.evaluate(type === 'DELETED' ? undefined : obj);
                if (value !== undefined) settle(value);
              },
              (err: unknown) => {
                if (err && !stop.signal.aborted) {
                  log.debug({ err: String(err) }, `wait: watch of ${spec.what} ended, re-listing`);
                }
                end();
              },
            )
            .then(
              (c) => {
                controller = c;
                if (stop.signal.aborted) c.abort();
              },
              () => end(),
            );
        });
        if (!stop.signal.aborted) await pause(retryDelayMs, stop.signal);
      }
    } finally {
      clearInterval(beat);
      clearTimeout(timer);
      cancel?.removeEventListener('abort', onCancel);
      stop.abort();
    }
    if (failure !== undefined) throw failure;
    if (result === undefined)
      throw new TransientKubernetesError(`wait for ${spec.what} ended without a result`);
    return result.value;
  }

  /** GET of a plan as raw JSON, `undefined` when absent. */
  async function readPlan(name: string): Promise<MaintenancePlan | undefined> {
    try {
      return (await custom.getClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        name,
      })) as MaintenancePlan | undefined;
    } catch (err) {
      if (apiCode(err) === 404) return undefined;
      throw classifyError(err, `get ${PLURAL}/${name}`);
    }
  }

  const activities: DrainActivities = {
    deletePod: deletePodActivity(core, log),
    /**
     * Lists all nodes (paged) and keeps those named in `nodeNames` or matching `nodeSelector`
     * (metav1.LabelSelector semantics; an absent selector selects nothing, `{}` selects every node).
     *
     * @returns existing node names sorted and deduplicated, plus the `nodeNames` that do not exist.
     * @throws TransientKubernetesError on transport errors / 5xx; non-retryable ApplicationFailure on 4xx.
     */
    async resolveNodes(input) {
      const names = new Set(input.nodeNames ?? []);
      const found = new Set<string>();
      const existing = new Set<string>();
      let cont: string | undefined;
      do {
        let page;
        try {
          page = await core.listNode({ limit: LIST_PAGE_SIZE, _continue: cont });
        } catch (err) {
          throw classifyError(err, 'list nodes');
        }
        for (const node of page.items) {
          const name = node.metadata?.name;
          if (!name) continue;
          existing.add(name);
          if (names.has(name)) found.add(name);
          if (
            input.nodeSelector !== undefined &&
            matchesLabelSelector(node.metadata?.labels, input.nodeSelector as LabelSelector)
          ) {
            found.add(name);
          }
        }
        cont = page.metadata?._continue || undefined;
      } while (cont);
      const result: ResolvedNodes = {
        nodes: [...found].sort(),
        missing: [...names].filter((n) => !existing.has(n)).sort(),
      };
      return result;
    },

    /**
     * Claims and cordons a node with one merge patch guarded by the node's resourceVersion (409 Conflict
     * → re-read and retry, up to {@link CONFLICT_ATTEMPTS} times). First claim: sets
     * {@link NODE_CLAIM_ANNOTATION} = plan name, {@link NODE_CLAIM_UID_ANNOTATION} = plan uid,
     * {@link NODE_WAS_UNSCHEDULABLE_ANNOTATION} = `'true'|'false'` (spec.unschedulable before) and
     * `spec.unschedulable: true`. Already claimed by this plan: re-cordons if someone uncordoned it and
     * returns the recorded `wasUnschedulable`. Claimed by another plan (other name, or same name with
     * another uid): changes nothing.
     *
     * @throws TransientKubernetesError when conflicts persist or on transport errors / 5xx.
     */
    async cordonNode({ plan, node }) {
      for (let attempt = 1; attempt <= CONFLICT_ATTEMPTS; attempt++) {
        const current = await readNode(node);
        if (!current) return { outcome: 'NodeNotFound' };
        const ann = current.metadata?.annotations ?? {};
        const holder = heldBy(current, plan);
        if (holder === 'other') {
          return { outcome: 'HeldByOtherPlan', heldBy: ann[NODE_CLAIM_ANNOTATION] ?? '' };
        }
        const rv = current.metadata?.resourceVersion;
        let result: CordonResult;
        let patch: object | undefined;
        if (holder === 'self') {
          result = {
            outcome: 'Cordoned',
            wasUnschedulable: ann[NODE_WAS_UNSCHEDULABLE_ANNOTATION] === 'true',
          };
          if (current.spec?.unschedulable !== true || ann[NODE_CLAIM_UID_ANNOTATION] === undefined) {
            patch = {
              metadata: { resourceVersion: rv, annotations: { [NODE_CLAIM_UID_ANNOTATION]: plan.uid } },
              spec: { unschedulable: true },
            };
          }
        } else {
          const wasUnschedulable = current.spec?.unschedulable === true;
          result = { outcome: 'Cordoned', wasUnschedulable };
          patch = {
            metadata: {
              resourceVersion: rv,
              annotations: {
                [NODE_CLAIM_ANNOTATION]: plan.name,
                [NODE_CLAIM_UID_ANNOTATION]: plan.uid,
                [NODE_WAS_UNSCHEDULABLE_ANNOTATION]: String(wasUnschedulable),
              },
            },
            spec: { unschedulable: true },
          };
        }
        if (patch === undefined) return result;
        const patched = await patchNode(node, patch);
        if (patched === 'gone') return { outcome: 'NodeNotFound' };
        if (patched === 'conflict') {
          log.debug({ node, attempt }, 'cordonNode: node changed since read, retrying');
          continue;
        }
        log.info(
          { node, plan: plan.name, wasUnschedulable: result.wasUnschedulable },
          'node claimed and cordoned',
        );
        return result;
      }
      throw new TransientKubernetesError(
        `cordon node ${node}: ${CONFLICT_ATTEMPTS} conflicting updates in a row`,
        409,
      );
    },

    /**
     * Removes this plan's claim from a node with one resourceVersion-guarded merge patch (conflicts
     * retried), and sets `spec.unschedulable` back to unset when `uncordon` is true and the node was
     * not unschedulable before the plan ({@link NODE_WAS_UNSCHEDULABLE_ANNOTATION} != `'true'`).
     * A node that is missing or not claimed by this plan (name and uid) is left alone.
     *
     * @returns `uncordoned: true` when this call made the node schedulable again.
     * @throws TransientKubernetesError when conflicts persist or on transport errors / 5xx.
     */
    async releaseNode({ plan, node, uncordon }) {
      for (let attempt = 1; attempt <= CONFLICT_ATTEMPTS; attempt++) {
        const current = await readNode(node);
        if (!current || heldBy(current, plan) !== 'self') return { uncordoned: false };
        const ann = current.metadata?.annotations ?? {};
        const doUncordon = uncordon && ann[NODE_WAS_UNSCHEDULABLE_ANNOTATION] !== 'true';
        const patch: { metadata: object; spec?: object } = {
          metadata: {
            resourceVersion: current.metadata?.resourceVersion,
            annotations: {
              [NODE_CLAIM_ANNOTATION]: null,
              [NODE_CLAIM_UID_ANNOTATION]: null,
              [NODE_WAS_UNSCHEDULABLE_ANNOTATION]: null,
            },
          },
        };
        // `null` deletes the field, as `kubectl uncordon` leaves it (unschedulable is omitempty).
        if (doUncordon) patch.spec = { unschedulable: null };
        const patched = await patchNode(node, patch);
        if (patched === 'gone') return { uncordoned: false };
        if (patched === 'conflict') continue;
        const uncordoned = doUncordon && current.spec?.unschedulable === true;
        log.info({ node, plan: plan.name, uncordoned }, 'node released');
        return { uncordoned };
      }
      throw new TransientKubernetesError(
        `release node ${node}: ${CONFLICT_ATTEMPTS} conflicting updates in a row`,
        409,
      );
    },

    /**
     * Lists the pods bound to the node (`fieldSelector spec.nodeName=<node>`, all namespaces, paged),
     * classifies them with kubectl drain's rules ({@link buildNodePods}), lists the policy/v1
     * PodDisruptionBudgets of their namespaces and matches selectors as the eviction subresource does
     * (an empty selector matches every pod of the namespace; an absent one matches none).
     * A PDB not yet processed by the disruption controller (status.observedGeneration <
     * metadata.generation) is reported with `disruptionsAllowed: 0`, as the eviction subresource treats it.
     *
     * @throws TransientKubernetesError on transport errors / 5xx; non-retryable ApplicationFailure on 4xx.
     */
    async listNodePods({ node, selection }) {
      const raw = [];
      let cont: string | undefined;
      do {
        let page;
        try {
          page = await core.listPodForAllNamespaces({
            fieldSelector: `spec.nodeName=${node}`,
            limit: LIST_PAGE_SIZE,
            _continue: cont,
          });
        } catch (err) {
          throw classifyError(err, `list pods of node ${node}`);
        }
        raw.push(...page.items);
        cont = page.metadata?._continue || undefined;
      } while (cont);
      const namespaces = [...new Set(raw.map((p) => p.metadata?.namespace ?? ''))].sort();
      const pdbsByNs = new Map<string, V1PodDisruptionBudget[]>();
      await forEachLimit(namespaces, LIST_CONCURRENCY, async (namespace) => {
        const items: V1PodDisruptionBudget[] = [];
        let c: string | undefined;
        do {
          let page;
          try {
            page = await policy.listNamespacedPodDisruptionBudget({
              namespace,
              limit: LIST_PAGE_SIZE,
              _continue: c,
            });
          } catch (err) {
            throw classifyError(err, `list poddisruptionbudgets in ${namespace}`);
          }
          items.push(...page.items);
          c = page.metadata?._continue || undefined;
        } while (c);
        pdbsByNs.set(namespace, items);
      });

      return buildNodePods(raw, (ns) => pdbsByNs.get(ns) ?? [], selection);
    },

    /**
     * Sends one Eviction API call (`POST /api/v1/namespaces/{ns}/pods/{name}/eviction`, policy/v1
     * Eviction with `deleteOptions.preconditions.uid` and the optional `gracePeriodSeconds`) and
     * classifies the answer by status code and Status cause ({@link classifyEviction}, STACK.md §7):
     * 2xx → Evicted; 404 → Gone; 409 → Gone when a read confirms the pod with that UID no longer
     * exists, else Retry/Conflict; 429 → TooManyRequests (cause DisruptionBudget when a
     * `DisruptionBudget` StatusCause is present, else Throttled; `retryAfterSeconds` from the
     * `Retry-After` header or `details.retryAfterSeconds`, absent when the server gave none or 0);
     * 403 with cause NamespaceTerminating → Retry/NamespaceTerminating; 500 for a pod under several
     * PDBs → Failed/MultiplePodDisruptionBudgets; other 403 and 4xx → Failed with the Status reason.
     *
     * Inside an activity it heartbeats at once and every {@link EVICTION_HEARTBEAT_INTERVAL_MS} until
     * it answers, and the activity's cancellation aborts the HTTP request (an AbortSignal set on the
     * request by a middleware, see {@link captureAnswer}); a cancellation before the call is sent
     * sends nothing. An eviction the server already received is not undone by the abort: the
     * workflow re-reads the pod anyway. An answer that arrived before the cancellation is returned.
     * Outside an activity (CLI, tests) it neither heartbeats nor can be cancelled.
     *
     * @throws CancelledFailure when the activity is cancelled before the answer arrived.
     * @throws TransientKubernetesError on transport errors, timeouts, and 5xx other than the multiple-PDB 500.
     */
    async evictPod(input: EvictInput) {
      const { namespace, name, uid } = input;
      const pod = `${namespace}/${name}`;
      const deleteOptions: { preconditions: { uid: string }; gracePeriodSeconds?: number } = {
        preconditions: { uid },
      };
      if (input.gracePeriodSeconds !== undefined) deleteOptions.gracePeriodSeconds = input.gracePeriodSeconds;
      const ctx = activityContext();
      const cancel = ctx?.cancellationSignal;
      // A signal of our own, aborted by the activity's cancellation, so the request's abort listener
      // never outlives this call.
      const abort = new AbortController();
      const onCancel = (): void => abort.abort(cancel?.reason);
      cancel?.addEventListener('abort', onCancel, { once: true });
      if (cancel?.aborted) onCancel();
      const cancelled = (): CancelledFailure =>
        cancel?.reason instanceof CancelledFailure
          ? cancel.reason
          : new CancelledFailure(`evict pod ${pod} cancelled`);
      ctx?.heartbeat();
      const beat = ctx ? setInterval(() => ctx.heartbeat(), EVICTION_HEARTBEAT_INTERVAL_MS) : undefined;
      try {
        const capture = captureAnswer(ctx ? abort.signal : undefined);
        let answer: RawAnswer | undefined;
        try {
          await core.createNamespacedPodEviction(
            {
              name,
              namespace,
              body: {
                apiVersion: 'policy/v1',
                kind: 'Eviction',
                metadata: { name, namespace },
                deleteOptions,
              },
            },
            capture.options,
          );
          answer = capture.answer();
        } catch (err) {
          answer = capture.answer();
          if (answer === undefined && abort.signal.aborted) {
            log.info({ pod }, 'eviction cancelled, request aborted');
            throw cancelled();
          }
          if (answer === undefined && isApiException(err)) {
            answer = {
              code: err.code,
              headers: err.headers ?? {},
              text: typeof err.body === 'string' ? err.body : JSON.stringify(err.body ?? ''),
            };
          }
          if (answer === undefined) throw classifyError(err, `evict pod ${pod}`);
        }
        if (answer === undefined) return { outcome: 'Evicted' };
        let result = classifyEviction(answer, namespace);
        if (result === 'conflict') {
          if (abort.signal.aborted) throw cancelled();
          const state = await activities.checkPod({ namespace, name, uid });
          const status = parseStatus(answer.text);
          result =
            state === 'Gone'
              ? { outcome: 'Gone' }
              : {
                  outcome: 'Retry',
                  code: 409,
                  reason: 'Conflict',
                  message: status?.message ?? (answer.text.trim() || 'HTTP 409 Conflict'),
                };
        }
        const level = result.outcome === 'Evicted' || result.outcome === 'Gone' ? 'info' : 'warn';
        log[level]({ pod, code: answer.code, result }, 'eviction answered');
        return result;
      } finally {
        clearInterval(beat);
        cancel?.removeEventListener('abort', onCancel);
      }
    },

    /**
     * Reads the pod by name: `Gone` when absent (404) or when the name now belongs to another UID,
     * `Terminating` when it has a deletionTimestamp, else `Present`.
     *
     * @throws TransientKubernetesError on transport errors / 5xx; non-retryable ApplicationFailure on other 4xx.
     */
    async checkPod({ namespace, name, uid }) {
      let pod;
      try {
        pod = await core.readNamespacedPod({ name, namespace });
      } catch (err) {
        if (apiCode(err) === 404) return 'Gone';
        throw classifyError(err, `get pod ${namespace}/${name}`);
      }
      let state: PodState = 'Present';
      if (pod.metadata?.uid !== uid) state = 'Gone';
      else if (pod.metadata?.deletionTimestamp) state = 'Terminating';
      return state;
    },

    /**
     * Waits until no pod `namespace/name` with this UID exists (deleted, or replaced by another UID):
     * lists with `fieldSelector metadata.name=<name>` and watches from there, re-listing on any watch
     * end. Heartbeats every {@link HEARTBEAT_INTERVAL_MS}; `timeoutSeconds` bounds the wait.
     *
     * @returns `{ gone: true }` as soon as it is gone, `{ gone: false }` on timeout.
     * @throws CancelledFailure when the activity is cancelled.
     */
    async waitPodGone({ namespace, name, uid, timeoutSeconds }) {
      return waitOnObject<{ gone: boolean }>({
        what: `pod ${namespace}/${name}`,
        collectionPath: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
        name,
        timeoutSeconds,
        list: async () => {
          const l = await core.listNamespacedPod({ namespace, fieldSelector: `metadata.name=${name}` });
          return { item: l.items[0], resourceVersion: l.metadata?.resourceVersion };
        },
        evaluate: (pod) => (pod === undefined || pod.metadata?.uid !== uid ? { gone: true } : undefined),
        onTimeout: () => ({ gone: false }),
      });
    },

    /**
     * Waits until the PDB `namespace/name` allows a disruption: status.disruptionsAllowed > 0 and
     * status.observedGeneration >= metadata.generation (the eviction subresource refuses with 429 until
     * the disruption controller has processed the latest spec). Lists and watches like
     * {@link DrainActivities.waitPodGone}; heartbeats; bounded by `timeoutSeconds`.
     *
     * @returns `{ disruptionsAllowed, exists: true }` as soon as a disruption is allowed;
     *   `{ disruptionsAllowed: 0, exists: false }` as soon as the PDB is deleted (nothing guards the pods any
     *   more); `{ disruptionsAllowed: 0, exists: true }` on timeout.
     * @throws CancelledFailure when the activity is cancelled.
     */
    async waitDisruptionAllowed({ pdb, timeoutSeconds }) {
      const slash = pdb.indexOf('/');
      const namespace = pdb.slice(0, slash);
      const name = pdb.slice(slash + 1);
      if (slash <= 0 || !name) {
        throw ApplicationFailure.nonRetryable(
          `waitDisruptionAllowed: pdb must be "namespace/name", got "${pdb}"`,
          'InvalidInput',
        );
      }
      return waitOnObject<{ disruptionsAllowed: number; exists: boolean }>({
        what: `poddisruptionbudget ${pdb}`,
        collectionPath: `/apis/policy/v1/namespaces/${encodeURIComponent(namespace)}/poddisruptionbudgets`,
        name,
        timeoutSeconds,
        list: async () => {
          const l = await policy.listNamespacedPodDisruptionBudget({
            namespace,
            fieldSelector: `metadata.name=${name}`,
          });
          return { item: l.items[0], resourceVersion: l.metadata?.resourceVersion };
        },
        evaluate: (obj) => {
          if (obj === undefined) return { disruptionsAllowed: 0, exists: false };
          const allowed = observedAllowed(obj);
          return allowed > 0 ? { disruptionsAllowed: allowed, exists: true } : undefined;
        },
        onTimeout: () => ({ disruptionsAllowed: 0, exists: true }),
      });
    },

    /**
     * Writes `status` to the plan's status subresource, replacing it whole (PUT of the object read, with
     * its resourceVersion, so a concurrent writer causes a 409 that is retried on a fresh read, up to
     * {@link CONFLICT_ATTEMPTS} times). Skips the write when the stored status already equals `status`
     * ({@link statusEquals}: key order and `undefined` ignored). A plan that is absent or has another uid is
     * not an error.
     *
     * Note: the API server prunes fields the CRD schema does not declare, so a status with undeclared
     * fields would never compare equal and would be rewritten on every call.
     *
     * @returns `{ written, exists }`.
     * @throws TransientKubernetesError on transport errors / 5xx / persistent conflicts; non-retryable
     *   ApplicationFailure on other 4xx (e.g. 422 when the status violates the CRD schema).
     */
    async publishStatus({ plan, status }) {
      for (let attempt = 1; attempt <= CONFLICT_ATTEMPTS; attempt++) {
        const current = await readPlan(plan.name);
        if (!current || current.metadata?.uid !== plan.uid) return { written: false, exists: false };
        if (statusEquals(current.status ?? {}, status)) return { written: false, exists: true };
        try {
          await custom.replaceClusterCustomObjectStatus({
            group: GROUP,
            version: VERSION,
            plural: PLURAL,
            name: plan.name,
            body: { ...current, apiVersion: API_VERSION, kind: KIND, status },
          });
          return { written: true, exists: true };
        } catch (err) {
          const code = apiCode(err);
          if (code === 409) continue;
          if (code === 404) return { written: false, exists: false };
          throw classifyError(err, `update ${PLURAL}/${plan.name}/status`);
        }
      }
      throw new TransientKubernetesError(
        `update ${PLURAL}/${plan.name}/status: ${CONFLICT_ATTEMPTS} conflicting updates in a row`,
        409,
      );
    },

    /**
     * Records a core/v1 Event on the plan in namespace {@link EVENT_NAMESPACE} (involvedObject
     * MaintenancePlan name/uid, source component {@link EVENT_COMPONENT}). Repeated events are
     * aggregated like the kubelet's recorder does: the Event name is `<plan>.<hash>` where the hash covers
     * plan uid, type, reason and message, and an existing Event gets `count + 1` and a new
     * `lastTimestamp` (merge patch guarded by resourceVersion) instead of a new object.
     * Best effort: every error is logged and swallowed.
     */
    async recordEvent({ plan, type, reason, message }) {
      const msg = message.length > 1024 ? `${message.slice(0, 1021)}...` : message;
      const hash = createHash('sha256')
        .update(`${plan.uid}\n${type}\n${reason}\n${msg}`)
        .digest('hex')
        .slice(0, 16);
      const name = `${plan.name.slice(0, 236)}.${hash}`;
      const namespace = EVENT_NAMESPACE;
      const now = new Date();
      try {
        for (let attempt = 1; attempt <= 3; attempt++) {
          let existing: CoreV1Event | undefined;
          try {
            existing = await core.readNamespacedEvent({ name, namespace });
          } catch (err) {
            if (apiCode(err) !== 404) throw err;
          }
          if (existing) {
            try {
              await core.patchNamespacedEvent(
                {
                  name,
                  namespace,
                  body: {
                    metadata: { resourceVersion: existing.metadata?.resourceVersion },
                    count: (existing.count ?? 1) + 1,
                    lastTimestamp: now.toISOString(),
                  },
                },
                MERGE_PATCH,
              );
              return;
            } catch (err) {
              if (apiCode(err) === 409 || apiCode(err) === 404) continue;
              throw err;
            }
          }
          try {
            await core.createNamespacedEvent({
              namespace,
              body: {
                metadata: { name, namespace },
                involvedObject: { apiVersion: API_VERSION, kind: KIND, name: plan.name, uid: plan.uid },
                reason,
                message: msg,
                type,
                source: { component: EVENT_COMPONENT },
                reportingComponent: EVENT_COMPONENT,
                reportingInstance: hostname(),
                firstTimestamp: now,
                lastTimestamp: now,
                count: 1,
              },
            });
            return;
          } catch (err) {
            if (apiCode(err) === 409) continue; // created concurrently: aggregate into it
            throw err;
          }
        }
      } catch (err) {
        log.warn(
          { plan: plan.name, reason, err: classifyError(err, `record event ${name}`).message },
          'recordEvent failed',
        );
      }
    },

    /** See {@link createObserveNode}: answered from a watch cache shared by this object's calls. */
    observeNode: createObserveNode({
      kubeConfig: kc,
      logger: log,
      cache: deps.watchCache,
      heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    }),
  };
  return activities;
}

/** Runs `fn` over `items` with at most `limit` calls in flight; rejects with the first error. */
async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
