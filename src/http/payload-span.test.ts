import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../domain/errors.ts';
import { parseTree } from 'jsonc-parser';
import { payloadBytes } from './payload-span.ts';

test(
  'payloadBytes returns the exact bytes of the payload value: whitespace, key order, number forms, escapes, ' +
    'non-ASCII',
  () => {
    const payload = '{ "b" : 1e2,\n "a":[ 12345678901234567890 , -0.0 ], "s":"\\u00e9é\\"}" }';
    assert.equal(payloadBytes(`{"eventType":"x","payload":${payload},"eventId":"e"}`).toString('utf8'), payload);
    assert.deepEqual(payloadBytes(`{"payload":${payload}}`), Buffer.from(payload, 'utf8'));
  },
);

test('payloadBytes handles any JSON value and nested "payload" keys do not count', () => {
  assert.equal(payloadBytes('{"payload":"text"}').toString(), '"text"');
  assert.equal(payloadBytes('{"payload":null}').toString(), 'null');
  assert.equal(payloadBytes('{"payload":  [ 1 ]  }').toString(), '[ 1 ]');
  assert.equal(payloadBytes('{"x":{"payload":1},"payload":2}').toString(), '2');
  assert.equal(payloadBytes('{"pay\\u006coad":{"k":1}}').toString(), '{"k":1}');
});

test('payloadBytes refuses a missing or duplicated payload key with 422 on body.payload', () => {
  for (const body of ['{"eventType":"x"}', '{"payload":1,"payload":2}', '[1]', '{"x":{"payload":1}}']) {
    assert.throws(
      () => payloadBytes(body),
      (e: unknown) =>
        e instanceof AppError &&
        e.code === 'validation' &&
        JSON.stringify(e.detail).includes('"loc":["body","payload"]'),
      body,
    );
  }
});

test('payloadBytes accepts any nesting depth (the scan is iterative, as JSON.parse is)', () => {
  const deep = '['.repeat(200_000) + ']'.repeat(200_000);
  assert.equal(payloadBytes(`{"payload":${deep},"eventType":"x"}`).toString(), deep);
});

test('payloadBytes finds the same span as a full JSON tree parser on 2,000 random bodies', () => {
  // A seeded generator: the same bodies every run, so a failure names a body that fails again.
  let seed = 20_261_205;
  const rand = (n: number): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const ws = (): string => [' ', '\t', '\n', '\r', '', ''][rand(6)]!.repeat(rand(3));
  const pieces = ['a', '"', '\\', '/', 'é', '😀', '}', ']', '{', '[', ',', ':', ' '];
  const str = (): string => {
    let s = '';
    for (let i = rand(6); i > 0; i -= 1) s += pieces[rand(pieces.length)];
    return JSON.stringify(s).replace(/a/g, () => (rand(4) === 0 ? '\\u0061' : 'a'));
  };
  const value = (depth: number): string => {
    const kind = depth > 4 ? rand(4) : rand(6);
    if (kind === 0) return str();
    if (kind === 1) return ['0', '-1.5e+3', '12345678901234567890', '-0.0'][rand(4)]!;
    if (kind === 2) return ['true', 'false', 'null'][rand(3)]!;
    if (kind === 3) return ws() + '[' + ws() + ']';
    if (kind === 4)
      return '[' + Array.from({ length: 1 + rand(3) }, () => ws() + value(depth + 1) + ws()).join(',') + ']';
    return (
      '{' +
      Array.from(
        { length: rand(4) },
        () => `${ws()}${rand(5) === 0 ? '"payload"' : str()}${ws()}:${ws()}${value(depth + 1)}${ws()}`,
      ).join(',') +
      '}'
    );
  };
  let checked = 0;
  for (let n = 0; n < 2_000; n += 1) {
    const members = Array.from({ length: rand(4) }, () => `${ws()}${str()}${ws()}:${ws()}${value(1)}${ws()}`);
    const payloads = rand(8) === 0 ? 2 : rand(8) === 0 ? 0 : 1;
    for (let p = 0; p < payloads; p += 1)
      members.splice(
        rand(members.length + 1),
        0,
        `${ws()}${rand(3) === 0 ? '"pay\\u006coad"' : '"payload"'}${ws()}:${ws()}${value(1)}${ws()}`,
      );
    const body = `${ws()}{${members.join(',')}}${ws()}`;
    JSON.parse(body);
    const root = parseTree(body);
    const found = (root?.children ?? []).filter((m) => m.children?.[0]?.value === 'payload');
    if (found.length !== 1) {
      assert.throws(() => payloadBytes(body), AppError, body);
      continue;
    }
    const v = found[0]!.children![1]!;
    assert.equal(payloadBytes(body).toString('utf8'), body.slice(v.offset, v.offset + v.length), body);
    checked += 1;
  }
  assert.ok(checked > 1_000, `only ${checked} bodies had exactly one payload`);
});
