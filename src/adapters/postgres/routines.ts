import { fileURLToPath } from 'node:url';

/**
 * A routine: a SQL file that (re)defines database functions with `CREATE OR REPLACE`, kept beside the
 * statements that call it instead of in a migration. The migrator runs it after the migrations, under the
 * same advisory lock, whenever the file's SHA-256 differs from the checksum recorded in `tidings_routines`
 * (src/adapters/postgres/migrator.ts). A routine must be safe to run again on any schema the migrations
 * produce: `CREATE OR REPLACE` only, no data changes.
 */
export interface Routine {
  /** Stable key of the routine in `tidings_routines` (by convention, the function it defines). */
  readonly name: string;
  /** Absolute path of the SQL file. */
  readonly path: string;
}

/** The routines of Tidings, applied in this order. */
export const ROUTINES: readonly Routine[] = Object.freeze([
  { name: 'tidings_claim', path: fileURLToPath(new URL('./delivery/claim.sql', import.meta.url)) },
  // The claim restricted to the ids of broker messages (docs/guides/transports.md); only a broker transport calls it.
  { name: 'tidings_claim_ids', path: fileURLToPath(new URL('./delivery/claim-ids.sql', import.meta.url)) },
]);
