// Lint rules. The import-direction rules keep the layout of README.md ("Development": domain ← ports ← app ← adapters/http ← main) true.
import tseslint from 'typescript-eslint';

/** Folders a layer may not import from (relative paths, matched as globs). */
const forbidden = {
  'src/domain/**': ['**/ports/**', '**/app/**', '**/adapters/**', '**/http/**', '**/main/**', '**/config/**', '**/observability/**', '**/cli/**'],
  'src/ports/**': ['**/app/**', '**/adapters/**', '**/http/**', '**/main/**', '**/config/**', '**/cli/**'],
  'src/app/**': ['**/adapters/**', '**/http/**', '**/main/**', '**/cli/**', 'pg', 'fastify', 'undici'],
  'src/http/**': ['**/adapters/**', '**/main/**'],
  'src/adapters/**': ['**/http/**', '**/main/**', '**/app/**'],
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
  ...Object.entries(forbidden).map(([files, patterns]) => ({
    files: [files],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: patterns.map((group) => ({ group: [group], message: 'Dependencies point inward: domain ← ports ← app ← adapters/http ← main (README.md, "Development").' })) }] },
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
    files: ['src/cli/**', 'src/main/**', 'bench/**', 'test/**', 'bin/**', 'web/build.ts'],
    rules: { 'no-console': 'off' },
  },
);
