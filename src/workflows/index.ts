/**
 * Workflow entry point for the worker's bundle: every workflow type drainflow registers.
 * Deterministic code only (see eslint.config.js).
 */
export { drainPlanWorkflow } from './plan.js';
export { drainNodeWorkflow } from './node.js';
