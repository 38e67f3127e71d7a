/**
 * Only the replay copy of the first node workflow (src/workflows/legacy/node-v1.ts) uses this
 * module: the node drain of today decides in src/drain/node-drain.ts (`decideNode`), over its own
 * per-pod state `PodRecord`. Kept unchanged so histories of that version replay.
 *
 * The next-step decision of a node drain: which pods to evict now, which PodDisruptionBudgets to
 * wait for, and when to look again. Pure and deterministic (used inside the node workflow).
 *
 * Model: each pod to evict is a {@link PodTrack}; each PDB covering such a pod a {@link PdbTrack}.
 * Evictions behind one PDB are coordinated: no more in flight than the PDB's last observed
 * `disruptionsAllowed` (minus the ones this drain already spent). When a PDB allows nothing, one
 * waiter watches it (bounded by the backoff) instead of every pod retrying blindly — kubectl drain
 * retries each blocked pod every 5 s (k8s.io/kubectl/pkg/cmd/drain, EvictErrorRetryDelay).
 */

/** Lifecycle of one pod in a drain. */
export type PodTrackState =
  /** Not yet evicted; may be evicted from `notBeforeMs` on (cooldown). */
  | 'Pending'
  /** An Eviction API call is in flight. */
  | 'Evicting'
  /** Evicted (or found terminating); waiting for it to disappear. */
  | 'Terminating'
  /** Gone: the drain is done with it. */
  | 'Gone'
  /** An answer that waiting never fixes (e.g. 500 for two PDBs): a permanent blocker. */
  | 'Failed';

/** One pod to evict. */
export interface PodTrack {
  /** `namespace/name`. */
  key: string;
  namespace: string;
  name: string;
  uid: string;
  /** Keys of PDBs covering the pod. */
  pdbs: string[];
  state: PodTrackState;
  /** Eviction calls sent for this pod. */
  attempts: number;
  /** Earliest time of the next eviction call, ms since epoch (the cooldown's end). */
  notBeforeMs: number;
  /** When the pod was first refused (429 or failure), ms since epoch. */
  blockedSinceMs?: number;
  /** CamelCase reason of the last refusal (DisruptionBudget, TooManyRequests, ...). */
  lastReason?: string;
  lastMessage?: string;
  /** The PDB named by the last 429, when any. */
  blockingPdb?: string;
}

/** One PodDisruptionBudget as this drain sees it. */
export interface PdbTrack {
  key: string;
  /** Disruptions the PDB allowed at the last observation, minus those this drain spent since. */
  allowed: number;
  /** Whether a waiter (an activity watching the PDB) is running. */
  waiting: boolean;
  /** Consecutive waits that ended without the PDB allowing a disruption (drives the backoff). */
  waitRounds: number;
  /** End of the current wait, ms since epoch (shown as nextActionAt). */
  waitUntilMs?: number;
}

/** Limits for {@link planNextStep}. */
export interface StepLimits {
  nowMs: number;
  /** eviction.maxConcurrentPerNode. */
  maxInFlight: number;
  paused: boolean;
}

/** Output of {@link planNextStep}. */
export interface NextStep {
  /** Pod keys to evict now, in key order. */
  evict: string[];
  /** PDB keys to start a waiter for now. */
  waitPdbs: string[];
  /** When a cooling-down pod becomes eligible, ms since epoch; absent when none is cooling down. */
  wakeAtMs?: number;
  /** Whether every pod is Gone or Failed. */
  done: boolean;
}

/**
 * Decides the next step of a node drain.
 *
 * - Paused: nothing new starts (timers keep running, so a cooldown still ends on time).
 * - A pod is eligible when Pending and its cooldown has ended (`notBeforeMs <= nowMs`).
 * - At most `maxInFlight` eviction calls are in flight.
 * - A pod covered by exactly one PDB is evicted only while that PDB has `allowed > 0`; each start
 *   spends one. With none left, one waiter is requested for the PDB (not while an eviction behind
 *   it is in flight: its answer comes first). A pod covered by several PDBs
 *   is sent as is: the API server answers 500, reported as a permanent blocker (eviction.go).
 */
export function planNextStep(
  pods: readonly PodTrack[],
  pdbs: ReadonlyMap<string, PdbTrack>,
  limits: StepLimits,
): NextStep {
  const evict: string[] = [];
  const waitPdbs = new Set<string>();
  let inFlight = pods.filter((p) => p.state === 'Evicting').length;
  const budget = new Map<string, number>();
  for (const [key, pdb] of pdbs) budget.set(key, pdb.allowed);
  let wakeAtMs: number | undefined;
  // A PDB with an eviction in flight is not waited for yet: the call's answer updates our view,
  // and a wait started now could read the budget before that call spent it.
  const busy = new Set(pods.filter((p) => p.state === 'Evicting').flatMap((p) => p.pdbs));
  const sorted = [...pods].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const pod of sorted) {
    if (pod.state !== 'Pending') continue;
    if (pod.notBeforeMs > limits.nowMs) {
      wakeAtMs = wakeAtMs === undefined ? pod.notBeforeMs : Math.min(wakeAtMs, pod.notBeforeMs);
      continue;
    }
    if (limits.paused || inFlight >= limits.maxInFlight) continue;
    if (pod.pdbs.length === 1) {
      const key = pod.pdbs[0]!;
      const left = budget.get(key) ?? 0;
      if (left <= 0) {
        const pdb = pdbs.get(key);
        if (!pdb?.waiting && !busy.has(key)) waitPdbs.add(key);
        continue;
      }
      budget.set(key, left - 1);
      busy.add(key);
    }
    evict.push(pod.key);
    inFlight++;
  }
  const done = pods.every((p) => p.state === 'Gone' || p.state === 'Failed');
  return { evict, waitPdbs: [...waitPdbs].sort(), ...(wakeAtMs !== undefined ? { wakeAtMs } : {}), done };
}

/**
 * The time shown as `nextActionAt`: the earliest end of a cooldown — a pod's `notBeforeMs` in the
 * future or a running PDB wait's end — or undefined when nothing is cooling down.
 */
export function nextActionAtMs(
  pods: readonly PodTrack[],
  pdbs: ReadonlyMap<string, PdbTrack>,
  nowMs: number,
): number | undefined {
  let at: number | undefined;
  const consider = (t: number | undefined) => {
    if (t !== undefined && t > nowMs) at = at === undefined ? t : Math.min(at, t);
  };
  for (const p of pods) if (p.state === 'Pending') consider(p.notBeforeMs);
  for (const pdb of pdbs.values()) if (pdb.waiting) consider(pdb.waitUntilMs);
  return at;
}
