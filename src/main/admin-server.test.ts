import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '../config/config.ts';
import { notReadyBody } from '../http/routes/health.ts';
import { buildAdminServer } from './admin-server.ts';

test('admin /readyz: 503 with the API body (code, detail, status, parts); no Fastify deprecation', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error & { code?: string }): void => {
    warnings.push(`${w.code ?? w.name}: ${w.message}`);
  };
  process.on('warning', onWarning);
  let ready = false;
  const parts = { transport: 'nats', broker: 'disconnected' };
  const app = buildAdminServer({
    logger: pino({ enabled: false }),
    registry: new Registry(),
    ready: async () => ready,
    readiness: () => parts,
    config: loadConfig({}),
  });
  try {
    const down = await app.inject({ url: '/readyz' });
    assert.equal(down.statusCode, 503);
    assert.deepEqual(down.json(), {
      code: 'service_unavailable',
      detail: 'The broker (nats) is disconnected',
      status: 'not_ready',
      transport: 'nats',
      broker: 'disconnected',
    });
    assert.deepEqual(down.json(), notReadyBody(parts, 'unused'), 'the body the API answers with');
    ready = true;
    assert.deepEqual((await app.inject({ url: '/readyz' })).json(), { status: 'ready', ...parts });
    // Process warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      warnings.filter((w) => w.includes('FSTDEP')),
      [],
    );
  } finally {
    process.off('warning', onWarning);
    await app.close();
  }
});
