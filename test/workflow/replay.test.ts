/**
 * Determinism guard: saved histories (binary temporal.api.history.v1.History protobufs, each file
 * named after its workflow ID, which the workflow code uses) of real runs must replay against the current workflow code.
 * A change that alters the commands a running workflow issues must be wrapped in `patched()`.
 * test/workflow/plan.test.ts and test/workflow/long-drains.test.ts write them: `UPDATE_HISTORIES=<key>[,<key>]`
 * saves that test's histories. The fixtures without a suffix (`two-pdbs`, `cordon-all-abort`,
 * `parallel-starts`) are runs of the one-pass code (they replay through src/workflows/legacy/ and
 * must be kept); `*-v2` and the long-drains keys are runs of the level-triggered loop. A file named
 * `<workflow ID>~run<N>.bin` is the N-th run of a continue-as-new chain (key `can-boundary`).
 * `on-deadline-v1` (DeletePods) and `deadline-skip` (SkipNode with a per-node deadline) are runs past
 * `patched('on-deadline')`, written by test/workflow/on-deadline.test.ts. `deadline-stale-v0` (a
 * one-node Stop plan whose worker stopped mid-drain; a pod evicted before and one never evicted
 * went while none ran, and the new worker started past the deadline: the node decided from its
 * view from before the stop) is a run from before `patched('deadline-fresh-view')`, recorded
 * against commit 50a2a90; `deadline-fresh-v1` is the same run past it (a fresh observation first);
 * both written by test/workflow/deadline-fresh-view.test.ts. `pod-policy-v0` is a run
 * recorded before `patched('pod-policy')` existed, `pod-order-v1` one past it (order groups), both
 * written by test/workflow/pod-policy.test.ts. `preflight-v1` (a Preflight plan of 12 nodes, past
 * `patched('preflight')`) is written by test/workflow/preflight.test.ts. `rolling-hooks` (uncordon
 * AfterEachNode with a workflow afterDrain hook) and `rolling-release` (per-node releases by the
 * node annotation and the whole-plan release) are runs past `patched('per-node-release')` and
 * `patched('hooks')`, written by test/workflow/rolling.test.ts.
 * `hooks-held-v0` (a hook due while the plan is paused), `hook-failure-v0` (a failed afterDrain hook
 * released by hand) and `release-deleted-v0` (a node deleted while it awaits its per-node release)
 * are runs from before `patched('hooks-held')`, `patched('hook-failure-report')` and
 * `patched('release-wait-node-deleted')`, written by the recorders of test/workflow/rolling.test.ts
 * run against the node-roll code of that time.
 * `pdb-budget-v1` (10 nodes sharing 5 PDBs; the plan and nodes n1, n2) is a run from before
 * `patched('pdb-reporters')`: grants sent from each budget handler, no reporting nodes; `shared-pdbs`
 * (5 nodes sharing 3 PDBs, written by test/workflow/pdb-budget.test.ts) one from before
 * `patched('grants-before-status')`, whose plan starts a status write in the task that sends
 * grants, and `shared-pdbs-refused` one past it and from before `patched('reported-pdb-versions')`
 * (every node woke for every new version of every PDB it watches); `shared-pdbs-v3` is past that
 * and from before `patched('grants-only')` (nodes woken by every allowance change of every PDB they
 * watch, spending a grant only when their own view allowed it too); `shared-pdbs-v4` is past that.
 * `late-update-v0` (an abort Update that arrived while the plan closed and never completed; the run
 * stays open) is from before `patched('late-update-publish')`, `late-update-v1` past it; both written
 * by test/workflow/stranded.test.ts. `release-uncordoned-v0` (a node uncordoned by hand while it
 * awaits its per-node release) is from before `patched('release-wait-uncordoned')`,
 * `release-uncordoned-v1` past it; both written by test/workflow/rolling.test.ts.
 * `delete-fatal-v0` (a deletePod failing non-retryably once, then deleted) is from before
 * `patched('delete-fatal')`, written by test/workflow/on-deadline.test.ts. `deleted-counts-v0` (a node
 * deleted with two pods never evicted, whose counts then said 0 of 0) is from before
 * `patched('deleted-node-counts')`, written by test/workflow/long-drains.test.ts, as is
 * `observe-cancel-v0` (a node aborted while its observation waits, which it cancels), from before
 * `patched('abandon-observations')`. `refused-terminating-v0` (a pod seen terminating while its
 * eviction call was in flight, the call then refused 403 NamespaceTerminating: counted as evicted)
 * is from before `patched('refused-not-evicted')`, `refused-terminating-v1` past it (counted as gone
 * without eviction); both written by test/workflow/refusals-and-ends.test.ts. `stale-controls-v0`
 * (a pause relayed for generation 2 after a resume for generation 3, applied) is from before
 * `patched('stale-controls')`, `stale-controls-v1` past it (ignored); both written by
 * test/workflow/pause-all-at-start.test.ts. `refusing-node-v0` (a node refused with a 429 at an
 * older version of the PDB than the plan's; its probe report did not end the refusal, and the
 * recorder aborted the stalled plan) is from before `patched('refusing-node-ends-refusal')` and
 * `patched('refusal-ends-at-new-version')`, `refusing-node-v1` past both; both written by
 * test/workflow/pdb-budget.test.ts. `node-stale-controls-v0` (a pause of generation 2 to the plan
 * and to its node directly, a resume of generation 3, then a late direct pause of generation 2 to
 * the node, applied, and after a direct resume of generation 3 a stale resume of generation 2) is from before
 * `patched('forward-generations')` (the plan forwarded controls without their generation) and
 * `patched('stale-node-controls')`, recorded at commit 50a2a90; `node-stale-controls-v1` is past both
 * (forwarded with generations, the late pause ignored); both written by
 * test/workflow/pause-all-at-start.test.ts. `patch-epoch-v1` (a one-node plan) is the shape of runs
 * recorded with the patch epochs of src/workflows/patches.ts (one marker per run, every change of
 * the epoch applied), written by test/workflow/patch-epoch.test.ts; every fixture above is a shape
 * from before them, except the `node-stale-controls` pair (epoch-1 runs). `abort-terminating-v0`
 * (a one-node plan aborted while the pod it evicted was still terminating; the node's final counts
 * said 0 evicted of 4) is an epoch-1 run from before `patched('aborted-evicted-counts')`, recorded
 * at commit 5df2a49; `abort-terminating-v1` is past it (counted as evicted; the node records the
 * marker as it ends); both written by test/workflow/abort-counts.test.ts. `node-start-generation-v0`
 * (a two-node plan paused at generation 2 and resumed at 3 before n2 started; a late direct pause of
 * generation 2 paused n2, a direct resume of 3 resumed it) is an epoch-1 run from before
 * `patched('node-start-generation')`, recorded at commit f257246; `node-start-generation-v1` is past
 * it (n2 started with generation 3 and ignored the pause); both written by
 * test/workflow/pause-all-at-start.test.ts. `paused-v2` (written by test/workflow/long-drains.test.ts),
 * `pause-all-at-start-v2` and `windows-v1` (paused nodes whose status lists the pods their PDB held)
 * are runs from before `patched('paused-hides-blockers')`; `paused-v3` is past it (the paused node
 * lists no blockers), written by test/workflow/long-drains.test.ts. `claim-watch-v0` (a one-node
 * plan whose node is held by another plan, which hands it back while the node waits; the node
 * claims it at its next backoff try) is an epoch-1 run from before `patched('claim-watch')`,
 * recorded at commit e851d33; `claim-watch-v1` is past it (the node waits for the hand-back with
 * `waitClaimReleased` and claims the node as it comes); both written by
 * test/workflow/claim-watch.test.ts. `paused-claim-v0` (a one-node plan whose node is held by
 * another plan; the plan is paused while its node waits, the other plan hands the node back, and
 * the paused node claims and cordons it at once; resumed, it drains) is an epoch-1 run from before
 * `patched('paused-no-claim')`, recorded at commit dd8fb0c; `paused-claim-v1` is past it (no claim
 * while paused, the node claims it as it is resumed); both written by
 * test/workflow/paused-claim.test.ts. Refresh an existing fixture only when the change is meant
 * to be incompatible (and no old run can still be open); add new ones freely.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import { installTestRuntime } from '../helpers/sdk-logs.js';
import { quietBundlerLogger } from '../helpers/temporal.js';

const dir = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.bin'));
let bundle: WorkflowBundle;

before(async () => {
  bundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../../src/workflows/index.ts', import.meta.url)),
    logger: quietBundlerLogger,
  });
});

describe('replay of saved histories', () => {
  it('has histories to replay', () => {
    assert.ok(files.length > 0, `no histories in ${dir}`);
  });
  for (const file of files) {
    it(`replays ${file}`, async () => {
      const history = proto.temporal.api.history.v1.History.decode(readFileSync(`${dir}/${file}`));
      installTestRuntime(); // here, not in before(): a Runtime that never runs a worker keeps the process alive
      await Worker.runReplayHistory(
        { workflowBundle: bundle },
        history,
        file.replace(/(~run\d+)?\.bin$/, ''),
      );
    });
  }
});
