import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/shared/settings.js';

const env = { KUBECONFIG: '/dev/null' };

describe('loadConfig: --max-evictions-per-second / DRAINFLOW_MAX_EVICTIONS_PER_SECOND', () => {
  it('is unset (no limit) by default, and when the variable is empty', () => {
    assert.equal(loadConfig({}, env).maxEvictionsPerSecond, undefined);
    assert.equal(
      loadConfig({}, { ...env, DRAINFLOW_MAX_EVICTIONS_PER_SECOND: '' }).maxEvictionsPerSecond,
      undefined,
    );
  });

  it('takes the flag over the variable, fractions too', () => {
    assert.equal(
      loadConfig({}, { ...env, DRAINFLOW_MAX_EVICTIONS_PER_SECOND: '5' }).maxEvictionsPerSecond,
      5,
    );
    assert.equal(
      loadConfig({ maxEvictionsPerSecond: '0.5' }, { ...env, DRAINFLOW_MAX_EVICTIONS_PER_SECOND: '5' })
        .maxEvictionsPerSecond,
      0.5,
    );
  });

  it('refuses what is not a positive number, naming the setting', () => {
    for (const bad of ['0', '-1', 'fast', 'Infinity']) {
      assert.throws(
        () => loadConfig({ maxEvictionsPerSecond: bad }, env),
        /^Error: invalid setting --max-evictions-per-second \/ DRAINFLOW_MAX_EVICTIONS_PER_SECOND: must be a positive number/,
        bad,
      );
      assert.throws(
        () => loadConfig({}, { ...env, DRAINFLOW_MAX_EVICTIONS_PER_SECOND: bad }),
        /invalid setting --max-evictions-per-second/,
        bad,
      );
    }
  });
});
