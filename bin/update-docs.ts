// Regenerates the configuration reference in docs/reference/configuration.md from the one config schema
// (`npm run docs`). test/docs.test.ts fails when they drift.
import { writeFile } from 'node:fs/promises';
import { configurationMarkdown } from '../src/config/config.ts';

const root = new URL('../', import.meta.url);
const table = configurationMarkdown();
await writeFile(
  new URL('docs/reference/configuration.md', root),
  `# Configuration reference\n\nGenerated from the tables of \`src/config/settings/\` by \`npm run docs\`; ` +
    'every setting is read from the environment and validated at start-up (every problem listed at once). ' +
    `Durations take \`ms\`, \`s\`, \`m\`, \`h\` or \`d\` (a bare number is ms).\n\n${table}`,
);
console.log('configuration reference written');
