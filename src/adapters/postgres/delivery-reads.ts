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

/**
 * One page of the deliveries of the endpoint whose id is the SQL expression `endpoint`, in the order of an
 * indexed key. `part(from, where)` is the SELECT of one part: `FROM ${from}` (alias `d`), `WHERE ${where}`
 * and its own conditions, ending in its own `ORDER BY` and `LIMIT`. The parts' rows are then ordered by
 * `order` (an output column with its direction) and cut at `limit` (a parameter such as `$5`). The part not
 * leased reads one page in order by `deliveries_endpoint_message`; the leased part (at most what the
 * dispatchers' windows hold) is read whole by `deliveries_endpoint_leased` and sorted, behind a fence
 * (`OFFSET 0`) so that the planner does not walk the messages in order looking for leased ones. Without the
 * parts' own `LIMIT` the planner reads every delivery of the endpoint to sort them. `parts` leaves out a part
 * that the caller's state filter rules out (at least one is read).
 */
export const endpointDeliveriesPage = (
  endpoint: string,
  part: (from: string, where: string) => string,
  order: string,
  limit: string,
  parts: { readonly notLeased: boolean; readonly leased: boolean } = { notLeased: true, leased: true },
): string => {
  const selects = [
    ...(parts.notLeased || !parts.leased
      ? [part('deliveries d', `d.endpoint_id = ${endpoint} AND d.state <> 'leased'`)]
      : []),
    ...(parts.leased
      ? [part(`(SELECT * FROM deliveries WHERE endpoint_id = ${endpoint} AND state = 'leased' OFFSET 0) d`, 'TRUE')]
      : []),
  ];
  return `SELECT * FROM (${selects.map((q) => `(${q})`).join(' UNION ALL ')}) page ORDER BY ${order} LIMIT ${limit}`;
};

/** The predicate of `deliveries_app_state` on alias `d`: a settled delivery (succeeded, dead, skipped, canceled). */
export const SETTLED = `d.state NOT IN ('pending', 'leased')`;
