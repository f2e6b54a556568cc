/**
 * The generated documentation stays in step with the code (src/config/config.ts is the one schema and the one source of
 * defaults).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { configurationMarkdown } from '../src/config/config.ts';

const root = new URL('../', import.meta.url);

test(
  'docs/reference/configuration.md carries the configuration table generated from the schema (npm run docs), ' +
    'and README and the operations guide link to it',
  async () => {
    const table = configurationMarkdown();
    const reference = await readFile(new URL('docs/reference/configuration.md', root), 'utf8');
    assert.ok(reference.endsWith(table), 'docs/reference/configuration.md is stale: run npm run docs');
    const links = [
      ['README.md', '](docs/reference/configuration.md)'],
      ['docs/guides/operations.md', '](../reference/configuration.md)'],
    ];
    for (const [path, link] of links) {
      const text = await readFile(new URL(path!, root), 'utf8');
      assert.ok(text.includes(link!), `${path} links to the configuration reference`);
    }
  },
);

test('README gives the two quick-start commands and CI runs the same test command', async () => {
  const readme = await readFile(new URL('README.md', root), 'utf8');
  const ci = await readFile(new URL('.ci/run', root), 'utf8');
  assert.match(readme, /npm ci && npm start/);
  assert.match(readme, /^npm test/m);
  assert.match(ci, /^npm test$/m);
});

test(
  'README stays a front page: at most 300 lines, with the ' + 'walk-through, the picture, the failures and the map',
  async () => {
    const readme = await readFile(new URL('README.md', root), 'utf8');
    assert.ok(readme.split('\n').length <= 300, `README has ${readme.split('\n').length} lines`);
    const headings = [
      '## Quick start',
      '### A walk-through with curl',
      '## How it works',
      '## What happens when things fail',
      '## Documentation',
    ];
    for (const heading of headings) {
      assert.ok(readme.includes(`\n${heading}\n`), `README has ${heading}`);
    }
  },
);

/** Text files of the repository that hold comments and docs (binary files and lockfiles left out). */
function trackedTextFiles(): string[] {
  const out = execFileSync(
    'git',
    [
      'ls-files',
      '-co',
      '--exclude-standard',
      'src',
      'test',
      'bench',
      'web',
      'bin',
      'docs',
      'migrations',
      'eslint.config.js',
      'README.md',
    ],
    { cwd: fileURLToPath(root), encoding: 'utf8' },
  );
  return out
    .split('\n')
    .filter((p) => p !== '' && /\.(ts|tsx|js|sql|md|html|css|json)$/.test(p) && existsSync(new URL(p, root)));
}

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

async function anchorsOf(path: string): Promise<Set<string>> {
  const text = await readFile(new URL(path, root), 'utf8');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

// Built from parts so that this file does not cite what it forbids.
const FORBIDDEN: readonly { pattern: RegExp; what: string }[] = [
  {
    pattern: new RegExp(['DESIGN ?', '§|DESIGN', '\\.md|\\bdesign ?', '§'].join('')),
    what: 'a section of a design file outside the repository (cite a heading of docs/design.md)',
  },
  { pattern: new RegExp(['STYLE', '\\.md'].join('')), what: 'a style guide outside the repository' },
  {
    pattern: new RegExp(['\\bissues? #?', '\\d'].join(''), 'i'),
    what: 'an issue number (cite an ADR, docs/design.md or the test that holds the rule)',
  },
  {
    pattern: new RegExp(['(^|[\\s(])#', '\\d{2,5}\\b'].join('')),
    what: 'an issue number (cite an ADR, docs/design.md or the test that holds the rule)',
  },
  {
    pattern: new RegExp(['/work', '/|\\.\\./', 'shared/(DESIGN|STYLE|vectors)'].join('')),
    what: 'a file outside the repository',
  },
];

test('no comment or doc cites a design section, a style guide or an issue number that is not in the repository', () => {
  const found: string[] = [];
  for (const path of trackedTextFiles()) {
    if (path === 'test/docs.test.ts') continue;
    const lines = readFileSync(new URL(path, root), 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const { pattern, what } of FORBIDDEN)
        if (pattern.test(line)) found.push(`${path}:${i + 1}: ${what}: ${line.trim().slice(0, 120)}`);
    });
  }
  assert.deepEqual(found, []);
});

test(
  'every repository path cited in docs and comments exists, and every cited anchor of a Markdown file is one of ' +
    'its headings',
  async () => {
    const missing: string[] = [];
    const anchors = new Map<string, Set<string>>();
    const check = async (from: string, target: string, anchor: string | undefined): Promise<void> => {
      const clean = target.replace(/[.,:;)`'"]+$/, '');
      if (clean.includes('*') || clean.includes('${') || clean.includes('<')) return;
      if (!existsSync(new URL(clean, root))) {
        missing.push(`${from}: ${clean} does not exist`);
        return;
      }
      if (anchor !== undefined && clean.endsWith('.md')) {
        if (!anchors.has(clean)) anchors.set(clean, await anchorsOf(clean));
        if (!anchors.get(clean)!.has(anchor)) missing.push(`${from}: ${clean}#${anchor} is no heading of ${clean}`);
      }
    };
    for (const path of trackedTextFiles()) {
      const text = await readFile(new URL(path, root), 'utf8');
      // Paths from the repository root: docs/…, and adr/… as written inside docs/.
      for (const m of text.matchAll(/(?<![\w./-])((?:docs|adr)\/[\w./-]*[\w/])(?:#([\w-]+))?/g)) {
        const target = m[1]!.startsWith('adr/') ? `docs/${m[1]}` : m[1]!;
        await check(path, target, m[2]);
      }
      // Relative Markdown links, resolved from the file that holds them.
      if (path.endsWith('.md')) {
        for (const m of text.matchAll(/\]\(([^)#\s:]+)(?:#([\w-]+))?\)/g)) {
          const target = relative(fileURLToPath(root), join(dirname(fileURLToPath(new URL(path, root))), m[1]!));
          await check(path, target.endsWith('/') || target === '' ? target : target, m[2]);
        }
      }
    }
    assert.deepEqual(missing, []);
  },
);
