import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/adapters/postgres/db.ts';
import { encodeSecret } from '../../src/domain/signing.ts';
import type { Cipher } from '../../src/ports/cipher.ts';
import type { AttemptRecord, ClaimedDelivery } from '../../src/ports/delivery-store.ts';

let counter = 0;
const suffix = (): string =>
  `${Date.now().toString(36)}${(counter++).toString(36).padStart(4, '0')}${randomBytes(4).toString('hex')}`
    .toUpperCase()
    .padEnd(27, '0')
    .slice(0, 27);

/** Inserts an application row directly (store-level tests that do not go through the API). */
export async function insertApp(db: Db, name = 'test app'): Promise<string> {
  const id = `app_${suffix()}`;
  await db.query('INSERT INTO applications (id, name) VALUES ($1, $2)', [id, name]);
  return id;
}

/** Options of {@link insertEndpoint}. */
export interface EndpointFixture {
  readonly appId: string;
  readonly url: string;
  /** `whsec_` secret; a fresh one when omitted. */
  readonly secret?: string;
  readonly filterTypes?: readonly string[] | null;
  readonly channels?: readonly string[] | null;
  readonly status?: 'active' | 'paused' | 'disabled';
}

/** Inserts an endpoint row with its secret encrypted by `cipher` (context = endpoint id). */
export async function insertEndpoint(
  db: Db,
  cipher: Cipher,
  fixture: EndpointFixture,
): Promise<{ id: string; secret: string }> {
  const id = `ep_${suffix()}`;
  const secret = fixture.secret ?? encodeSecret(randomBytes(24));
  const sealed = cipher.encrypt(Buffer.from(secret, 'utf8'), id);
  await db.query(
    `INSERT INTO endpoints (id, app_id, url, secret, secret_key_id, filter_types, channels, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      id,
      fixture.appId,
      fixture.url,
      sealed.data,
      sealed.keyId,
      fixture.filterTypes ?? null,
      fixture.channels ?? null,
      fixture.status ?? 'active',
    ],
  );
  return { id, secret };
}

/** The two tenants of the plan tests: a large application and a small one beside it. */
export interface TwoTenants {
  readonly big: string;
  /** The large application's 200 endpoints. */
  readonly bigEndpoints: readonly string[];
  readonly small: string;
  /** The small application's two endpoints. */
  readonly first: string;
  readonly second: string;
}

/**
 * Inserts a large application with 200 endpoints and a small one with two, for tests that check that a read
 * of the small one's rows does not touch the large one's (the plan tests of test/integration/). `more`
 * endpoints of the large application are added in one statement (one sealed secret for all, never read), so
 * that a read of every endpoint costs more than a read of one application's.
 */
export async function insertTwoTenants(db: Db, cipher: Cipher, more = 0): Promise<TwoTenants> {
  const big = await insertApp(db, 'big');
  const bigEndpoints: string[] = [];
  for (let i = 0; i < 200; i += 1)
    bigEndpoints.push((await insertEndpoint(db, cipher, { appId: big, url: 'http://127.0.0.1:9/' })).id);
  const sealed = cipher.encrypt(Buffer.from(encodeSecret(randomBytes(24)), 'utf8'), 'ep_more');
  await db.query(
    `INSERT INTO endpoints (id, app_id, url, secret, secret_key_id)
     SELECT 'ep_more_' || lpad(g::text, 8, '0'), $1, 'http://127.0.0.1:9/', $2, $3 FROM generate_series(1, $4::int) g`,
    [big, sealed.data, sealed.keyId, more],
  );
  const small = await insertApp(db, 'small');
  const first = (await insertEndpoint(db, cipher, { appId: small, url: 'http://127.0.0.1:9/a' })).id;
  const second = (await insertEndpoint(db, cipher, { appId: small, url: 'http://127.0.0.1:9/b' })).id;
  return { big, bigEndpoints, small, first, second };
}

/** A successful first-try outcome of a claimed delivery (status 200, 3 ms), to record through the delivery store. */
export function succeededRecord(d: ClaimedDelivery): AttemptRecord {
  return {
    deliveryId: d.deliveryId,
    fencingToken: d.fencingToken,
    dispatcherId: d.dispatcherId,
    endpointId: d.endpointId,
    attemptId: `atmpt_${d.deliveryId.padStart(27, '0')}${d.fencingToken}`.slice(0, 33),
    attemptNumber: d.attemptNumber,
    trigger: 'scheduled',
    url: d.url,
    succeeded: true,
    statusCode: 200,
    responseBody: 'ok',
    location: null,
    errorKind: null,
    errorDetail: null,
    durationMs: 3,
    next: { next: 'succeeded' },
    throttleEndpointMs: null,
    disableEndpointReason: null,
  };
}
