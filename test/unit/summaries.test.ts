/**
 * Table tests of the timer and activity summaries (src/drain/summaries.ts): the one line the
 * Temporal UI shows beside each timer and activity. No Temporal, no I/O.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { initialNodeState, type PdbRecord, type PodRecord } from '../../src/drain/node/state.js';
import { activitySummary, clockTime, nodeWakeSummary, timerSummary } from '../../src/drain/summaries.js';

/** 2026-01-01 10:00:00 UTC. */
const T0 = Date.UTC(2026, 0, 1, 10);
const DEADLINE = T0 + 3_600_000;

function pod(key: string, notBeforeMs: number): PodRecord {
  const [namespace, name] = key.split('/') as [string, string];
  return {
    key,
    namespace,
    name,
    uid: key,
    pdbs: [],
    state: 'Blocked',
    attempts: 1,
    refusals: 1,
    notBeforeMs,
  };
}

function pdb(key: string, refusedUntilMs?: number): PdbRecord {
  return {
    key,
    observedAllowed: 0,
    spentAtSeq: [],
    refusalRounds: 1,
    ...(refusedUntilMs ? { refusedUntilMs } : {}),
  };
}

describe('clockTime', () => {
  it('is the UTC wall-clock time, HH:MM:SS', () => {
    assert.equal(clockTime(T0), '10:00:00');
    assert.equal(clockTime(T0 + 2 * 60_000 + 999), '10:02:00');
    assert.equal(clockTime(Date.UTC(2026, 0, 1, 23, 59, 59)), '23:59:59');
  });
});

describe('nodeWakeSummary: why a node loop wakes, read from its state', () => {
  it('a table of the deadline, the fresh view, the warning, cooldowns and PDB backoffs', () => {
    const s = initialNodeState('n1', DEADLINE, false);
    s.pods = {
      a: pod('app/web-0', T0 + 120_000),
      b: pod('app/web-1', T0 + 300_000),
      c: pod('app/web-2', T0 + 300_000),
      d: pod('db/x-0', T0 + 400_000),
      e: pod('db/x-1', T0 + 400_000),
      f: pod('db/x-2', T0 + 400_000),
      g: pod('db/x-3', T0 + 400_000),
    };
    s.pdbs = { p: pdb('app/web', T0 + 90_000), q: pdb('db/x') };
    s.deadlineView = { afterSeq: 3, untilMs: T0 + 30_000 };
    const rows: Array<[number, number | undefined, string]> = [
      [DEADLINE, undefined, 'deadline of node n1 at 11:00:00'],
      [T0 + 30_000, undefined, 'fresh view of node n1 past its deadline, until 10:00:30'],
      [DEADLINE - 600_000, 600, 'deadline warning of node n1 at 10:50:00'],
      [T0 + 120_000, undefined, 'cooldown of pod app/web-0 until 10:02:00'],
      [T0 + 300_000, undefined, 'cooldown of pod app/web-1, app/web-2 until 10:05:00'],
      [T0 + 400_000, undefined, 'cooldown of pod db/x-0, db/x-1, db/x-2 +1 more until 10:06:40'],
      [T0 + 90_000, undefined, 'PDB app/web refusal backoff until 10:01:30'],
      [T0 + 1000, undefined, 'decide again on node n1 at 10:00:01'],
    ];
    for (const [at, warning, want] of rows) assert.equal(nodeWakeSummary(s, at, warning), want);
  });
});

describe('activitySummary and timerSummary', () => {
  it('a table of every summary', () => {
    const rows: Array<[string, string]> = [
      [activitySummary.evict('app/web-0'), 'evict app/web-0'],
      [activitySummary.deleteAtDeadline('app/web-0'), 'delete app/web-0 (deadline)'],
      [activitySummary.cordon('n1'), 'cordon n1'],
      [activitySummary.handBack('n1'), 'hand back n1'],
      [activitySummary.observe('n1'), 'observe n1'],
      [activitySummary.awaitHandBack('n1', 'other'), 'await hand-back of n1 by other'],
      [activitySummary.event('PhaseChanged'), 'event PhaseChanged'],
      [activitySummary.resolveNodes(), 'resolve nodes'],
      [activitySummary.claimCycleCheck(), 'claim cycle check'],
      [activitySummary.preflight('n1'), 'preflight n1'],
      [activitySummary.rolloutRestart('app/web'), 'rollout restart app/web'],
      [activitySummary.writeStatus('p1'), 'write status of plan p1'],
      [activitySummary.deliverGrants(1), 'deliver PDB grants to 1 node'],
      [activitySummary.deliverGrants(3), 'deliver PDB grants to 3 nodes'],
      [activitySummary.hookJob('beforeDrain', 'n1'), 'beforeDrain job on n1'],
      [activitySummary.waitHookJob('beforeDrain', 'n1'), 'wait beforeDrain job on n1'],
      [activitySummary.stopHookJob('afterDrain', 'n1'), 'stop afterDrain job on n1'],
      [activitySummary.hookWorkerCheck('wf-1'), 'did a worker take wf-1'],
      [activitySummary.hookGate('beforeDrain', 'n1'), 'n1 cordoned for its beforeDrain hook?'],
      [activitySummary.awaitRelease('n1'), 'await release of n1'],
      [timerSummary.confirmEvictions('n1', T0), 'confirm evictions on n1 until 10:00:00'],
      [timerSummary.deleteTimeout('n1', T0), 'terminating pod on n1 counts as gone at 10:00:00'],
      [timerSummary.report('n1', T0), 'report n1 to its plan at 10:00:00'],
      [timerSummary.observe('n1', T0), 'next observation of n1 at 10:00:00'],
      [timerSummary.claimRetry('n1', 'other', T0), 'n1 held by other: try the claim again at 10:00:00'],
      [timerSummary.pausedBeforeClaim('n1', T0), 'n1 paused before its claim: look again at 10:00:00'],
      [
        timerSummary.hookRunning('beforeDrain', 'n1', T0),
        'beforeDrain hook on n1 running: report at 10:00:00',
      ],
      [timerSummary.hookStop('afterDrain', 'n1', 30), 'stop of afterDrain hook on n1: wait 30 s'],
      [
        timerSummary.hookGate('beforeDrain', 'n1', T0),
        'beforeDrain hook on n1 waits for a cordon: look again at 10:00:00',
      ],
      [
        timerSummary.hookPaused('beforeDrain', 'n1', T0),
        'beforeDrain hook on n1 paused: look again at 10:00:00',
      ],
      [timerSummary.awaitRelease('n1', T0), 'n1 awaits its release: look again at 10:00:00'],
      [timerSummary.planAge('p1', T0), 'continue plan p1 as new by age at 10:00:00'],
      [timerSummary.planDeadline('p1', T0), 'deadline of plan p1 at 10:00:00'],
      [timerSummary.lostNodes('p1', T0), 'nodes of plan p1 count as lost at 10:00:00'],
      [timerSummary.publish('p1', T0), 'write status of plan p1 at 10:00:00'],
      [timerSummary.claimCycleCheck(T0), 'claim cycle check at 10:00:00'],
      [timerSummary.remedy(T0), 'remedy restart due at 10:00:00'],
      [timerSummary.windowChange(T0), 'maintenance window opens or closes at 10:00:00'],
      [timerSummary.continueAsNewYield(), 'end the task before continue-as-new'],
    ];
    for (const [got, want] of rows) assert.equal(got, want);
    // One line each: the UI shows a summary on one line.
    for (const [got] of rows) assert.ok(!got.includes('\n'), got);
  });
});
