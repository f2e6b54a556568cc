/**
 * Row sets of `deliveries` read through the partial indexes that serve them (migration
 * 1764000009700_settled-delivery-indexes.sql, docs/adr/0016-hot-path-cost.md, decision 17). Neither
 * `deliveries_app_state` nor `deliveries_endpoint_message` holds every delivery, so a read of all of an
 * endpoint's or an application's deliveries is the union of the parts that each index holds. Each part's
 * condition is written as the index's predicate, so the planner can use the index whatever the parameters.
 */

/**
 * Every delivery of the endpoint whose id is the SQL expression `endpoint` (a parameter such as `$1`, or a
 * column): the ones not leased from `deliveries_endpoint_message`, the leased ones (at most what the
 * dispatchers' windows hold) from `deliveries_endpoint_leased`. A FROM item: `FROM ${endpointDeliveries('$1')} d`.
 * The rows carry every column of `deliveries`.
 */
export const endpointDeliveries = (endpoint: string): string =>
  `(SELECT * FROM deliveries WHERE endpoint_id = ${endpoint} AND state <> 'leased'
    UNION ALL SELECT * FROM deliveries WHERE endpoint_id = ${endpoint} AND state = 'leased')`;

/** The predicate of `deliveries_app_state` on alias `d`: a settled delivery (succeeded, dead, skipped, canceled). */
export const SETTLED = `d.state NOT IN ('pending', 'leased')`;
