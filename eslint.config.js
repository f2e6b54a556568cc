// Lint rules. The import-direction rules keep the layout README.md describes true: dependencies point inward
// (domain ← ports ← app ← adapters/http ← main), and one aggregate's PostgreSQL adapter does not reach into
// another's folder (the flat files of src/adapters/postgres/ are the shared infrastructure they may all use).
import tseslint from 'typescript-eslint';

/** Folders a layer may not import from (relative paths, matched as globs). */
const forbidden = {
  'src/domain/**': ['**/ports/**', '**/app/**', '**/adapters/**', '**/http/**', '**/main/**', '**/config/**', '**/observability/**', '**/bin/**'],
  'src/ports/**': ['**/app/**', '**/adapters/**', '**/http/**', '**/main/**', '**/config/**', '**/bin/**'],
  'src/app/**': ['**/adapters/**', '**/http/**', '**/main/**', '**/bin/**', 'pg', 'fastify', 'undici'],
  'src/http/**': ['**/adapters/**', '**/main/**'],
  'src/adapters/**': ['**/http/**', '**/main/**', '**/app/**'],
};

/** The aggregate folders of src/adapters/postgres/: each owns the writes to its tables. */
const aggregates = ['application', 'credentials', 'delivery', 'endpoint', 'event-type', 'idempotency', 'message', 'tasks'];

const INWARD = 'Dependencies point inward (domain ← ports ← app ← adapters/http ← main).';
const APART = 'One aggregate adapter does not import another aggregate folder: go through a port, or a flat shared file of src/adapters/postgres/.';

/** Restricted-import patterns per folder: the layer directions, and for an aggregate folder the other aggregates too. */
const restricted = {
  ...Object.fromEntries(Object.entries(forbidden).map(([files, groups]) => [files, groups.map((group) => ({ group: [group], message: INWARD }))])),
  ...Object.fromEntries(aggregates.map((name) => [`src/adapters/postgres/${name}/**`, [
    ...forbidden['src/adapters/**'].map((group) => ({ group: [group], message: INWARD })),
    ...aggregates.filter((other) => other !== name).map((other) => ({ group: [`../${other}/**`, `**/postgres/${other}/**`], message: APART })),
  ]])),
};

export default tseslint.config(
  { ignores: ['node_modules/**', '.tidings/**', 'bench/results/**', 'web/dist/**', 'test/browser/.artifacts/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  // Later entries win for the same rule: an aggregate folder's entry repeats the adapters' directions.
  ...Object.entries(restricted).map(([files, patterns]) => ({
    files: [files],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns }] },
  })),
  {
    files: ['src/domain/**'],
    rules: {
      'no-restricted-globals': ['error', { name: 'process', message: 'domain/ is pure: no environment.' }],
      'no-restricted-properties': ['error',
        { object: 'Date', property: 'now', message: 'domain/ is pure: pass a Clock.' },
        { object: 'Math', property: 'random', message: 'domain/ is pure: pass a Random.' }],
    },
  },
  {
    files: ['src/main/**', 'bench/**', 'test/**', 'bin/**', 'web/build.ts'],
    rules: { 'no-console': 'off' },
  },
);
