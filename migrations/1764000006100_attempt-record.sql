-- Up Migration
-- What an attempt record keeps (docs/adr/0009-window-share-within-a-claim.md, "The attempt record").
--
-- The receiver's response prefix can echo the customer's data, so it is stored encrypted like the payload
-- (AES-256-GCM under the key ring, context = the attempt id), naming its key; rows written before this
-- migration keep their text as plain bytes with a NULL key id, which `tidings keys rotate` encrypts.
ALTER TABLE attempts ALTER COLUMN response_body TYPE bytea USING convert_to(response_body, 'UTF8');
ALTER TABLE attempts ADD COLUMN response_body_key_id text;
-- What only the operator sees (the tenant's view of an attempt never includes it): the addresses the
-- endpoint's name resolved to and the one connected to, the refusal's full reason and the setting or limit
-- that decided it, the ids of the signing secrets, the Retry-After received and whether it was applied.
ALTER TABLE attempts ADD COLUMN operator_detail jsonb;

-- An attempt whose outcome was fenced out (a newer lease holds the delivery): the request may have reached
-- the receiver, so it is recorded here, marked, and never written into the delivery's own history.
CREATE TABLE fenced_attempts (
  id                    text PRIMARY KEY,
  delivery_id           bigint NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  endpoint_id           text NOT NULL,
  attempt_number        integer NOT NULL,
  worker_id             text NOT NULL,
  fencing_token         bigint NOT NULL,
  response_status_code  integer,
  error_kind            text,
  duration_ms           integer NOT NULL,
  operator_detail       jsonb,
  created_at            timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX fenced_attempts_delivery ON fenced_attempts (delivery_id, id);

-- Down Migration
DROP TABLE fenced_attempts;
ALTER TABLE attempts DROP COLUMN operator_detail;
ALTER TABLE attempts DROP COLUMN response_body_key_id;
ALTER TABLE attempts ALTER COLUMN response_body TYPE text USING convert_from(response_body, 'UTF8');
