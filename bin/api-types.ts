// Rewrites web/src/shared/api-types.ts, the console's and portal's types of every API operation, from the OpenAPI
// document the server builds from its route schemas (`npm run api-types`). Nothing is started: the HTTP app is
// built without a database (its routes are only registered, never called) and asked for /api/v1/openapi.json.
// test/api-types.test.ts fails when the committed file differs from what this writes now.
import { writeFile } from 'node:fs/promises';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { format, resolveConfig } from 'prettier';
import pino from 'pino';
import { loadConfig } from '../src/config/config.ts';
import { buildApp, type HttpDeps } from '../src/http/app.ts';
import { OPENAPI_PATH } from '../src/http/plugins/openapi.ts';
import { createMetrics } from '../src/observability/metrics.ts';

/** Where the generated types are committed. */
export const API_TYPES_FILE = new URL('../web/src/shared/api-types.ts', import.meta.url);

const HEADER = `/**
 * Generated from the OpenAPI document of the Tidings API (${OPENAPI_PATH}) by \`npm run api-types\`
 * (bin/api-types.ts, openapi-typescript). Do not edit: change the route schemas and run it again.
 */
`;

/** The widest line the tree allows; generated description comments are wrapped to it. */
const WIDTH = 120;

/**
 * The OpenAPI document as the server serves it, from the app built with default settings and no database: each
 * dependency a route would call at run time throws, and none is called while the document is built.
 */
export async function servedOpenApi(): Promise<OpenAPI3> {
  const config = loadConfig({
    TIDINGS_DATABASE_URL: 'postgresql://unused@127.0.0.1:1/unused',
    TIDINGS_ADMIN_TOKEN: 'openapi-document-only-0123456789abcdef',
  });
  const notWired = new Proxy(
    {},
    {
      get: (_target, name) => {
        throw new Error(`${String(name)}: not wired while the OpenAPI document is built`);
      },
    },
  );
  const given: Record<string, unknown> = {
    config,
    logger: pino({ enabled: false }),
    metrics: createMetrics(),
    taskRunner: { start: () => undefined, stop: async () => undefined },
  };
  const deps = new Proxy(given, { get: (target, name) => (name in target ? target[name as string] : notWired) });
  const app = buildApp(deps as unknown as HttpDeps);
  try {
    const res = await app.inject({ method: 'GET', url: OPENAPI_PATH });
    if (res.statusCode !== 200) throw new Error(`${OPENAPI_PATH} answered ${res.statusCode}`);
    return JSON.parse(res.body) as OpenAPI3;
  } finally {
    await app.close();
  }
}

/** Words of `text` in lines of at most {@link WIDTH} characters, each starting with `lead`. */
function wrapWords(lead: string, text: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    if (current !== '' && lead.length + current.length + 1 + word.length > WIDTH) {
      out.push(lead + current);
      current = word;
    } else current = current === '' ? word : `${current} ${word}`;
  }
  out.push(lead + current);
  return out;
}

/** A generated comment line past {@link WIDTH} characters (`/** … *\/` or ` * …`), broken at spaces. */
function wrapComment(line: string): string[] {
  if (line.length <= WIDTH) return [line];
  const single = /^(\s*)\/\*\* (.*) \*\/$/.exec(line);
  if (single !== null) {
    const indent = single[1]!;
    return [`${indent}/**`, ...wrapWords(`${indent} * `, single[2]!), `${indent} */`];
  }
  const inner = /^(\s*\* )(.*)$/.exec(line);
  return inner === null ? [line] : wrapWords(inner[1]!, inner[2]!);
}

/** The text of web/src/shared/api-types.ts for the API as it is now (formatted as the tree is). */
export async function apiTypesText(): Promise<string> {
  const ast = await openapiTS(await servedOpenApi(), { alphabetize: false });
  const body = astToString(ast).split('\n').flatMap(wrapComment).join('\n');
  const options = await resolveConfig(API_TYPES_FILE);
  return format(HEADER + body, { ...options, parser: 'typescript' });
}

if (import.meta.main) {
  await writeFile(API_TYPES_FILE, await apiTypesText());
  console.log('web/src/shared/api-types.ts written');
}
