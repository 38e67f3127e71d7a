/**
 * The node's PDB budget protocol with its plan (plans of more than one node, `coordinatePdbs`): a
 * `pdbBudget` signal whenever what the node holds or wants of a PDB changed, or a PDB it reports
 * for the plan rose (one in flight at a time), and the plan's `pdbGrant`s applied as they come
 * (rules in src/drain/pdb-budget.ts and src/drain/node/budget.ts). Deterministic: workflow code.
 */
import type { PdbGrant } from '../../contract/budget.js';
import { pdbBudgetSignal, type PdbBudgetMessage } from '../../contract/node-messages.js';
import {
  applyGrant,
  beliefAfterGrant,
  beliefAfterRequest,
  budgetRequestToSend,
  nodeBudgetRequest,
  type BudgetBelief,
} from '../../drain/node/budget.js';
import type { Reporter } from './reporter.js';
import type { NodeRun } from './run.js';

/** See the module comment. */
export class BudgetRequests {
  /** What the plan believes of this node's budget (none at the start of a run). */
  private belief: BudgetBelief | undefined;
  /** The budget request in flight. */
  sending: Promise<void> | undefined;

  constructor(
    private readonly run: NodeRun,
    private readonly reporter: Reporter,
  ) {}

  /** Applies a grant of the plan (signal `pdbGrant`). */
  grant(g: PdbGrant): void {
    const s = this.run.s;
    // A grant under a number already applied (sent again, or by a plan task the server refused and
    // ran again) may differ from the one applied: the plan's ledger is wrong, so the next request
    // goes out whole.
    if (s.budget && g.seq <= s.budget.grantSeq) this.belief = undefined;
    else if (this.belief && s.budget) beliefAfterGrant(this.belief, g);
    applyGrant(s, g);
    this.run.woken = true;
  }

  /** Sends the node's request when it is news to the plan; `quiesce`: it wants nothing new. */
  request(quiesce: boolean): void {
    const { s, settings, spec } = this.run;
    const req = nodeBudgetRequest(s, Date.now(), settings, quiesce);
    if (!req || this.sending || this.reporter.parentGone) return;
    const out = budgetRequestToSend(this.belief, req, s.budget?.reports);
    if (!out) return;
    this.belief = beliefAfterRequest(req, s.budget?.reports);
    // The progress rides along when it changed (no separate nodeProgress signal for it).
    const progress = spec.pdbReporters ? this.reporter.rideAlong() : undefined;
    const msg: PdbBudgetMessage = progress ? { ...out, progress } : out;
    this.sending = this.reporter.follow(
      this.reporter.parent.signal(pdbBudgetSignal, msg),
      () => (this.sending = undefined),
    );
  }
}
