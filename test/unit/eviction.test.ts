/**
 * Table test of {@link classifyEviction}: one Eviction API answer (status code, headers, raw body) →
 * the activity's outcome, with no I/O. Headers are lower-case, as undici hands them to client-node's
 * middleware; bodies are compact JSON `metav1.Status` objects except the API Priority and Fairness
 * rejection, which is plain text (CONTRIBUTING.md, "Eviction API answers, as observed").
 *
 * Recorded from Kubernetes 1.34.4 (the local stack; test/e2e/stack.test.ts and
 * test/e2e/activities.test.ts assert them live): 201, 404, 409, both 429 DisruptionBudget answers, the
 * APF 429, the multiple-PDB 500, 403 NamespaceTerminating, 400 and 422. Built after the API server's
 * error constructors, not recorded: the 201 carrying a Failure Status, the other 403s, 500
 * InternalError, 504, 408, and the Retry-After variants (0, HTTP-date, unparseable) that no 1.34
 * eviction answer carries but a proxy or another server may.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyEviction } from '../../src/activities/eviction.js';
import { TransientKubernetesError, type RawAnswer } from '../../src/k8s/errors.js';
import type { EvictResult } from '../../src/contract/eviction.js';

const NS = 'shop';
// 1994-11-06T08:49:37Z, the RFC 9110 example date, as "now" for the HTTP-date Retry-After.
const NOW_MS = Date.UTC(1994, 10, 6, 8, 49, 37);

/** The headers every JSON answer of the API server carries (APF, audit id, no caching). */
function jsonHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    'audit-id': '4f0c6d1e-2b7a-4a55-9d0e-3a1f2c9b8e71',
    'cache-control': 'no-cache, private',
    'content-type': 'application/json',
    date: 'Sun, 06 Nov 1994 08:49:37 GMT',
    'x-kubernetes-pf-flowschema-uid': '9a3e0f7c-1d42-4c1e-8b0a-5f6e7d8c9b0a',
    'x-kubernetes-pf-prioritylevel-uid': '2c7b1e9d-6f4a-4b3c-a1d0-8e9f0a1b2c3d',
    ...extra,
  };
}

/** A `metav1.Status` body as the API server serializes it (field order as encoded by apimachinery). */
function statusBody(s: {
  status: 'Success' | 'Failure';
  code: number;
  message?: string;
  reason?: string;
  details?: object;
}): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: s.status,
    ...(s.message !== undefined ? { message: s.message } : {}),
    ...(s.reason !== undefined ? { reason: s.reason } : {}),
    ...(s.details !== undefined ? { details: s.details } : {}),
    code: s.code,
  });
}

const PDB_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";
const MULTIPLE_PDBS =
  'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';
const APF_TEXT = 'Too many requests, please try again later.\n';
const SIDEWAYS_MESSAGE =
  'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": ' +
  'supported values: "Foreground", "Background", "Orphan", "nil"';

function apfHeaders(retryAfter: string): Record<string, string> {
  return {
    'audit-id': '7d2e9c1a-0b3f-4e6d-8a5c-1f2e3d4c5b6a',
    'cache-control': 'no-cache, private',
    'content-type': 'text/plain; charset=utf-8',
    date: 'Sun, 06 Nov 1994 08:49:37 GMT',
    'retry-after': retryAfter,
    'x-content-type-options': 'nosniff',
    'x-kubernetes-pf-flowschema-uid': '9a3e0f7c-1d42-4c1e-8b0a-5f6e7d8c9b0a',
    'x-kubernetes-pf-prioritylevel-uid': '2c7b1e9d-6f4a-4b3c-a1d0-8e9f0a1b2c3d',
  };
}

/** What a row expects: an outcome, the 409 marker, or a TransientKubernetesError with that code. */
type Expected = EvictResult | 'conflict' | { throws: number };

interface Row {
  name: string;
  answer: RawAnswer;
  expect: Expected;
}

/** An answer with the API server's JSON headers (plus `extra`) and a `metav1.Status` body. */
function jsonAnswer(
  code: number,
  body: Parameters<typeof statusBody>[0],
  extra?: Record<string, string>,
): RawAnswer {
  return { code, headers: jsonHeaders(extra), text: statusBody(body) };
}

/** A JSON answer whose body is a Status Failure with the same code. */
function failure(
  code: number,
  s: { message?: string; reason?: string; details?: object },
  extra?: Record<string, string>,
): RawAnswer {
  return jsonAnswer(code, { status: 'Failure', code, ...s }, extra);
}

/** The API Priority and Fairness rejection: 429, plain text, this Retry-After. */
function apfAnswer(retryAfter: string): RawAnswer {
  return { code: 429, headers: apfHeaders(retryAfter), text: APF_TEXT };
}

/** TooManyRequests/Throttled with `message` (the APF text by default) and retryAfterSeconds when given. */
function throttled(
  retryAfterSeconds?: number,
  message = 'Too many requests, please try again later.',
): EvictResult {
  return {
    outcome: 'TooManyRequests',
    cause: 'Throttled',
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
    message,
  };
}

/** A 429 DisruptionBudget Status whose cause says `cause`, with `details` added. */
function pdbRejection(cause: string, details: object = {}, extra?: Record<string, string>): RawAnswer {
  return failure(
    429,
    {
      message: PDB_MESSAGE,
      reason: 'TooManyRequests',
      details: { causes: [{ reason: 'DisruptionBudget', message: cause }], ...details },
    },
    extra,
  );
}

/** A 429 Status "please try again later" (not a PDB) with these details. */
const tryLater = (details: object, extra?: Record<string, string>): RawAnswer =>
  failure(429, { message: TRY_LATER, reason: 'TooManyRequests', details }, extra);

/** A Failed outcome. */
const failed = (code: number, reason: string, message: string): EvictResult => ({
  outcome: 'Failed',
  code,
  reason,
  message,
});

const TRY_LATER = 'Too many requests: please try again later';
const PDB_BUSY = 'The disruption budget q.pdb-1 is still being processed by the server.';
const PDB_SPENT = 'The disruption budget web-pdb needs 3 healthy pods and has 3 currently';
const TERMINATING =
  'pods "solo" is forbidden: unable to create new content in namespace ev-ns because it is being terminated';
const RBAC =
  'pods "solo" is forbidden: User "system:serviceaccount:shop:drainer" cannot create resource ' +
  '"pods/eviction" in API group "" in the namespace "shop"';
const NEGATIVE = 'poddisruptionbudgets.policy "web-pdb" is forbidden: pdb disruptions allowed is negative';

const ROWS: Row[] = [
  {
    name: '201 Status Success → Evicted',
    answer: jsonAnswer(201, { status: 'Success', code: 201 }),
    expect: { outcome: 'Evicted' },
  },
  {
    name: '200 with an empty body (terminal pod deleted directly) → Evicted',
    answer: { code: 200, headers: jsonHeaders(), text: '' },
    expect: { outcome: 'Evicted' },
  },
  {
    name: '201 whose body is a Status Failure code 500 "more than one PodDisruptionBudget" → Failed',
    answer: jsonAnswer(201, { status: 'Failure', code: 500, message: MULTIPLE_PDBS }),
    expect: failed(500, 'MultiplePodDisruptionBudgets', MULTIPLE_PDBS),
  },
  {
    name: '500 "more than one PodDisruptionBudget" (no reason, no details) → Failed, not thrown',
    answer: failure(500, { message: MULTIPLE_PDBS }),
    expect: failed(500, 'MultiplePodDisruptionBudgets', MULTIPLE_PDBS),
  },
  {
    name: '404 NotFound → Gone',
    answer: failure(404, {
      message: 'pods "web-7d4b9c-x2x9z" not found',
      reason: 'NotFound',
      details: { name: 'web-7d4b9c-x2x9z', kind: 'pods' },
    }),
    expect: { outcome: 'Gone' },
  },
  {
    name: '409 Conflict (UID precondition) → the conflict marker, resolved by reading the pod',
    answer: failure(409, {
      message:
        'Operation cannot be fulfilled on Pod "solo": the UID in the precondition ' +
        '(11111111-1111-1111-1111-111111111111) does not match the UID in record ' +
        '(0b6f3c1e-8a2d-4f5e-9c7b-6d5e4f3a2b1c). The object might have been deleted and then recreated',
      reason: 'Conflict',
      details: { name: 'solo', kind: 'Pod' },
    }),
    expect: 'conflict',
  },
  {
    name: '429 DisruptionBudget, no Retry-After (budget spent) → TooManyRequests with the PDB key',
    answer: pdbRejection(PDB_SPENT),
    expect: {
      outcome: 'TooManyRequests',
      cause: 'DisruptionBudget',
      pdb: `${NS}/web-pdb`,
      message: `${PDB_MESSAGE} ${PDB_SPENT}`,
    },
  },
  {
    name: '429 DisruptionBudget "still being processed" with Retry-After 10 → retryAfterSeconds 10',
    answer: pdbRejection(PDB_BUSY, { retryAfterSeconds: 10 }, { 'retry-after': '10' }),
    expect: {
      outcome: 'TooManyRequests',
      cause: 'DisruptionBudget',
      retryAfterSeconds: 10,
      pdb: `${NS}/q.pdb-1`,
      message: `${PDB_MESSAGE} ${PDB_BUSY}`,
    },
  },
  {
    name: '429 from API Priority and Fairness (plain text, Retry-After 4) → Throttled',
    answer: apfAnswer('4'),
    expect: throttled(4),
  },
  {
    name: '429 with Retry-After: 0 → retryAfterSeconds absent (the caller backs off, no 0 s loop)',
    answer: apfAnswer('0'),
    expect: throttled(),
  },
  {
    name: '429 Status with details.retryAfterSeconds 0 and no header → retryAfterSeconds absent',
    answer: tryLater({ retryAfterSeconds: 0 }),
    expect: throttled(undefined, TRY_LATER),
  },
  {
    name: '429 with Retry-After 0 but details.retryAfterSeconds 3 → 3',
    answer: tryLater({ retryAfterSeconds: 3 }, { 'retry-after': '0' }),
    expect: throttled(3, TRY_LATER),
  },
  {
    name: '429 with an HTTP-date Retry-After 15 s ahead → retryAfterSeconds 15',
    answer: apfAnswer('Sun, 06 Nov 1994 08:49:52 GMT'),
    expect: throttled(15),
  },
  {
    name: '429 with an HTTP-date Retry-After in the past → retryAfterSeconds absent',
    answer: apfAnswer('Sun, 06 Nov 1994 08:40:00 GMT'),
    expect: throttled(),
  },
  {
    name: '429 with an unparseable Retry-After → retryAfterSeconds absent',
    answer: apfAnswer('soon'),
    expect: throttled(),
  },
  {
    name: '403 Forbidden with cause NamespaceTerminating → Retry/NamespaceTerminating',
    answer: failure(403, {
      message: TERMINATING,
      reason: 'Forbidden',
      details: {
        name: 'solo',
        kind: 'pods',
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: 'namespace ev-ns is being terminated',
            field: 'metadata.namespace',
          },
        ],
      },
    }),
    expect: { outcome: 'Retry', code: 403, reason: 'NamespaceTerminating', message: TERMINATING },
  },
  {
    name: '403 Forbidden by RBAC → Failed/Forbidden',
    answer: failure(403, { message: RBAC, reason: 'Forbidden', details: { name: 'solo', kind: 'pods' } }),
    expect: failed(403, 'Forbidden', RBAC),
  },
  {
    name: '403 "pdb disruptions allowed is negative" → Failed/Forbidden',
    answer: failure(403, {
      message: NEGATIVE,
      reason: 'Forbidden',
      details: { name: 'web-pdb', group: 'policy', kind: 'poddisruptionbudgets' },
    }),
    expect: failed(403, 'Forbidden', NEGATIVE),
  },
  {
    name: '500 InternalError → throws TransientKubernetesError',
    answer: failure(500, {
      message: 'Internal error occurred: etcdserver: request timed out',
      reason: 'InternalError',
      details: { causes: [{ message: 'etcdserver: request timed out' }] },
    }),
    expect: { throws: 500 },
  },
  {
    name: '504 Timeout (PDB status update kept conflicting, Retry-After 10) → throws TransientKubernetesError',
    answer: failure(
      504,
      {
        message: 'Timeout: couldn\'t update PodDisruptionBudget "web-pdb" due to conflicts',
        reason: 'Timeout',
        details: { retryAfterSeconds: 10 },
      },
      { 'retry-after': '10' },
    ),
    expect: { throws: 504 },
  },
  {
    name: '422 Invalid (deleteOptions.propagationPolicy "Sideways", as 1.34 answers it) → Failed/Invalid',
    answer: failure(422, {
      message: SIDEWAYS_MESSAGE,
      reason: 'Invalid',
      details: {
        group: 'meta.k8s.io',
        kind: 'DeleteOptions',
        causes: [
          {
            reason: 'FieldValueNotSupported',
            message:
              'Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
            field: 'propagationPolicy',
          },
        ],
      },
    }),
    expect: failed(422, 'Invalid', SIDEWAYS_MESSAGE),
  },
  {
    name: '400 BadRequest (name in URL and body differ) → Failed/BadRequest',
    answer: failure(400, {
      message: 'name in URL does not match name in Eviction object',
      reason: 'BadRequest',
    }),
    expect: failed(400, 'BadRequest', 'name in URL does not match name in Eviction object'),
  },
  {
    name: '400 with a plain-text body (e.g. a proxy in front of the API server) → Failed/HTTP400 with the text',
    answer: {
      code: 400,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      text: 'Bad Request\n',
    },
    expect: failed(400, 'HTTP400', 'Bad Request'),
  },
  {
    name: '408 Request Timeout → throws TransientKubernetesError',
    answer: failure(408, { message: 'request did not complete within requested timeout', reason: 'Timeout' }),
    expect: { throws: 408 },
  },
];

describe('classifyEviction', () => {
  for (const row of ROWS) {
    it(row.name, () => {
      const run = (): EvictResult | 'conflict' => classifyEviction(row.answer, NS, NOW_MS);
      const want = row.expect;
      if (typeof want === 'object' && 'throws' in want) {
        assert.throws(run, (err: unknown) => {
          assert.ok(err instanceof TransientKubernetesError, `TransientKubernetesError, got ${String(err)}`);
          assert.equal(err.code, want.throws);
          assert.match(err.message, new RegExp(`^evict pod: HTTP ${want.throws}`));
          return true;
        });
        return;
      }
      assert.deepEqual(run(), want);
    });
  }

  it('never reports retryAfterSeconds 0 for any 429 in the table', () => {
    for (const row of ROWS.filter((r) => r.answer.code === 429)) {
      const r = classifyEviction(row.answer, NS, NOW_MS);
      assert.ok(typeof r === 'object' && r.outcome === 'TooManyRequests', row.name);
      assert.notEqual(r.retryAfterSeconds, 0, row.name);
    }
  });

  it('reads Retry-After case-insensitively', () => {
    const r = classifyEviction({ code: 429, headers: { 'Retry-After': '7' }, text: APF_TEXT }, NS, NOW_MS);
    assert.deepEqual(r, throttled(7));
  });
});
