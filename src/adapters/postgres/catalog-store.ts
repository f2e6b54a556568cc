import type { Cipher } from '../../ports/cipher.ts';
import type { CatalogStore } from '../../ports/catalog-store.ts';
import { pgApiKeys } from './catalog-api-keys.ts';
import { pgApplications } from './catalog-applications.ts';
import { pgEndpoints } from './catalog-endpoints.ts';
import { pgMessageQueries } from './catalog-messages.ts';
import type { Db } from './db.ts';

/**
 * The PostgreSQL {@link CatalogStore}: raw SQL per aggregate (applications, endpoints, message/attempt/
 * timeline queries, API keys). Endpoint secrets and payloads go through `cipher` (DESIGN §7).
 */
export function createPgCatalogStore(db: Db, cipher: Cipher): CatalogStore {
  return { ...pgApplications(db), ...pgEndpoints(db, cipher), ...pgMessageQueries(db, cipher), ...pgApiKeys(db) };
}
