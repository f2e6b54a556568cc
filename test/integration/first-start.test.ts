/**
 * The first start and a lost admin token, as README.md tells them ("Quick start", "Lost the admin token?"):
 * a real `tidings serve` on the embedded engine prints the generated token once with the addresses of the API
 * and the console; a restart with TIDINGS_API_TOKEN gives an admin token back, with which the lost one is revoked.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startTidingsProcess, tidingsEnv, type LogLine, type TidingsProcess } from '../support/tidings-process.ts';

const dataDir = await mkdtemp(join(tmpdir(), 'tidings-first-start-'));
after(() => rm(dataDir, { recursive: true, force: true }));

const raw = (line: LogLine): string => (typeof line.raw === 'string' ? line.raw : '');

async function serve(settings: Record<string, string> = {}): Promise<TidingsProcess> {
  return startTidingsProcess({ role: 'serve', env: tidingsEnv({ TIDINGS_DATA_DIR: dataDir, PORT: '0', ...settings }) });
}

async function status(p: TidingsProcess, token: string, method = 'GET', path = '/api/v1/app'): Promise<number> {
  const res = await fetch(`${p.apiUrl}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

test('a first start prints the admin token once and the console; TIDINGS_API_TOKEN recovers a lost token', async () => {
  const first = await serve();
  let lost: string;
  try {
    const consoleLine = await first.waitForLog((l) => raw(l).startsWith('Console on '), 30_000, 'the console address');
    assert.match(raw(consoleLine), new RegExp(`^Console on ${first.apiUrl}/console `));
    const tokenLines = first.lines.map(raw).filter((text) => /^ {2}tidings_\S+$/.test(text));
    assert.equal(tokenLines.length, 1, 'the generated token is printed once');
    lost = tokenLines[0]!.trim();
    assert.equal(await status(first, lost), 200);
    assert.equal((await first.stop()).code, 0);
  } finally {
    await first.stop();
  }

  const recovered = 'a-new-admin-secret-of-32-characters';
  const second = await serve({ TIDINGS_API_TOKEN: recovered });
  try {
    await second.waitForLog((l) => raw(l).startsWith('Console on '), 30_000, 'the console address');
    assert.ok(!second.lines.map(raw).some((text) => /tidings_/.test(text)), 'no token is generated or shown again');
    assert.equal(await status(second, recovered), 200, 'TIDINGS_API_TOKEN is an admin token');
    assert.equal(await status(second, lost), 200, 'the lost token works until it is revoked');
    assert.equal(await status(second, recovered, 'DELETE', '/api/v1/api-key/key_bootstrap_admin'), 204);
    assert.equal(await status(second, lost), 401, 'the lost token is refused once revoked');
    assert.equal(await status(second, recovered), 200);
  } finally {
    await second.stop();
  }
});
