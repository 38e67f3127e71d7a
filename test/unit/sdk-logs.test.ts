/** Which SDK lines the tests log at debug (test/helpers/sdk-logs.ts): only the known artifacts. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { testLineLevel } from '../helpers/sdk-logs.js';

const HEARTBEAT =
  'Temporal Server 1.16.0 or newer is required to guarantee that the latest heartbeat details are preserved when an activity fails';

describe('testLineLevel', () => {
  const cases: [string, Parameters<typeof testLineLevel>, string][] = [
    ["the test server's heartbeat capability warning", ['WARN', HEARTBEAT], 'DEBUG'],
    ['the same text at ERROR stays', ['ERROR', HEARTBEAT], 'ERROR'],
    [
      'an injected non-retryable activity failure',
      [
        'WARN',
        'Activity failed',
        {
          error: ApplicationFailure.nonRetryable(
            'injected non-retryable failure of cordonNode',
            'InjectedFailure',
          ),
        },
      ],
      'DEBUG',
    ],
    [
      'an injected retryable activity failure',
      ['WARN', 'Activity failed', { error: new Error('injected failure of observeNode') }],
      'DEBUG',
    ],
    [
      'any other activity failure stays a warning',
      ['WARN', 'Activity failed', { error: new Error('HTTP 403') }],
      'WARN',
    ],
    ['any other warning stays', ['WARN', 'Workflow task duration exceeded 5 seconds'], 'WARN'],
  ];
  for (const [name, args, want] of cases) it(name, () => assert.equal(testLineLevel(...args), want));
});
