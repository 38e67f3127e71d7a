/**
 * The Eviction API calls a `drainflow run --worker` process made, read from its log: the eviction
 * activity logs every answer (`eviction answered`, with the pod and the classified outcome;
 * src/activities/eviction.ts), so a test can tell whether a pod was evicted twice without the API
 * server's audit log.
 */

/** One `eviction answered` line of a worker's log. */
export interface EvictionAnswer {
  /** `namespace/name`. */
  pod: string;
  /** HTTP status of the answer. */
  code: number;
  /** The classified outcome (Evicted, Gone, TooManyRequests, Retry, Failed). */
  outcome: string;
}

/** Every Eviction API answer a worker logged (its pino JSON lines), in order. */
export function evictionAnswers(log: string): EvictionAnswer[] {
  const out: EvictionAnswer[] = [];
  for (const line of log.split('\n')) {
    if (!line.includes('"eviction answered"')) continue;
    const rec = JSON.parse(line) as { pod: string; code: number; result: { outcome: string } };
    out.push({ pod: rec.pod, code: rec.code, outcome: rec.result.outcome });
  }
  return out;
}

/**
 * The calls sent for a pod after its `Evicted` (2xx) answer, whatever they were answered (201 on a
 * terminating pod, 404 on a gone one): each is a second eviction. A refusal before the `Evicted`
 * answer (429, 409) is a retry, not counted. @returns `pod: code outcome` per such call, and the
 * pods evicted.
 */
export function evictedAgain(answers: EvictionAnswer[]): { again: string[]; evicted: string[] } {
  const evicted = new Set<string>();
  const again: string[] = [];
  for (const a of answers) {
    if (evicted.has(a.pod)) again.push(`${a.pod}: ${a.code} ${a.outcome}`);
    if (a.outcome === 'Evicted') evicted.add(a.pod);
  }
  return { again, evicted: [...evicted].sort() };
}
