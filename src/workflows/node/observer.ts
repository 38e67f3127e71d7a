/**
 * The node's observations: one `observeNode` activity at a time (one list-then-watch of the node,
 * its pods and their PodDisruptionBudgets), answering when something material changed, or after
 * `retryBackoff.maxSeconds` when nothing did; its answer goes to the loop's inbox.
 * Deterministic: workflow code.
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import { hasUnconfirmedEvictions, unconfirmedPdbs } from '../../drain/node/observation.js';
import { activitySummary } from '../../drain/summaries.js';
import type { NodeActivities } from './activities.js';
import type { LoopInput } from './inbox.js';
import { errorMessage, type NodeRun } from './run.js';

/** Longest wait of an observation while an answered eviction is not yet confirmed by one, seconds. */
export const CONFIRM_WAIT_SECONDS = 2;

/** The observation running. */
interface Observing {
  seq: number;
  scope: CancellationScope;
  done: Promise<void>;
  /** The reporting set it is woken by (grants-only nodes), as one string. */
  reports?: string;
}

/** See the module comment. */
export class Observer {
  current: Observing | undefined;
  /** The next observation starts no earlier than this, ms since epoch. */
  nextAtMs = 0;

  constructor(
    private readonly run: NodeRun,
    private readonly acts: NodeActivities,
    private readonly inbox: LoopInput[],
  ) {}

  /**
   * The PDBs a grants-only node's observations are woken by: those it reports, and those with
   * evictions answered 201 that no observation shows yet (an unchanged answer confirms them, so it
   * must mean that these PDBs did not change either). Sorted keys.
   */
  private watchedPdbs(): string[] {
    const s = this.run.s;
    return [...new Set([...(s.budget?.reports ?? []), ...unconfirmedPdbs(s)])].sort();
  }

  /** The reporting set an observation of a grants-only node is woken by, as one string. */
  watchedReports(): string | undefined {
    return this.run.grantsOnly ? JSON.stringify(this.run.s.budget?.reports ?? []) : undefined;
  }

  /** Abandons the running observation; it counts as running until its promise settled. */
  abandon(): void {
    this.current?.scope.cancel();
  }

  /** Abandons the running observation and forgets it at once (its answer is ignored). */
  drop(): void {
    this.abandon();
    this.current = undefined;
  }

  /** Abandons the running observation and waits until it settled (the node ends). */
  async stop(): Promise<void> {
    const o = this.current;
    if (!o) return;
    o.scope.cancel();
    await o.done;
  }

  /** Starts an observation; `maxWaitSeconds` overrides its wait (0: answer at once, changed or not). */
  start(maxWaitSeconds?: number): void {
    const { s, spec, grantsOnly } = this.run;
    const seq = ++s.observeSeq;
    const startedAtMs = Date.now();
    const bound = spec.retryBackoff.maxSeconds;
    // While an answered eviction is not yet confirmed by an observation, look again soon even if
    // nothing changes: the confirmation frees the PDB budget that eviction still holds.
    const waitSeconds =
      maxWaitSeconds ?? (hasUnconfirmedEvictions(s) ? Math.min(CONFIRM_WAIT_SECONDS, bound) : bound);
    const scope = new CancellationScope();
    const done = scope
      .run(() =>
        this.acts.observer.observeNode.executeWithOptions({ summary: activitySummary.observe(s.node) }, [
          {
            node: s.node,
            selection: spec.podSelection,
            ...(s.view ? { since: s.view.fingerprint } : {}),
            maxWaitSeconds: waitSeconds,
            ...(s.budget
              ? {
                  pdbs: unconfirmedPdbs(s),
                  pdbVersions: grantsOnly ? this.watchedPdbs() : true,
                  ...(grantsOnly ? { listedPdbsOnly: true } : {}),
                }
              : {}),
            ...(spec.podOrder ? { podOrder: spec.podOrder } : {}),
            ...(s.nodeUid !== undefined ? { nodeUid: s.nodeUid } : {}),
          },
        ]),
      )
      .then(
        (obs) => {
          this.inbox.push({ kind: 'observed', seq, startedAtMs, waitSeconds, obs });
        },
        (err: unknown) => {
          this.inbox.push({
            kind: 'observeFailed',
            seq,
            message: errorMessage(err),
            cancelled: isCancellation(err),
          });
        },
      )
      .finally(() => {
        // A newer observation may have replaced this one already (a reporting set changed).
        if (this.current?.seq === seq) this.current = undefined;
      });
    const reports = this.watchedReports();
    this.current = { seq, scope, done, ...(reports !== undefined ? { reports } : {}) };
  }
}
