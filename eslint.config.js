// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'bin/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code must stay deterministic: no Node built-ins, no I/O libraries, only activity types.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'http', 'https', 'crypto', 'child_process'],
              message: 'Workflows must be deterministic: do I/O in activities.',
            },
            {
              group: ['@kubernetes/*', 'pino', 'prom-client', '@temporalio/client', '@temporalio/worker'],
              message: 'Workflows must be deterministic: do I/O in activities.',
            },
            {
              group: ['../activities/*', '../activities'],
              allowTypeImports: true,
              message: 'Import only activity types into workflows.',
            },
          ],
        },
      ],
    },
  },
);
