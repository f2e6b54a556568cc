-- Up Migration
-- The delivery rows as the outbox of a broker transport (docs/guides/transports.md): `broker_published_at` is the
-- instant a dispatcher's outbox publisher stamped the row before publishing its id to the broker. A row is published
-- for its current due instant when the stamp is at or after that instant (next_attempt_at of a pending row,
-- lease_expires_at of a leased one); a retry, a replay, a resume or an expired lease moves the due instant past the
-- stamp, and the row is published again. Only a broker transport reads or writes it (the outbox publisher, the claim by
-- id of a broker message); with the PostgreSQL transport it stays NULL and no statement of the delivery path touches
-- it. No index: the publisher reads each endpoint's first due rows through deliveries_endpoint_due, and expired leases
-- through deliveries_lease_expiry. Adding a nullable column without a default rewrites nothing (PostgreSQL 15+,
-- PGlite).

ALTER TABLE deliveries ADD COLUMN broker_published_at timestamptz;
