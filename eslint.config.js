// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

/**
 * Everything a workflow bundle contains (src/worker/bundle.ts hashes the same folders): the
 * workflows, the pure drain core, the shared contract (src/contract) and the API types they
 * import, the activity contract (types only), and the tests' fixture workflows. Temporal runs this
 * code in a deterministic sandbox and replays it from history.
 */
const WORKFLOW_CODE = [
  'src/workflows/**/*.ts',
  'src/drain/**/*.ts',
  'src/contract/**/*.ts',
  'src/api/**/*.ts',
  'src/activities/types.ts',
  'test/fixtures/workflows/**/*.ts',
];

const DETERMINISM = 'Workflow code must be deterministic: do I/O in activities.';

/** The `no-restricted-imports` patterns of workflow code (see the block that applies them). */
const DETERMINISM_PATTERNS = [
  {
    group: [
      'node:*',
      'fs',
      'fs/*',
      'path',
      'os',
      'url',
      'util',
      'http',
      'https',
      'http2',
      'net',
      'tls',
      'dns',
      'crypto',
      'child_process',
      'worker_threads',
      'process',
      'timers',
      'timers/*',
      'events',
      'stream',
      'zlib',
    ],
    message: DETERMINISM,
  },
  {
    group: [
      '@kubernetes/*',
      'pino',
      'prom-client',
      'commander',
      '@temporalio/client',
      '@temporalio/worker',
      '@temporalio/activity',
      '@temporalio/testing',
    ],
    allowTypeImports: true,
    message: DETERMINISM,
  },
  {
    // The project's I/O modules.
    group: ['**/k8s/*', '**/shared/*', '**/operator/*', '**/cli/*', '**/worker/*'],
    allowTypeImports: true,
    message: DETERMINISM,
  },
  {
    group: ['**/activities', '**/activities/*'],
    allowTypeImports: true,
    message: 'Import only activity types into workflow code.',
  },
];

/**
 * The layers of src, lowest first: a layer imports only from the layers below it, never from one
 * above (types included: a type-only import back up is how the circles of the past began).
 * `src/api` is the API (zod schemas and words); `src/contract` the payloads and messages every
 * layer shares; `src/drain` the pure decisions. Above them, apart from this list: `src/k8s` and
 * `src/shared` (I/O), `src/activities`, `src/workflows`, then `src/worker`, `src/operator`,
 * `src/cli`.
 */
const LAYERS = [
  { dir: 'api', above: ['contract', 'drain'] },
  { dir: 'contract', above: ['drain'] },
  { dir: 'drain', above: [] },
];
/** What no layer of {@link LAYERS} may import, not even types. */
const UPPER_FLOORS = ['k8s', 'shared', 'activities', 'workflows', 'worker', 'operator', 'cli'];

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
    // CommonJS scripts preloaded with `node --require` (bench/mem-sampler.cjs).
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', process: 'readonly', setInterval: 'readonly', Buffer: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Type-aware rules over all TypeScript (the files of tsconfig.json). A promise nobody awaits or
    // catches loses its error; in workflow code an unhandled rejection fails every workflow task
    // from then on (the workflow stops making progress), in the worker or operator it ends the process.
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's describe/it resolve (never reject) when the test ends, failed or not: the
          // runner reports the failure. Not `test`: that name would also allow a subtest's
          // t.test(), which must be awaited (the parent cancels subtests still running when it ends).
          allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it'] }],
        },
      ],
      // A promise passed where a void callback is expected (an event handler, forEach) floats too.
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // The client library's values come through src/k8s/client.ts, which the build replaces with a
    // bundle of only the API classes drainflow uses (it documents why); a second import of the
    // package itself would load the whole generated client again, and its classes would not be
    // the bundle's (instanceof ApiException). Types may come from the package.
    files: ['src/**/*.ts'],
    ignores: ['src/k8s/client.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@kubernetes/client-node',
              allowTypeImports: true,
              message: 'Import client-node values from src/k8s/client.ts (see its docstring).',
            },
          ],
        },
      ],
    },
  },
  {
    // Workflow code must stay deterministic: no Node built-ins, no I/O libraries, nothing from the
    // modules that do I/O, and only types from the activities.
    files: WORKFLOW_CODE,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: DETERMINISM_PATTERNS,
        },
      ],
    },
  },
  ...LAYERS.map(({ dir, above }) => ({
    files: [`src/${dir}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...DETERMINISM_PATTERNS,
            {
              group: [...above, ...UPPER_FLOORS].flatMap((d) => [`**/${d}`, `**/${d}/*`]),
              message: `src/${dir} is below the folders it would import: move what both need down (src/contract for payloads shared by layers).`,
            },
          ],
        },
      ],
    },
  })),
  {
    // No import circle in src. import-x/no-cycle follows value imports only (a type-only import
    // never makes a cycle at run time, so the plugin skips it); the circles of type imports, and
    // the layering, are kept out by test/unit/import-graph.test.ts.
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // Sources import `./x.js` and the file is `x.ts` (NodeNext resolution), which the plugin
      // reads with the TypeScript parser (it follows only files of these extensions).
      'import-x/resolver-next': [createNodeResolver({ extensionAlias: { '.js': ['.ts', '.js'] } })],
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
);
