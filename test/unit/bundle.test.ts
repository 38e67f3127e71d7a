/** The workflow bundler's child process runs without the worker's heap limits. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { withoutHeapLimits } from '../../src/worker/bundle.js';

describe('withoutHeapLimits', () => {
  it('drops --max-old-space-size and --max-semi-space-size in both spellings, keeps the rest', () => {
    assert.equal(
      withoutHeapLimits(
        '--max-old-space-size=128 --enable-source-maps --max-semi-space-size 4 --trace-warnings',
      ),
      '--enable-source-maps --trace-warnings',
    );
  });
  it('gives an empty string for no options', () => {
    assert.equal(withoutHeapLimits(undefined), '');
    assert.equal(withoutHeapLimits('  '), '');
    assert.equal(withoutHeapLimits('--max-old-space-size=96'), '');
  });
});
