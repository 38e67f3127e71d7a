/**
 * Spec fields valid alone but refused together (src/api/spec-coherence.ts), through the plan's zod
 * schema as the operator parses it, and the CRD's CEL rules carrying the same words; a hook Job's
 * restartPolicy Always refused (src/api/hook-job.ts). What the API server answers is in
 * test/e2e/crd.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MaintenancePlanSpecSchema } from '../../src/api/plan.js';
import { JOB_TEMPLATE_MESSAGES } from '../../src/api/hook-job.js';
import { COHERENCE_MESSAGES } from '../../src/api/spec-coherence.js';
import { COHERENCE_RULES } from '../../scripts/gen-crd.js';

const window = { days: ['Sat'], start: '01:00', end: '05:00' };
const job = (timeoutSeconds?: number, restartPolicy?: string) => ({
  namespace: 'ops',
  ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
  template: {
    spec: {
      template: {
        spec: { containers: [{ name: 'c', image: 'i' }], ...(restartPolicy ? { restartPolicy } : {}) },
      },
    },
  },
});
const wf = (timeoutSeconds?: number) => ({
  type: 'Reboot',
  taskQueue: 'ops',
  ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
});

/** The issues zod reports, as `path: message`. */
function issues(spec: Record<string, unknown>): string[] {
  const r = MaintenancePlanSpecSchema.safeParse({ nodeNames: ['a'], ...spec });
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('spec fields refused together', () => {
  const refused: [string, Record<string, unknown>, string[]][] = [
    [
      'deadlineCountsOutsideWindows false without windows',
      { deadlineCountsOutsideWindows: false },
      [`deadlineCountsOutsideWindows: ${COHERENCE_MESSAGES.countsOutsideWithoutWindows}`],
    ],
    [
      'deadlineCountsOutsideWindows false with an empty list of windows (always open)',
      { deadlineCountsOutsideWindows: false, windows: [] },
      [`deadlineCountsOutsideWindows: ${COHERENCE_MESSAGES.countsOutsideWithoutWindows}`],
    ],
    [
      'hooks in a Preflight plan',
      { mode: 'Preflight', hooks: { afterDrain: { job: job() } } },
      [`hooks: ${COHERENCE_MESSAGES.hooksInPreview}`],
    ],
    [
      'a Job hook allowed longer than the plan',
      { drainTimeoutSeconds: 300, hooks: { afterDrain: { job: job(301) } } },
      [`hooks.afterDrain.job.timeoutSeconds: ${COHERENCE_MESSAGES.hookLongerThanPlan}`],
    ],
    [
      "a workflow hook's default 600 s against a 300 s plan",
      { drainTimeoutSeconds: 300, hooks: { beforeDrain: { workflow: wf() } } },
      [`hooks.beforeDrain.workflow.timeoutSeconds: ${COHERENCE_MESSAGES.hookLongerThanPlan}`],
    ],
    [
      'both hooks too long, each named',
      {
        drainTimeoutSeconds: 60,
        hooks: { beforeDrain: { job: job(120) }, afterDrain: { workflow: wf(61) } },
      },
      [
        `hooks.beforeDrain.job.timeoutSeconds: ${COHERENCE_MESSAGES.hookLongerThanPlan}`,
        `hooks.afterDrain.workflow.timeoutSeconds: ${COHERENCE_MESSAGES.hookLongerThanPlan}`,
      ],
    ],
    [
      'a hook Job with restartPolicy Always',
      { hooks: { afterDrain: { job: job(60, 'Always') } } },
      [
        `hooks.afterDrain.job.template.spec.template.spec.restartPolicy: ${JOB_TEMPLATE_MESSAGES.restartPolicy}`,
      ],
    ],
  ];
  for (const [what, spec, want] of refused)
    it(`refused: ${what}`, () => assert.deepEqual(issues(spec), want));

  const accepted: [string, Record<string, unknown>][] = [
    [
      'deadlineCountsOutsideWindows false with a window',
      { deadlineCountsOutsideWindows: false, windows: [window] },
    ],
    [
      'deadlineCountsOutsideWindows true without windows (the default, written out)',
      { deadlineCountsOutsideWindows: true },
    ],
    ['a Preflight plan without hooks', { mode: 'Preflight' }],
    ['a hook as long as the plan', { drainTimeoutSeconds: 600, hooks: { afterDrain: { job: job(600) } } }],
    ['the defaults: a 600 s hook in a 3600 s plan', { hooks: { afterDrain: { workflow: wf() } } }],
    ['restartPolicy OnFailure', { hooks: { afterDrain: { job: job(60, 'OnFailure') } } }],
    ['restartPolicy Never', { hooks: { afterDrain: { job: job(60, 'Never') } } }],
  ];
  for (const [what, spec] of accepted) it(`accepted: ${what}`, () => assert.deepEqual(issues(spec), []));
});

describe('CEL rules of the same', () => {
  it('say the same words, on creation only', () => {
    assert.deepEqual(
      [...new Set(COHERENCE_RULES.map((r) => r.message))].sort(),
      Object.values(COHERENCE_MESSAGES).sort(),
    );
    for (const r of COHERENCE_RULES) {
      assert.equal(r.optionalOldSelf, true, r.rule);
      assert.ok(r.rule.startsWith('oldSelf.hasValue() || ('), r.rule);
      assert.equal(r.reason, 'FieldValueForbidden');
    }
    assert.deepEqual(
      COHERENCE_RULES.map((r) => r.fieldPath),
      [
        '.deadlineCountsOutsideWindows',
        '.hooks',
        '.hooks.beforeDrain.job.timeoutSeconds',
        '.hooks.beforeDrain.workflow.timeoutSeconds',
        '.hooks.afterDrain.job.timeoutSeconds',
        '.hooks.afterDrain.workflow.timeoutSeconds',
      ],
    );
  });
});
