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
    // Everything bundled into workflows: a promise that rejects unhandled fails every workflow task
    // from then on (the workflow freezes), so none may float. Type-aware.
    files: ['src/workflows/**/*.ts', 'src/drain/**/*.ts', 'src/api/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // Workflow code must stay deterministic: no Node built-ins, no I/O libraries, only activity types.
    // src/drain and src/api are bundled into workflows too.
    files: ['src/workflows/**/*.ts', 'src/drain/**/*.ts', 'src/api/**/*.ts'],
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
              allowTypeImports: true,
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
