/**
 * The eviction activity, {@link DrainActivities.evictPod}, and the rule for every answer of the
 * Eviction API ({@link classifyEviction}):
 *
 * | answer                                                             | result                                   |
 * | ------------------------------------------------------------------ | ---------------------------------------- |
 * | 2xx                                                                | `Evicted`                                |
 * | 404                                                                | `Gone` (already gone = success)          |
 * | 409, the pod with that UID is gone (read after the answer)         | `Gone`                                   |
 * | 409, the pod with that UID still exists                            | `Retry`/`Conflict` (retried after backoff) |
 * | 429 with a `DisruptionBudget` cause                                | `TooManyRequests`/`DisruptionBudget`     |
 * | 429 without it (API Priority and Fairness, max-in-flight; plain text) | `TooManyRequests`/`Throttled`         |
 * | 429's `Retry-After` (seconds or HTTP-date) or `details.retryAfterSeconds` > 0 | `retryAfterSeconds`; absent when 0 or none |
 * | 500 "more than one PodDisruptionBudget"                            | `Failed`/`MultiplePodDisruptionBudgets`  |
 * | 403 with cause `NamespaceTerminating`                              | `Retry`/`NamespaceTerminating`           |
 * | other 403, other 4xx                                               | `Failed` with the Status reason          |
 * | 408, other 5xx, no answer                                          | throws `TransientKubernetesError`        |
 * | the activity is cancelled while the call is in flight              | aborts the request, throws `CancelledFailure` |
 */
import { CancelledFailure } from '@temporalio/activity';
import type { Logger } from 'pino';
import {
  TransientKubernetesError,
  describeAnswer,
  header,
  isTransientCode,
  parseStatus,
  type K8sStatus,
  type RawAnswer,
} from '../k8s/errors.js';
import { BlockerReason } from '../api/reasons.js';
import type { KubernetesPort } from '../k8s/port.js';
import { parseRetryAfter } from '../k8s/retry-after.js';
import { activityContext, startHeartbeats } from './context.js';
import type { DrainActivities } from './types.js';
import type { EvictInput, EvictResult } from '../contract/eviction.js';

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

/**
 * Delay of {@link DrainActivities.evictPod}'s first heartbeat, ms: a call answered sooner (nearly
 * all) sends no heartbeat call to the Temporal server (see `startHeartbeats` in ./context.ts); a
 * held call learns of a cancellation from this heartbeat's answer on. Capped at half the
 * activity's heartbeat timeout (the node workflow sets half of eviction.callTimeoutSeconds, at
 * least 2 s).
 */
export const EVICTION_FIRST_HEARTBEAT_MS = 2000;

/** `n` when it is a finite number > 0, else `undefined`. */
function positiveSeconds(n: number | undefined): number | undefined {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * Classifies one Eviction API answer by status code and Status cause (the module's table; a 429's
 * PDB name is parsed from its cause message, a Failed without a Status reason says `HTTP<code>`).
 * A 409 is `'conflict'`, which the caller resolves by reading the pod.
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
    // itself never sends 0 (it sets the header only when retryAfterSeconds > 0), so a 0
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
    return { outcome: 'Failed', code, reason: BlockerReason.MultiplePodDisruptionBudgets, message };
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
      reason: BlockerReason.NamespaceTerminating,
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
 * Builds the eviction activity over `port`.
 *
 * @param port the Kubernetes calls (src/k8s/port.ts).
 * @param log where every answer is logged (`info` for Evicted/Gone, `warn` otherwise).
 */
export function createEvictionActivities(
  port: KubernetesPort,
  log: Logger,
): Pick<DrainActivities, 'evictPod'> {
  return {
    /**
     * Sends one Eviction API call (`POST /api/v1/namespaces/{ns}/pods/{name}/eviction`, policy/v1
     * Eviction with `deleteOptions.preconditions.uid` and the optional `gracePeriodSeconds`) and
     * classifies the answer ({@link classifyEviction}; a 409 reads the pod: see the module's table).
     *
     * Inside an activity it heartbeats after {@link EVICTION_FIRST_HEARTBEAT_MS}, then every
     * {@link EVICTION_HEARTBEAT_INTERVAL_MS} until it answers, and the activity's cancellation aborts the HTTP request (an AbortSignal set on the
     * request by a middleware in src/k8s/port.ts); a cancellation before the call is sent
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
      const stopHeartbeats = startHeartbeats(ctx, {
        firstAfterMs: EVICTION_FIRST_HEARTBEAT_MS,
        intervalMs: EVICTION_HEARTBEAT_INTERVAL_MS,
      });
      try {
        const answer = await port.evictPod(input, ctx ? abort.signal : undefined);
        if (answer === 'aborted') {
          log.info({ pod }, 'eviction cancelled, request aborted');
          throw cancelled();
        }
        let result = classifyEviction(answer, namespace);
        if (result === 'conflict') {
          if (abort.signal.aborted) throw cancelled();
          // Gone when no pod of that name has this UID any more (absent, or the name reused).
          const read = await port.readPod(namespace, name);
          const status = parseStatus(answer.text);
          result =
            read?.metadata?.uid !== uid
              ? { outcome: 'Gone' }
              : {
                  outcome: 'Retry',
                  code: 409,
                  reason: BlockerReason.Conflict,
                  message: status?.message ?? (answer.text.trim() || 'HTTP 409 Conflict'),
                };
        }
        const level = result.outcome === 'Evicted' || result.outcome === 'Gone' ? 'info' : 'warn';
        log[level]({ pod, code: answer.code, result }, 'eviction answered');
        return result;
      } finally {
        stopHeartbeats();
        cancel?.removeEventListener('abort', onCancel);
      }
    },
  };
}
