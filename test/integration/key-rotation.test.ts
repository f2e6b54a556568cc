/**
 * Key rotation (docs/guides/security.md) on both engines: values under a rotated-out key still decrypt while it is in
 * the ring; `keys rotate` rewrites every encrypted column in bounded, resumable batches, never clobbers a
 * concurrent write, and leaves no value under the old key; the key registry then retires the old key.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { keyRingCipher } from '../../src/adapters/crypto/key-ring.ts';
import { createPgEndpointStore } from '../../src/adapters/postgres/endpoint/endpoint-store.ts';
import { createPgMessageQueryStore } from '../../src/adapters/postgres/message/message-query-store.ts';
import { checkKeyRegistry, KeyCheckError } from '../../src/adapters/postgres/key-registry.ts';
import { rotateKeys, type RotationProgress } from '../../src/adapters/postgres/key-rotation.ts';
import type { Db } from '../../src/adapters/postgres/db.ts';
import { encodeSecret } from '../../src/domain/signing.ts';
import type { Cipher } from '../../src/ports/cipher.ts';
import { ENGINES, type TestDatabase } from '../support/db.ts';
import { insertApp } from '../support/fixtures.ts';

const K1 = { id: 'k1', key: Buffer.alloc(32, 1) };
const K2 = { id: 'k2', key: Buffer.alloc(32, 2) };
const K0 = { id: 'k0', key: Buffer.alloc(32, 9) };
const ring1 = keyRingCipher([K1]);
const ring21 = keyRingCipher([K2, K1]);
const ring2 = keyRingCipher([K2]);

let seq = 0;
const id = (prefix: string): string =>
  `${prefix}_${String(Date.now()).padStart(14, '0')}${String(seq++).padStart(13, '0')}`;

interface Seeded {
  readonly endpoints: {
    id: string;
    secret: string;
    previous: string;
    headers: Record<string, string>;
    receiverAuth: string;
  }[];
  readonly messages: { id: string; payload: string }[];
}

/** Writes endpoints (secret, previous secret, sensitive headers, receiver auth) and messages under `cipher`. */
async function seed(db: Db, cipher: Cipher, appId: string, endpoints: number, messages: number): Promise<Seeded> {
  const out: Seeded = { endpoints: [], messages: [] };
  for (let i = 0; i < endpoints; i++) {
    const ep = {
      id: id('ep'),
      secret: encodeSecret(randomBytes(24)),
      previous: encodeSecret(randomBytes(24)),
      headers: { 'x-api-key': `hdr-${i}-${randomBytes(4).toString('hex')}` },
      receiverAuth: JSON.stringify({ basic: { username: 'u', password: randomBytes(8).toString('hex') } }),
    };
    const s = cipher.encrypt(Buffer.from(ep.secret), ep.id);
    const p = cipher.encrypt(Buffer.from(ep.previous), ep.id);
    const h = cipher.encrypt(Buffer.from(JSON.stringify(ep.headers)), ep.id);
    const r = cipher.encrypt(Buffer.from(ep.receiverAuth), ep.id);
    await db.query(
      `INSERT INTO endpoints (id, app_id, url, secret, secret_key_id, previous_secret, previous_secret_key_id,
        previous_secret_until, sensitive_headers, sensitive_headers_key, receiver_auth, receiver_auth_key_id)
       VALUES ($1, $2, 'http://127.0.0.1:9/x', $3, $4, $5, $6, clock_timestamp() + interval '1 day', $7, $8, $9, $10)`,
      [ep.id, appId, s.data, s.keyId, p.data, p.keyId, h.data, h.keyId, r.data, r.keyId],
    );
    out.endpoints.push(ep);
  }
  for (let i = 0; i < messages; i++) {
    const msg = { id: id('msg'), payload: `{"n":${i},"marker":"${randomBytes(6).toString('hex')}"}` };
    const sealed = cipher.encrypt(Buffer.from(msg.payload), msg.id);
    await db.query(
      `INSERT INTO messages (id, app_id, event_type, payload, payload_key_id) VALUES ($1, $2, 'rotation.test', $3, $4)`,
      [msg.id, appId, sealed.data, sealed.keyId],
    );
    out.messages.push(msg);
  }
  return out;
}

/** Every key-id column of every table (discovered, so a new encrypted column is covered), with counts per key. */
async function keyUsage(db: Db): Promise<Record<string, Record<string, number>>> {
  const columns = (
    await db.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = current_schema() AND (column_name LIKE '%\\_key\\_id' OR column_name LIKE '%\\_key')
       AND data_type = 'text'
     ORDER BY 1, 2`,
    )
  ).rows;
  const usage: Record<string, Record<string, number>> = {};
  for (const c of columns) {
    const rows = (
      await db.query<{ k: string; n: number }>(
        `SELECT "${c.column_name}" AS k, count(*)::int AS n FROM "${c.table_name}" WHERE "${c.column_name}" IS ` +
          'NOT NULL GROUP BY 1',
      )
    ).rows;
    usage[`${c.table_name}.${c.column_name}`] = Object.fromEntries(rows.map((r) => [r.k, r.n]));
  }
  return usage;
}

/** Reads every seeded value back through `cipher` from the raw rows. */
async function readBack(db: Db, cipher: Cipher, seeded: Seeded): Promise<void> {
  for (const ep of seeded.endpoints) {
    const row = (
      await db.query<{
        secret: Buffer;
        secret_key_id: string;
        previous_secret: Buffer;
        previous_secret_key_id: string;
        sensitive_headers: Buffer;
        sensitive_headers_key: string;
        receiver_auth: Buffer;
        receiver_auth_key_id: string;
      }>('SELECT * FROM endpoints WHERE id = $1', [ep.id])
    ).rows[0]!;
    assert.equal(cipher.decrypt(row.secret_key_id, row.secret, ep.id).toString(), ep.secret);
    assert.equal(cipher.decrypt(row.previous_secret_key_id, row.previous_secret, ep.id).toString(), ep.previous);
    assert.deepEqual(
      JSON.parse(cipher.decrypt(row.sensitive_headers_key, row.sensitive_headers, ep.id).toString()),
      ep.headers,
    );
    assert.equal(cipher.decrypt(row.receiver_auth_key_id, row.receiver_auth, ep.id).toString(), ep.receiverAuth);
  }
  for (const msg of seeded.messages) {
    const row = (
      await db.query<{ payload: Buffer; payload_key_id: string }>(
        'SELECT payload, payload_key_id FROM messages WHERE id = $1',
        [msg.id],
      )
    ).rows[0]!;
    assert.equal(cipher.decrypt(row.payload_key_id, row.payload, msg.id).toString(), msg.payload);
  }
}

for (const engine of ENGINES) {
  describe(`key rotation (${engine.name})`, () => {
    let database: TestDatabase;
    let db: Db;
    let appId: string;
    before(async () => {
      database = await engine.fresh();
      db = database.db;
      appId = await insertApp(db, 'rotation');
    });
    after(async () => database?.drop());

    test(
      'values under a rotated-out key still decrypt while it is in the ring; rotate rewrites every encrypted ' +
        'column in batches and retires the old key',
      async () => {
        await checkKeyRegistry(db, ring1);
        const seeded = await seed(db, ring1, appId, 7, 11);
        // Ring k2,k1: new writes use k2, k1 still decrypts (through the stores the API and dispatcher use).
        await checkKeyRegistry(db, ring21);
        const store = { ...createPgEndpointStore(db, ring21), ...createPgMessageQueryStore(db, ring21) };
        assert.equal(await store.endpointSecret(appId, seeded.endpoints[0]!.id), seeded.endpoints[0]!.secret);
        const msg = await store.findMessage(appId, seeded.messages[0]!.id, { withPayload: true });
        assert.equal(Buffer.from(msg!.payload!).toString(), seeded.messages[0]!.payload);

        const progress: RotationProgress[] = [];
        const report = await rotateKeys(db, ring21, { batchSize: 3, onProgress: (p) => progress.push(p) });
        assert.deepEqual(report.rewritten, {
          'endpoints.secret': 7,
          'endpoints.previous_secret': 7,
          'endpoints.sensitive_headers': 7,
          'endpoints.receiver_auth': 7,
          'messages.payload': 11,
          'attempts.response_body': 0,
        });
        assert.ok(
          progress.every((p) => p.read <= 3),
          'batches are bounded by the batch size',
        );
        assert.equal(progress.filter((p) => p.column === 'messages.payload').length, 4, '11 payloads in batches of 3');
        assert.deepEqual(Object.values(report.remaining), [0, 0, 0, 0, 0, 0]);
        assert.deepEqual(report.retired, ['k1']);

        const usage = await keyUsage(db);
        for (const [column, keys] of Object.entries(usage)) {
          assert.deepEqual(
            Object.keys(keys).filter((k) => k !== 'k2'),
            [],
            `${column} still has values under ${JSON.stringify(keys)}`,
          );
        }
        assert.equal(
          usage['endpoints.secret_key_id']?.k2,
          7 +
            (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM endpoints WHERE app_id <> $1', [appId]))
              .rows[0]!.n,
        );
        // Only k2 is needed now: values decrypt with a ring of k2 alone, and start-up accepts that ring.
        await readBack(db, ring2, seeded);
        await checkKeyRegistry(db, ring2);
        // A rerun finds nothing to do.
        const again = await rotateKeys(db, ring21, { batchSize: 3 });
        assert.deepEqual(Object.values(again.rewritten), [0, 0, 0, 0, 0, 0]);
      },
    );

    test(
      'a value written between the read and the write of a batch is not clobbered; one written under the old key ' +
        'is left for a rerun',
      async () => {
        const k3 = { id: 'k3', key: Buffer.alloc(32, 3) };
        const ring32 = keyRingCipher([k3, K2]);
        await checkKeyRegistry(db, ring32);
        const seeded = await seed(db, ring2, appId, 4, 0);
        const [fresh, stale] = [seeded.endpoints[1]!, seeded.endpoints[2]!];
        const freshSecret = encodeSecret(randomBytes(24));
        const staleSecret = encodeSecret(randomBytes(24));
        let injected = false;
        const report = await rotateKeys(db, ring32, {
          batchSize: 100,
          beforeWrite: async (column, ids) => {
            if (injected || column.data !== 'secret' || !ids.includes(fresh.id)) return;
            injected = true;
            // A process with the new ring writes under k3; one not yet restarted (old ring) writes under k2.
            const a = ring32.encrypt(Buffer.from(freshSecret), fresh.id);
            const b = ring2.encrypt(Buffer.from(staleSecret), stale.id);
            await db.query('UPDATE endpoints SET secret = $2, secret_key_id = $3 WHERE id = $1', [
              fresh.id,
              a.data,
              a.keyId,
            ]);
            await db.query('UPDATE endpoints SET secret = $2, secret_key_id = $3 WHERE id = $1', [
              stale.id,
              b.data,
              b.keyId,
            ]);
          },
        });
        assert.ok(injected);
        assert.ok(report.changedMeanwhile >= 2, 'both concurrently written rows were left alone');
        assert.equal(report.remaining['endpoints.secret'], 1, 'the value written under the old key is reported');
        assert.deepEqual(report.retired, [], 'k2 is not retired while a value uses it');
        const store = createPgEndpointStore(db, ring32);
        assert.equal(await store.endpointSecret(appId, fresh.id), freshSecret, 'the concurrent write stands');
        assert.equal(await store.endpointSecret(appId, stale.id), staleSecret);
        const rerun = await rotateKeys(db, ring32, { batchSize: 100 });
        assert.equal(rerun.rewritten['endpoints.secret'], 1);
        assert.deepEqual(rerun.retired, ['k2']);
        assert.equal(await createPgEndpointStore(db, keyRingCipher([k3])).endpointSecret(appId, stale.id), staleSecret);
        // k2 is retired and may leave the ring; k3 may not.
        await checkKeyRegistry(db, keyRingCipher([k3]));
        await assert.rejects(
          checkKeyRegistry(db, keyRingCipher([{ id: 'k4', key: Buffer.alloc(32, 4) }])),
          (e: unknown) => e instanceof KeyCheckError && e.code === 'encryption_key_missing' && e.keyIds.includes('k3'),
        );
        await db.query(`DELETE FROM encryption_keys WHERE id = 'k4'`);
        // Same id, other bytes: refused as a mismatch.
        await assert.rejects(
          checkKeyRegistry(db, keyRingCipher([{ id: 'k3', key: Buffer.alloc(32, 5) }])),
          (e: unknown) => e instanceof KeyCheckError && e.code === 'encryption_key_mismatch',
        );
      },
    );

    test(
      'a run stopped after one batch resumes where it stopped; a value under a key missing from the ring stops ' +
        'the run before its batch is written',
      async () => {
        const k5 = { id: 'k5', key: Buffer.alloc(32, 5 + 100) };
        const k3 = { id: 'k3', key: Buffer.alloc(32, 3) };
        const ring53 = keyRingCipher([k5, k3]);
        await checkKeyRegistry(db, ring53);
        let batches = 0;
        const first = await rotateKeys(db, ring53, {
          batchSize: 2,
          shouldStop: () => batches >= 1,
          onProgress: () => batches++,
        });
        assert.equal(batches, 1);
        assert.equal(
          Object.values(first.rewritten).reduce((a, b) => a + b, 0),
          2,
        );
        assert.deepEqual(first.retired, [], 'a stopped run retires nothing');
        const second = await rotateKeys(db, ring53, { batchSize: 2 });
        assert.ok(Object.values(second.rewritten).reduce((a, b) => a + b, 0) > 0);
        assert.deepEqual(Object.values(second.remaining), [0, 0, 0, 0, 0, 0]);

        const orphan = id('msg');
        const sealed = keyRingCipher([K0]).encrypt(Buffer.from('{"lost":true}'), orphan);
        await db.query(
          'INSERT INTO messages (id, app_id, event_type, payload, payload_key_id) VALUES ($1, $2, ' +
            `'rotation.test', $3, $4)`,
          [orphan, appId, sealed.data, sealed.keyId],
        );
        const k6 = keyRingCipher([{ id: 'k6', key: Buffer.alloc(32, 6) }, k5]);
        await assert.rejects(
          rotateKeys(db, k6, { batchSize: 50 }),
          (e: unknown) => (e as { code?: string }).code === 'unknown_key' && (e as Error).message.includes(orphan),
        );
        const row = (
          await db.query<{ payload_key_id: string }>('SELECT payload_key_id FROM messages WHERE id = $1', [orphan])
        ).rows[0]!;
        assert.equal(row.payload_key_id, 'k0');
      },
    );
  });
}
