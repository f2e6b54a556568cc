-- Up Migration
-- One index less on the delivery path (docs/adr/0016-hot-path-cost.md, decision 5). No update of a delivery
-- is a HOT update (its state is indexed), so every index of `deliveries` takes a new entry at the insert, at
-- the claim and at the record: three per delivery. deliveries_endpoint_state (endpoint_id, state, id) served
-- reads that other indexes serve as well: an endpoint's pending rows (deliveries_endpoint_due), its leases
-- (deliveries_endpoint_leased), its dead letters and replays by state (deliveries_app_state, then the
-- endpoint as a filter), its counts by state (deliveries_endpoint_message).

DROP INDEX deliveries_endpoint_state;

-- Down Migration
CREATE INDEX deliveries_endpoint_state ON deliveries (endpoint_id, state, id);
