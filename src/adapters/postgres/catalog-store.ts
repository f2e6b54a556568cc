import type { Cipher } from '../../ports/cipher.ts';
import type { CatalogStore } from '../../ports/catalog-store.ts';
import { pgApiKeys } from './catalog-api-keys.ts';
import { pgApplications } from './catalog-applications.ts';
import { pgEndpoints } from './catalog-endpoints.ts';
import { pgMessageQueries } from './catalog-messages.ts';
import type { BatchLimits } from './batching.ts';
import type { Db } from './db.ts';

/**
 * The PostgreSQL {@link CatalogStore}: raw SQL per aggregate (applications, endpoints, message/attempt/
 * timeline queries, API keys). Endpoint secrets and payloads go through `cipher` (docs/design.md#security). `limits` bound
 * the grouped application lookups (ADR 0007; default: the batching module's defaults).
 */
export function createPgCatalogStore(db: Db, cipher: Cipher, limits?: BatchLimits): CatalogStore {
  return { ...pgApplications(db, limits), ...pgEndpoints(db, cipher), ...pgMessageQueries(db, cipher), ...pgApiKeys(db) };
}
