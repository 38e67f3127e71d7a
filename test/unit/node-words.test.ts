/**
 * Table tests of the node drain's words (src/drain/node/words.ts). No Temporal, no I/O.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { initialNodeState, type PodRecord } from '../../src/drain/node/state.js';
import {
  deadlineExceededMessage,
  deletedNodeMessage,
  deletionWarningMessage,
  drainingMessage,
  goneMessage,
  groupDrainingMessage,
  heldByMessage,
  nodeNotFoundMessage,
  replacedBeforeDrainMessage,
  unclaimedAtDeadlineMessage,
  pausedPastDeadlineMessage,
  returnedWords,
} from '../../src/drain/node/words.js';

const T0 = Date.UTC(2026, 0, 1);

describe('goneMessage', () => {
  it('goneMessage: a table of evicted, gone otherwise and deleted at the deadline', () => {
    const rows: Array<[number, number | undefined, number | undefined, string]> = [
      [6, undefined, undefined, 'all 6 pod(s) evicted'],
      [0, undefined, undefined, 'all 0 pod(s) evicted'],
      [6, undefined, 2, '4 pod(s) evicted, 2 deleted at the deadline'],
      [
        6,
        1,
        2,
        '3 pod(s) evicted, 1 gone without eviction (deleted by someone else, finished or already terminating), 2 deleted at the deadline',
      ],
    ];
    for (const [podsGone, goneWithoutEviction, deletedGone, want] of rows)
      assert.equal(
        goneMessage({
          podsGone,
          ...(goneWithoutEviction !== undefined ? { goneWithoutEviction } : {}),
          ...(deletedGone !== undefined ? { deletedGone } : {}),
        }),
        want,
      );
  });
});

describe('the words of a node', () => {
  const s = initialNodeState('n1', T0, false);
  const pod = (uid: string, o: Partial<PodRecord>): PodRecord => ({
    key: `app/${uid}`,
    namespace: 'app',
    name: uid,
    uid,
    pdbs: [],
    state: 'Terminating',
    attempts: 1,
    refusals: 0,
    notBeforeMs: 0,
    ...o,
  });
  const deleted = {
    ...s,
    podsGone: 3,
    goneWithoutEviction: 1,
    pods: { a: pod('a', { evicted: true }), b: pod('b', { state: 'Pending' }) },
  };
  const rows: [string, string, string][] = [
    ['returnedWords: none', returnedWords({}), ''],
    [
      'returnedWords: two',
      returnedWords({
        returned: {
          u1: { pod: 'app/a', reason: 'ReturnsToNode', message: '', ownerUid: 'o' },
          u2: { pod: 'app/b', reason: 'ReturnsToNode', message: '', ownerUid: 'o' },
        },
      }),
      '; 2 pod(s) came back to the node after the cordon and were left there (ReturnsToNode, listed in skipped)',
    ],
    ['held by another plan', heldByMessage('n1', 'p2'), 'node n1 is held by plan p2'],
    ['no such node', nodeNotFoundMessage('n1'), 'node n1 does not exist'],
    [
      'deadline before the claim',
      unclaimedAtDeadlineMessage(false),
      'deadline passed before the node could be claimed',
    ],
    [
      'deadline before the claim, SkipNode',
      unclaimedAtDeadlineMessage(true),
      'deadline passed before the node could be claimed: skipped',
    ],
    [
      'replaced before the drain',
      replacedBeforeDrainMessage('n1', undefined, 'u2'),
      'node n1 was deleted and created again under its name before its drain started (uid ?, now u2): the new node is another node, not claimed by this plan, so it is not drained, cordoned or uncordoned by it',
    ],
    ['draining', drainingMessage(3, 0), '3 pod(s) to go'],
    [
      'draining, some terminating',
      drainingMessage(3, 2),
      '3 pod(s) to go, 2 of them terminating (eviction accepted, waiting out the grace period)',
    ],
    [
      'order groups',
      groupDrainingMessage('3 pod(s) to go', 1, 2, 1),
      '3 pod(s) to go; order group 1 first (2 pod(s)), 1 pod(s) in later groups',
    ],
    [
      'deadline, cordoned',
      deadlineExceededMessage(2, true, 'Stop'),
      'deadline passed with 2 pod(s) not evicted',
    ],
    [
      'deadline, uncordoned, DeletePods',
      deadlineExceededMessage(2, false, 'DeletePods'),
      'deadline passed while the node was uncordoned by someone else (2 pod(s) left, none deleted: onDeadline DeletePods deletes pods only on a cordoned node)',
    ],
    [
      'paused past the deadline',
      pausedPastDeadlineMessage(s, 'SkipNode', 4),
      'paused past the deadline 2026-01-01T00:00:00.000Z with 4 pod(s) left: onDeadline SkipNode applies when resumed (the node is skipped and handed back)',
    ],
    [
      'node deleted',
      deletedNodeMessage(deleted),
      'node n1 was deleted during the drain: 3 pod(s) evicted, 1 gone without eviction before, 1 never evicted went with the node',
    ],
    [
      'node replaced',
      deletedNodeMessage({ ...deleted, nodeUid: 'u1' }, 'u2'),
      'node n1 was deleted and created again under its name during the drain (uid u1, now u2): the new node is another node, not claimed by this plan, so it is not drained, cordoned or uncordoned by it: 3 pod(s) evicted, 1 gone without eviction before, 1 never evicted went with the node',
    ],
    [
      'deletion warning, capped at 10 pods',
      deletionWarningMessage(
        'n1',
        Array.from({ length: 12 }, (_, i) => `app/p${i}`),
        T0,
      ),
      'node n1: 12 pod(s) will be deleted without the Eviction API (PodDisruptionBudgets bypassed) at 2026-01-01T00:00:00.000Z unless they leave before: app/p0, app/p1, app/p2, app/p3, app/p4, app/p5, app/p6, app/p7, app/p8, app/p9 and 2 more',
    ],
  ];
  for (const [name, got, want] of rows) it(name, () => assert.equal(got, want));
});
