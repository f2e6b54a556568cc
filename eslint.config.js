// Lint rules. The import-direction rules keep the layout README.md describes true: dependencies point inward
// (domain ← ports ← app ← adapters/http ← main; observability beside the adapters, on domain, ports and config; cli,
// the operator commands, on domain and config only), and
// one aggregate's PostgreSQL adapter does not reach into another's folder (the flat files of src/adapters/postgres/
// are the shared infrastructure they may all use; wakeups/ owns no table, so the aggregates may use it, and it uses
// none of them). SQL text stays in the adapters: src/main/ wires them and holds none.
import stylistic from '@stylistic/eslint-plugin';
import tseslint from 'typescript-eslint';

/** Folders a layer may not import from (relative paths, matched as globs). */
const forbidden = {
  'src/domain/**': [
    '**/ports/**',
    '**/app/**',
    '**/adapters/**',
    '**/http/**',
    '**/main/**',
    '**/config/**',
    '**/observability/**',
    '**/bin/**',
  ],
  'src/ports/**': ['**/app/**', '**/adapters/**', '**/http/**', '**/main/**', '**/config/**', '**/bin/**'],
  'src/app/**': ['**/adapters/**', '**/http/**', '**/main/**', '**/bin/**', 'pg', 'fastify', 'undici'],
  'src/http/**': ['**/adapters/**', '**/main/**'],
  'src/adapters/**': ['**/http/**', '**/main/**', '**/app/**'],
  'src/observability/**': ['**/app/**', '**/adapters/**', '**/http/**', '**/main/**', '**/bin/**'],
  // The operator commands are clients of the HTTP API: domain and config only (main hands the host checks in).
  'src/cli/**': [
    '**/ports/**',
    '**/app/**',
    '**/adapters/**',
    '**/http/**',
    '**/main/**',
    '**/observability/**',
    '**/bin/**',
    'pg',
    'fastify',
  ],
};

/** The aggregate folders of src/adapters/postgres/: each owns the writes to its tables. */
const aggregates = [
  'application',
  'credentials',
  'delivery',
  'endpoint',
  'event-type',
  'idempotency',
  'message',
  'tasks',
];

const INWARD = 'Dependencies point inward (domain ← ports ← app ← adapters/http/observability ← main).';
const APART =
  'One aggregate adapter does not import another aggregate folder: go through a port, or a flat shared file of ' +
  'src/adapters/postgres/.';

/**
 * Restricted-import patterns per folder: the layer directions, and for an aggregate folder the other aggregates too.
 */
const restricted = {
  ...Object.fromEntries(
    Object.entries(forbidden).map(([files, groups]) => [
      files,
      groups.map((group) => ({ group: [group], message: INWARD })),
    ]),
  ),
  ...Object.fromEntries(
    [...aggregates, 'wakeups'].map((name) => [
      `src/adapters/postgres/${name}/**`,
      [
        ...forbidden['src/adapters/**'].map((group) => ({ group: [group], message: INWARD })),
        ...aggregates
          .filter((other) => other !== name)
          .map((other) => ({ group: [`../${other}/**`, `**/postgres/${other}/**`], message: APART })),
      ],
    ]),
  ),
};

/**
 * Text that starts like a SQL statement (upper case, as every statement of this code base is written): no string or
 * template of src/main/ may hold one. Prose in log lines and errors does not start this way ("LISTEN connection"
 * names a connection; `LISTEN tidings_due` or `LISTEN ${channel}` is a statement).
 */
const SQL_START =
  String.raw`^\s*(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|WITH \w+ AS|CREATE |ALTER |DROP |TRUNCATE|` +
  String.raw`BEGIN|COMMIT|ROLLBACK|SET \w+ (TO|=)|(UN)?LISTEN( [a-z]+_\w*)?\s*$|NOTIFY )`;
const NO_SQL =
  'src/main/ wires; SQL text lives in src/adapters/postgres/ (a statement there, called through its adapter).';

export default tseslint.config(
  { ignores: ['node_modules/**', '.tidings/**', 'bench/results/**', 'web/dist/**', 'test/browser/.artifacts/**'] },
  ...tseslint.configs.recommended,
  {
    plugins: { '@stylistic': stylistic },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
      // Prettier breaks code at 120 characters but leaves comments, strings and templates alone: this holds them.
      '@stylistic/max-len': ['error', { code: 120, tabWidth: 2 }],
    },
  },
  // Later entries win for the same rule: an aggregate folder's entry repeats the adapters' directions.
  ...Object.entries(restricted).map(([files, patterns]) => ({
    files: [files],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns }] },
  })),
  {
    files: ['src/main/**'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: `Literal[value=/${SQL_START}/]`, message: NO_SQL },
        { selector: `TemplateElement[value.raw=/${SQL_START}/]`, message: NO_SQL },
        { selector: 'Literal[value=/pg_notify|pg_advisory|tidings_claim/]', message: NO_SQL },
      ],
    },
  },
  {
    files: ['src/domain/**'],
    rules: {
      'no-restricted-globals': ['error', { name: 'process', message: 'domain/ is pure: no environment.' }],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'domain/ is pure: pass a Clock.' },
        { object: 'Math', property: 'random', message: 'domain/ is pure: pass a Random.' },
      ],
    },
  },
  {
    files: ['src/main/**', 'bench/**', 'test/**', 'bin/**', 'web/build.ts'],
    rules: { 'no-console': 'off' },
  },
);
