/**
 * The activity that delivers the plan's PDB grants to its node drains: one `pdbGrant` signal per
 * node, sent through the worker's own Temporal client (`Context.current().client`), all at once.
 *
 * Why not the workflow's own signal command (`getExternalWorkflowHandle(...).signal`): the server
 * carries such a signal as a transfer task of the sending workflow, one after the other, and then
 * records its completion in the sender's history (two events and a workflow task per grant). In the
 * `scale` benchmark (20 nodes at once) a grant took 3.2 s (median; p90 26 s) from the plan's send to
 * the node's history that way. A client signal is one frontend call, made here in parallel.
 *
 * A node whose run has closed (its drain ended, or it continued as new between the allocation and
 * the call) no longer needs its grant: the plan forgets a node that ended, and a node's new run asks
 * again with its next request. So "not found" is an answer, not an error. Other errors throw
 * (retryable: the plan runs this as a local activity, retried until it succeeds); a grant sent twice
 * is harmless (a node applies a grant's `seq` once, see applyGrant in src/drain/node/budget.ts).
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { PdbGrant } from '../contract/budget.js';
import { pdbGrantSignal } from '../contract/node-messages.js';

/** One grant for the node drain workflow `workflowId`. */
export interface GrantDelivery {
  workflowId: string;
  grant: PdbGrant;
}

/** The grant activity, apart from DrainActivities so fakes of the drain contract need not implement it. */
export interface GrantDeliveryActivities {
  /**
   * Signals each grant to its node drain (`pdbGrant`), in parallel.
   * @returns the grants delivered (so the plan's history, where a local activity's result is
   *   recorded, still shows every grant) and the workflow IDs that were not found (closed runs).
   * @throws the first other error (retryable).
   */
  deliverGrants(input: {
    grants: GrantDelivery[];
  }): Promise<{ delivered: GrantDelivery[]; notFound: string[] }>;
}

/** Builds {@link GrantDeliveryActivities} (uses the client of the worker running the activity). */
export function createGrantDeliveryActivities(): GrantDeliveryActivities {
  return {
    async deliverGrants({ grants }) {
      const client = Context.current().client;
      const answers = await Promise.allSettled(
        grants.map(({ workflowId, grant }) =>
          client.workflow.getHandle(workflowId).signal(pdbGrantSignal, grant),
        ),
      );
      const notFound: string[] = [];
      const delivered: GrantDelivery[] = [];
      for (const [i, a] of answers.entries()) {
        if (a.status === 'fulfilled') delivered.push(grants[i]!);
        else if (a.reason instanceof WorkflowNotFoundError) notFound.push(grants[i]!.workflowId);
        else throw a.reason;
      }
      return { delivered, notFound };
    },
  };
}
