-- Up Migration
-- Endpoint health and flow control (docs/adr/0004-endpoint-flow-control.md): per-endpoint claims read the
-- due deliveries of one endpoint in due order, and count its live leases, from these indexes.
CREATE INDEX deliveries_endpoint_due ON deliveries (endpoint_id, next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX deliveries_endpoint_leased ON deliveries (endpoint_id, lease_expires_at) WHERE state = 'leased';
-- When the breaker last changed state (transitions are detected by the statement that makes them).
ALTER TABLE endpoints ADD COLUMN breaker_changed_at timestamptz;

-- Down Migration
ALTER TABLE endpoints DROP COLUMN breaker_changed_at;
DROP INDEX deliveries_endpoint_leased;
DROP INDEX deliveries_endpoint_due;
