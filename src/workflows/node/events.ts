/**
 * The node's Warning Events on its plan (the deadline policy, timed-out and returning pods): best
 * effort, followed so that the end and continue-as-new wait for them. Deterministic: workflow code.
 */
import { activitySummary } from '../../drain/summaries.js';
import { k8s } from './activities.js';
import type { NodeRun } from './run.js';

/** See the module comment. */
export class EventRecorder {
  /** The Events being recorded. */
  readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly run: NodeRun) {}

  /** Records a Warning Event on the plan; a failure is ignored. */
  record(reason: string, message: string): void {
    const t: Promise<void> = k8s.recordEvent
      .executeWithOptions({ summary: activitySummary.event(reason) }, [
        { plan: this.run.input.plan, type: 'Warning', reason, message },
      ])
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.inFlight.delete(t);
        this.run.woken = true;
      });
    this.inFlight.add(t);
  }

  /** Settles when every Event in flight did. */
  async settled(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }
}
