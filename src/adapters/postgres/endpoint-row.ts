import type { EndpointRecord, EndpointStatus } from '../../ports/endpoint-store.ts';

/*
 * The shape of an `endpoints` row as read, shared by the endpoint store (its owner) and the read side of
 * deliveries, which joins endpoints to show a message's destinations.
 */

/** An endpoints row without its secrets (the non-secret columns, as the stores read them). */
export interface EndpointRow {
  id: string;
  app_id: string;
  uid: string | null;
  url: string;
  description: string;
  version: number;
  filter_types: string[] | null;
  channels: string[] | null;
  metadata: Record<string, string>;
  headers: Record<string, string>;
  rate_limit_per_s: number | null;
  status: EndpointStatus;
  status_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** An endpoints row → {@link EndpointRecord}. */
export function toRecord(row: EndpointRow): EndpointRecord {
  return {
    id: row.id,
    appId: row.app_id,
    uid: row.uid,
    url: row.url,
    description: row.description,
    version: row.version,
    filterTypes: row.filter_types,
    channels: row.channels,
    metadata: row.metadata,
    headers: row.headers,
    rateLimit: row.rate_limit_per_s,
    status: row.status,
    statusReason: row.status_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
