import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startTidings, type Running } from '../../src/main/compose.ts';
import { LogTap } from '../support/log-tap.ts';

/** Debian's Chromium (CI installs the `chromium` package); override with TIDINGS_TEST_CHROMIUM. */
export const CHROMIUM = process.env.TIDINGS_TEST_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots of every page of a run (git-ignored). */
export const ARTIFACTS = fileURLToPath(new URL('./.artifacts/', import.meta.url));
/** README screenshots, rewritten by the browser tests so that they stay true. */
export const DOC_SHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

/** Builds the web bundle when it is missing or stale (as `npm start` does). */
export function ensureBundle(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../../web/build.ts', import.meta.url))], { stdio: 'inherit' });
}

/** What a loopback receiver answers and what it got. */
export interface Receiver {
  readonly url: string;
  /** Status and body of the next answers (changeable while running). */
  answer: { status: number; body: string; contentType: string };
  /** Answers for given paths, before {@link answer} (e.g. `/gone` → 410 while the others succeed). */
  readonly byPath: Map<string, { status: number; body: string; contentType: string }>;
  /** While set, requests are read and held unanswered until it resolves (to see a delivery in flight). */
  gate: Promise<void> | null;
  readonly requests: { path: string; body: string }[];
  close(): Promise<void>;
}

/** An HTTP receiver on 127.0.0.1:0. */
export async function startReceiver(): Promise<Receiver> {
  const requests: { path: string; body: string }[] = [];
  const receiver = {
    url: '',
    answer: { status: 204, body: '', contentType: 'text/plain' },
    byPath: new Map<string, { status: number; body: string; contentType: string }>(),
    gate: null as Promise<void> | null,
    requests,
    close: async (): Promise<void> => {
      await new Promise((r) => server.close(r));
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', async () => {
      requests.push({ path: req.url ?? '', body });
      await receiver.gate;
      const answer = receiver.byPath.get(req.url ?? '') ?? receiver.answer;
      res.writeHead(answer.status, { 'content-type': answer.contentType });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

/** Tidings on the embedded engine (port 0), its logs, its admin token, a browser, and an API helper. */
export interface World {
  readonly tidings: Running;
  readonly url: string;
  readonly token: string;
  readonly logs: LogTap;
  readonly browser: Browser;
  api<T = unknown>(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: T }>;
  /** A fresh context (no cookies, no storage) and page at 1280×800. */
  page(options?: {
    width?: number;
    height?: number;
    colorScheme?: 'light' | 'dark';
  }): Promise<{ context: BrowserContext; page: Page }>;
  stop(): Promise<void>;
}

/** Starts a {@link World}: builds the bundle if needed, starts Tidings (embedded engine) and Chromium. */
export async function startWorld(env: Readonly<Record<string, string>> = {}): Promise<World> {
  ensureBundle();
  await mkdir(ARTIFACTS, { recursive: true });
  const dataDir = await mkdtemp(join(tmpdir(), 'tidings-browser-'));
  const token = `ui_${randomBytes(16).toString('hex')}`;
  const logs = new LogTap();
  const tidings = await startTidings({
    roles: { api: true, dispatcher: true },
    logDestination: logs,
    env: {
      TIDINGS_DATA_DIR: dataDir,
      TIDINGS_API_TOKEN: token,
      HOST: '127.0.0.1',
      PORT: '0',
      TIDINGS_EGRESS_ALLOWLIST: '127.0.0.1/32',
      TIDINGS_POLL_INTERVAL: '50ms',
      TIDINGS_LOG_LEVEL: 'info',
      ...env,
    },
  });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Playwright gives each launch a fresh, empty profile (user data dir) of its own.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const url = tidings.apiUrl!;
  return {
    tidings,
    url,
    token,
    logs,
    browser,
    async api(method, path, body, as = token) {
      const r = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${as}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await r.text();
      return { status: r.status, body: (text === '' ? null : JSON.parse(text)) as never };
    },
    async page(options = {}) {
      const context = await browser.newContext({
        viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
        colorScheme: options.colorScheme ?? 'light',
      });
      return { context, page: await context.newPage() };
    },
    async stop() {
      await browser.close();
      await tidings.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in to the console with `token` (typed into the form, as a person does). */
export async function signIn(page: Page, url: string, token: string, route = '/'): Promise<void> {
  await page.goto(`${url}/console#${route}`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** axe-core's serious and critical violations on the page, as `rule: targets` lines. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP (script-src 'self') does not govern.
  await page.evaluate(axe.source);
  const result = await page.evaluate(async () => {
    const r = await (globalThis as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5),
    }));
  });
  return result
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.join(', ')}`);
}
