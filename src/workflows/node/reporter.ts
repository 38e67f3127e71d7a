/**
 * The node's reports to its plan workflow: debounced `nodeProgress` signals (at most one per
 * {@link PROGRESS_INTERVAL_MS}, only when the report changed, one in flight at a time), and the
 * final report. A signal the plan refuses means the plan workflow is closed or gone: nobody is left
 * to report to ({@link Reporter.parentGone}). Deterministic: workflow code.
 */
import { getExternalWorkflowHandle } from '@temporalio/workflow';
import { NodePhase } from '../../api/reasons.js';
import { nodeProgressSignal } from '../../contract/node-messages.js';
import type { NodeProgress } from '../../contract/progress.js';
import { hookStatus, lastHook } from '../../drain/hooks.js';
import { nextActionAt, nodeBlockers } from '../../drain/node/decide.js';
import { nodeCounts, podPolicyProgress } from '../../drain/node/report.js';
import type { NodeRun } from './run.js';

/** Minimum time between two progress signals to the plan workflow, ms (the final one goes at once). */
export const PROGRESS_INTERVAL_MS = 2000;

/** See the module comment. */
export class Reporter {
  readonly parent;
  /** Set once the plan workflow refused a signal (closed or gone). */
  parentGone = false;
  /** The progress signal in flight. */
  sending: Promise<void> | undefined;
  private lastSent: string | undefined;
  private lastSentAtMs = 0;

  constructor(private readonly run: NodeRun) {
    this.parent = getExternalWorkflowHandle(run.input.parentWorkflowId);
  }

  /** The node's report now. */
  progress(final: boolean): NodeProgress {
    const s = this.run.s;
    const now = Date.now();
    const next = nextActionAt(s, now);
    return {
      node: s.node,
      phase: s.phase,
      ...(s.reason ? { reason: s.reason } : {}),
      ...(s.message ? { message: s.message } : {}),
      ...(s.phase === NodePhase.Waiting && s.heldBy ? { heldBy: s.heldBy } : {}),
      ...nodeCounts(s),
      blockedBy: nodeBlockers(s, now),
      ...podPolicyProgress(s),
      attempts: s.attempts,
      tooManyRequests: s.tooManyRequests,
      ...(next !== undefined ? { nextActionAtMs: next } : {}),
      ...(s.lastError ? { lastError: s.lastError } : {}),
      cordonedByPlan: s.cordonedByPlan,
      claimed: s.claimed,
      ...(s.nodeUid !== undefined ? { nodeUid: s.nodeUid } : {}),
      ...(lastHook(s.roll) ? { hook: hookStatus(lastHook(s.roll)!) } : {}),
      ...(final ? { final: true } : {}),
    };
  }

  /** Follows a signal to the plan: `done` when it settled, then the loop wakes. */
  follow(sent: Promise<void>, done: () => void): Promise<void> {
    return sent.then(
      () => {
        done();
        this.run.woken = true;
      },
      () => {
        // Only a closed or missing plan workflow refuses a signal: nobody is left to report to.
        this.parentGone = true;
        done();
        this.run.woken = true;
      },
    );
  }

  /** Sends the report when it changed and the interval allows; @returns when to try again, if due. */
  report(): number | undefined {
    const p = this.progress(false);
    const key = JSON.stringify(p);
    if (key === this.lastSent) return undefined;
    const dueAt = this.lastSentAtMs + PROGRESS_INTERVAL_MS;
    if (this.sending || Date.now() < dueAt) return Math.max(dueAt, Date.now() + 1);
    this.markSent(key);
    this.sending = this.follow(this.parent.signal(nodeProgressSignal, p), () => (this.sending = undefined));
    return undefined;
  }

  /**
   * The report to ride along with a budget request (plans with PDB reporters): the report when it
   * changed and no progress signal is in flight (two reports of one node must not cross), counted
   * as sent; else undefined.
   */
  rideAlong(): NodeProgress | undefined {
    if (this.sending) return undefined;
    const p = this.progress(false);
    const key = JSON.stringify(p);
    if (key === this.lastSent) return undefined;
    this.markSent(key);
    return p;
  }

  /** Sends the final report (unless the plan workflow is gone) once the signal in flight settled. */
  async final(): Promise<NodeProgress> {
    await this.sending;
    const p = this.progress(true);
    if (!this.parentGone) await this.parent.signal(nodeProgressSignal, p).catch(() => undefined);
    return p;
  }

  private markSent(key: string): void {
    this.lastSent = key;
    this.lastSentAtMs = Date.now();
  }
}
