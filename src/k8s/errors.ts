/**
 * What an answer of the Kubernetes API server means for the caller: the one place where a
 * `@kubernetes/client-node` error (an `ApiException` with the HTTP code, or a transport error)
 * becomes a typed error.
 *
 * | answer                                                        | error                                            |
 * | ------------------------------------------------------------- | ------------------------------------------------ |
 * | no answer (connection refused/reset, DNS, timeout)            | {@link TransientKubernetesError} without `code`  |
 * | 408, 429 (outside the Eviction API), 5xx                      | {@link TransientKubernetesError} with `code`     |
 * | any other 4xx                                                 | {@link PermanentKubernetesError} (`code`, `reason`) |
 *
 * Both are what an activity throws: Temporal retries a `TransientKubernetesError` with the
 * activity's retry policy (its `name` is the failure `type`), and never retries a
 * `PermanentKubernetesError` (a non-retryable `ApplicationFailure` of type
 * {@link KUBERNETES_API_ERROR_TYPE}). Calls that expect a code as an answer (404 on a read, 409 on
 * a guarded write) test {@link apiCode} before classifying. The Eviction API's own answers (429
 * with a PodDisruptionBudget cause, the two-PDB 500, ...) are classified in
 * src/activities/eviction.ts on top of {@link parseStatus}.
 */
import { ApiException } from './client.js';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';

/** Temporal failure `type` of a {@link TransientKubernetesError} thrown by an activity (its `name`). */
export const TRANSIENT_KUBERNETES_ERROR_TYPE = 'TransientKubernetesError';

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
    this.name = TRANSIENT_KUBERNETES_ERROR_TYPE;
    this.code = code;
  }
}

/** Temporal failure `type` of the non-retryable Kubernetes API errors (4xx other than 404/408/409/429 where handled). */
export const KUBERNETES_API_ERROR_TYPE = 'KubernetesApiError';

/**
 * A Kubernetes API refusal that waiting never fixes (a 4xx other than 408/429, e.g. 403 without
 * RBAC, 422 for a status the CRD schema refuses): a non-retryable Temporal `ApplicationFailure` of
 * type {@link KUBERNETES_API_ERROR_TYPE} whose details are `[{ code, reason }]`.
 */
export class PermanentKubernetesError extends ApplicationFailure {
  /** HTTP status of the answer. */
  readonly code: number;
  /** The Status `reason` (e.g. `Forbidden`), or `HTTP<code>` when the body had none. */
  readonly reason: string;
  constructor(message: string, code: number, reason: string) {
    super(message, KUBERNETES_API_ERROR_TYPE, true, [{ code, reason }]);
    this.code = code;
    this.reason = reason;
  }
}

/** The fields of a `metav1.Status` body this project reads. */
export interface K8sStatus {
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

/** Reads a header case-insensitively; `undefined` when absent. */
export function header(headers: Record<string, string> | undefined, name: string): string | undefined {
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
export function parseStatus(body: unknown): K8sStatus | undefined {
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
export function isApiException(err: unknown): err is ApiException<unknown> {
  if (err instanceof ApiException) return true;
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { code?: unknown }).code === 'number' &&
    'body' in err &&
    'headers' in err
  );
}

/** Status code of an ApiException, `undefined` for transport errors (the server did not answer). */
export function apiCode(err: unknown): number | undefined {
  return isApiException(err) ? err.code : undefined;
}

/** One line describing a server answer: `HTTP 403 Forbidden: pods "x" is forbidden: ...`, body text capped. */
export function describeAnswer(code: number, body: unknown): string {
  const status = parseStatus(body);
  if (status)
    return `HTTP ${code}${status.reason ? ` ${status.reason}` : ''}: ${status.message ?? ''}`.trim();
  const text = typeof body === 'string' ? body.trim() : body === undefined ? '' : String(body);
  return `HTTP ${code}${text ? `: ${text.slice(0, 300)}` : ''}`;
}

/**
 * HTTP status of what any client-node call threw: an ApiException's `code`, or the `statusCode` that
 * a failed list or watch of an informer carries; `undefined` when the server did not answer.
 */
export function httpStatus(err: unknown): number | undefined {
  const code = apiCode(err);
  if (code !== undefined) return code;
  const e = err as { code?: unknown; statusCode?: unknown } | null;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return typeof e?.code === 'number' ? e.code : undefined;
}

/** Whether an HTTP code is a refusal that waiting never fixes: a 4xx other than 408 and 429. */
export function isPermanentCode(code: number): boolean {
  return code >= 400 && code < 500 && !isTransientCode(code);
}

/** Whether an HTTP code is worth retrying as is: 408, 429 (outside the Eviction API) and 5xx. */
export function isTransientCode(code: number): boolean {
  return code === 408 || code === 429 || code >= 500;
}

/**
 * Turns an error of a Kubernetes call into what an activity throws: transport errors and transient codes
 * as {@link TransientKubernetesError} (retryable), other 4xx as a {@link PermanentKubernetesError}.
 * Temporal failures (cancellation, already-classified failures) pass through.
 *
 * @param err what the client-node call threw.
 * @param what the call, for the message, e.g. `patch node kwok-node-0`.
 */
export function classifyError(err: unknown, what: string): Error {
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
    return new PermanentKubernetesError(text, err.code, reason);
  }
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new TransientKubernetesError(`${what}: ${message}`);
}
