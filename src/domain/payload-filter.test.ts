import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  filterIssues,
  filterMatches,
  filterPayload,
  type FilterLimits,
  type FilterSubject,
  type Json,
  type PayloadFilter,
} from './payload-filter.ts';

const LIMITS: FilterLimits = { maxBytes: 4096, maxDepth: 8, maxNodes: 64, maxPath: 8 };

const ORDER: FilterSubject = {
  eventType: 'invoice.paid',
  eventId: 'evt_1',
  channels: ['eu', 'vip'],
  tags: null,
  payload: {
    amount: 250,
    currency: 'usd',
    status: 'paid',
    note: null,
    customer: { tier: 'premium', address: { country: 'FR' } },
    lines: [3, 7, 11],
    labels: ['urgent', 'b2b'],
    items: [{ sku: 'a' }],
  },
};
const RAW: FilterSubject = { eventType: 'invoice.paid', payload: undefined };

/** filter → whether it matches ORDER, whether it matches RAW (a raw message: no payload). */
const TABLE: readonly (readonly [PayloadFilter, boolean, boolean])[] = [
  [{}, true, true],
  // Fields of the message: the event type, the channels (an array: one element is enough), the eventId.
  [{ eventType: 'invoice.paid' }, true, true],
  [{ eventType: 'invoice.void' }, false, false],
  [{ eventType: { $in: ['invoice.void', 'invoice.paid'] } }, true, true],
  [{ channels: 'vip' }, true, false],
  [{ channels: { $nin: ['us'] } }, true, true],
  [{ channels: { $exists: false } }, false, true],
  [{ eventId: 'evt_1' }, true, false],
  [{ tags: { $exists: true } }, false, false],
  // Equality, nested paths.
  [{ payload: { status: 'paid' } }, true, false],
  [{ payload: { status: 'paid', currency: 'eur' } }, false, false],
  [{ payload: { customer: { tier: 'premium' } } }, true, false],
  [{ payload: { customer: { address: { country: 'FR' } } } }, true, false],
  [{ payload: { customer: { address: { country: { $eq: 'DE' } } } } }, false, false],
  [{ payload: { note: null } }, true, false],
  [{ payload: { missing: null } }, false, false],
  [{ payload: { amount: '250' } }, false, false],
  [{ payload: { amount: { $neq: 100 } } }, true, true],
  [{ payload: { missing: { $neq: 1 } } }, true, true],
  // Comparisons: numbers only; a string or a missing field never compares.
  [{ payload: { amount: { $gt: 100 } } }, true, false],
  [{ payload: { amount: { $gte: 250, $lt: 500 } } }, true, false],
  [{ payload: { amount: { $lte: 249.5 } } }, false, false],
  [{ payload: { status: { $gt: 0 } } }, false, false],
  [{ payload: { missing: { $lt: 10 } } }, false, false],
  [{ payload: { lines: { $gt: 10 } } }, true, false],
  [{ payload: { lines: { $gt: 11 } } }, false, false],
  // in / nin, and arrays that contain the value.
  [{ payload: { status: { $in: ['pending', 'paid'] } } }, true, false],
  [{ payload: { status: { $nin: ['cancelled', 'refunded'] } } }, true, true],
  [{ payload: { labels: 'urgent' } }, true, false],
  [{ payload: { labels: { $in: ['x', 'b2b'] } } }, true, false],
  [{ payload: { labels: { $nin: ['b2b'] } } }, false, true],
  // exists: a null value exists; a path does not walk into arrays.
  [{ payload: { note: { $exists: true } } }, true, false],
  [{ payload: { missing: { $exists: false } } }, true, true],
  [{ payload: { items: { sku: 'a' } } }, false, false],
  [{ payload: { customer: { tier: { address: { $exists: true } } } } }, false, false],
  // and / or / not, at the root and under a field.
  [{ $and: [{ eventType: 'invoice.paid' }, { payload: { amount: { $gte: 100 } } }] }, true, false],
  [{ $or: [{ payload: { status: 'void' } }, { channels: 'eu' }] }, true, false],
  [{ $or: [{ payload: { status: 'void' } }, { eventType: 'x' }] }, false, false],
  [{ $not: { payload: { status: 'paid' } } }, false, true],
  [{ payload: { status: { $not: { $in: ['cancelled', 'refunded'] } } } }, true, true],
  [{ payload: { $or: [{ currency: 'eur' }, { amount: { $gt: 200 } }] } }, true, false],
  [{ payload: { customer: { $not: { tier: 'basic' } } } }, true, true],
];

test('a table of filters against a JSON message and a raw one', () => {
  for (const [filter, order, raw] of TABLE) {
    assert.deepEqual(filterIssues(filter, LIMITS), [], JSON.stringify(filter));
    assert.equal(filterMatches(filter, ORDER), order, `${JSON.stringify(filter)} on the order`);
    assert.equal(filterMatches(filter, RAW), raw, `${JSON.stringify(filter)} on a raw message`);
  }
});

/** A malformed filter → the loc and a word of the message of its first issue. */
const MALFORMED: readonly (readonly [unknown, readonly (string | number)[], string])[] = [
  [[], [], 'expected an object'],
  ['x', [], 'expected an object'],
  [{ data: { status: 'paid' } }, ['data'], 'unknown field'],
  [
    { $and: [{ eventType: 'a' }, { payload: { amount: { $gt: '5' } } }] },
    ['$and', 1, 'payload', 'amount', '$gt'],
    'a number',
  ],
  [{ $or: [] }, ['$or'], 'non-empty list'],
  [{ $or: {} }, ['$or'], 'non-empty list'],
  [{ payload: { status: { $regex: 'p.*' } } }, ['payload', 'status', '$regex'], 'unknown operator'],
  [{ payload: { status: { $exist: true } } }, ['payload', 'status', '$exist'], '$exists'],
  [{ payload: { status: { $exists: 'yes' } } }, ['payload', 'status', '$exists'], 'true or false'],
  [{ payload: { status: ['a', 'b'] } }, ['payload', 'status'], '$in'],
  [{ payload: { status: { $in: [{ a: 1 }] } } }, ['payload', 'status', '$in', 0], 'string, number'],
  [{ payload: { status: { $eq: [1] } } }, ['payload', 'status', '$eq'], 'string, number'],
  [{ payload: { amount: { $gt: Number.NaN } } }, ['payload', 'amount', '$gt'], 'a number'],
  [{ $eq: 1 }, ['$eq'], 'under a field'],
  [{ $and: ['x'] }, ['$and', 0], 'expected an object'],
  [
    { payload: { a: { b: { c: { d: { e: { f: { g: { h: 1 } } } } } } } } },
    ['payload', 'a', 'b', 'c', 'd', 'e', 'f', 'g'],
    'MAX_DEPTH',
  ],
];

test('a malformed filter is refused naming the part that is wrong', () => {
  for (const [filter, loc, word] of MALFORMED) {
    const issues = filterIssues(filter, LIMITS);
    assert.ok(issues.length > 0, JSON.stringify(filter));
    assert.deepEqual(issues[0]!.loc, loc, JSON.stringify(filter));
    assert.ok(issues[0]!.msg.includes(word), `${JSON.stringify(filter)}: ${issues[0]!.msg}`);
  }
});

test('the bounds: bytes, nodes, depth and path length, each a named setting', () => {
  const deep = (n: number): Json => (n === 0 ? 1 : { f: deep(n - 1) });
  const tight: FilterLimits = { maxBytes: 100, maxDepth: 4, maxNodes: 5, maxPath: 3 };
  const big = { payload: { s: 'x'.repeat(200) } };
  assert.match(filterIssues(big, tight)[0]!.msg, /TIDINGS_FILTER_MAX_BYTES/);
  // Multi-byte characters count in bytes, not in characters.
  assert.match(filterIssues({ payload: { s: 'é'.repeat(45) } }, tight)[0]!.msg, /TIDINGS_FILTER_MAX_BYTES/);
  assert.deepEqual(filterIssues({ payload: { s: 'é'.repeat(30) } }, tight), []);
  const many = { payload: { status: { $in: [1, 2, 3, 4, 5] } } };
  assert.deepEqual(filterIssues(many, tight)[0]!.loc, []);
  assert.match(filterIssues(many, tight)[0]!.msg, /TIDINGS_FILTER_MAX_NODES/);
  assert.deepEqual(filterIssues({ payload: { status: { $in: [1, 2] } } }, tight), []);
  assert.deepEqual(filterIssues({ payload: deep(2) }, tight), []);
  assert.match(filterIssues({ payload: deep(3) }, tight)[0]!.msg, /TIDINGS_FILTER_MAX_PATH/);
  assert.match(filterIssues({ $and: [{ $and: [{ $and: [{ eventType: 'a' }] }] }] }, tight)[0]!.msg, /MAX_DEPTH/);
  // The issues are bounded too.
  const wrong = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}`, 1]));
  assert.equal(filterIssues(wrong, LIMITS).length, 20);
});

test('the payload a filter sees: parsed JSON, nothing for a raw body or a body that is not JSON', () => {
  const bytes = new TextEncoder().encode('{"a":[1,{"b":true}]}');
  assert.deepEqual(filterPayload(bytes, null), { a: [1, { b: true }] });
  assert.equal(filterPayload(bytes, 'text/plain'), undefined);
  assert.equal(filterPayload(new TextEncoder().encode('{"a":'), null), undefined);
});

test('a filter nested 10,000 levels deep gets one depth issue, not a call stack error', () => {
  let list: Json = [1];
  for (let i = 0; i < 10_000; i++) list = [list];
  const issues = filterIssues({ payload: { a: { $in: [list] } } }, LIMITS);
  assert.ok(issues.length > 0);
  assert.ok(
    issues.some((i) => /TIDINGS_FILTER_MAX_DEPTH|string, number/.test(i.msg)),
    JSON.stringify(issues),
  );
  let object: Json = { x: 1 };
  for (let i = 0; i < 10_000; i++) object = { x: object };
  assert.match(filterIssues({ payload: object }, LIMITS)[0]!.msg, /TIDINGS_FILTER_MAX_DEPTH/);
});

test('an integer JSON does not carry exactly is refused wherever a number may stand, naming the part', () => {
  const beyond = 2 ** 53; // 9007199254740993 parses to this
  const cases: readonly (readonly [unknown, readonly (string | number)[]])[] = [
    [{ payload: { id: beyond } }, ['payload', 'id']],
    [{ payload: { id: { $eq: -beyond } } }, ['payload', 'id', '$eq']],
    [{ payload: { id: { $neq: 1e300 } } }, ['payload', 'id', '$neq']],
    [{ payload: { id: { $gt: beyond } } }, ['payload', 'id', '$gt']],
    [{ payload: { id: { $in: [1, beyond] } } }, ['payload', 'id', '$in', 1]],
    [{ $or: [{ payload: { id: { $nin: [beyond] } } }] }, ['$or', 0, 'payload', 'id', '$nin', 0]],
  ];
  for (const [filter, loc] of cases) {
    const issues = filterIssues(filter, LIMITS);
    assert.deepEqual(issues[0]?.loc, loc, JSON.stringify(filter));
    assert.match(issues[0]!.msg, /9007199254740991/);
  }
  const safe = Number.MAX_SAFE_INTEGER;
  assert.deepEqual(filterIssues({ payload: { id: safe, b: { $in: [-safe, 0.5, 1e-300] }, c: 1.5 } }, LIMITS), []);
});

test('comparisons and field names mixed in one object are refused; $and, $or and $not go beside either', () => {
  for (const mixed of [
    { $gt: 1, b: 2 },
    { b: 2, $eq: 'x' },
    { $exists: true, b: { $in: [1] } },
  ]) {
    const issues = filterIssues({ payload: { a: mixed } }, LIMITS);
    assert.deepEqual(issues[0]?.loc, ['payload', 'a'], JSON.stringify(mixed));
    assert.match(issues[0]!.msg, /operators and field names cannot be mixed/);
  }
  assert.deepEqual(filterIssues({ payload: { a: { $or: [{ b: 1 }], c: 2 } } }, LIMITS), []);
  assert.deepEqual(filterIssues({ payload: { a: { $not: { b: 1 } }, $and: [{ c: 1 }] } }, LIMITS), []);
  assert.deepEqual(filterIssues({ eventType: 'x', $or: [{ channels: 'eu' }] }, LIMITS), []);
});
