#!/usr/bin/env node
// Entry point of the `drainflow` executable: runs the TypeScript sources through tsx (a
// dependency), so `npx drainflow` works from a checkout without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
