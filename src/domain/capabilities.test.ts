import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allows, portalCapabilities, SVIX_CAPABILITIES } from './capabilities.ts';

test(
  'portal capabilities: absent = every Svix capability, readOnly = ViewBase, duplicates folded and ordered as ' +
    'Svix lists them',
  () => {
    assert.deepEqual(portalCapabilities(null, false), { ok: true, capabilities: SVIX_CAPABILITIES });
    assert.deepEqual(portalCapabilities(null, true), { ok: true, capabilities: ['ViewBase'] });
    assert.deepEqual(portalCapabilities(['ManageEndpoint', 'ViewBase', 'ManageEndpoint'], false), {
      ok: true,
      capabilities: ['ViewBase', 'ManageEndpoint'],
    });
    assert.deepEqual(portalCapabilities(['ViewBase'], true), { ok: true, capabilities: ['ViewBase'] });
  },
);

test(
  'portal capabilities refuse an unknown name (by index), a set without ViewBase, readOnly with a writing ' +
    "capability, and Tidings' ManageMessages",
  () => {
    const problem = (requested: string[], readOnly = false) => {
      const v = portalCapabilities(requested, readOnly);
      return v.ok ? null : [v.problem.field, v.problem.index];
    };
    assert.deepEqual(problem(['ViewBase', 'Everything']), ['capabilities', 1]);
    assert.deepEqual(problem(['ViewBase', 'ManageMessages']), ['capabilities', 1], 'a portal token never publishes');
    assert.deepEqual(problem([]), ['capabilities', null]);
    assert.deepEqual(problem(['ManageEndpoint']), ['capabilities', null]);
    assert.deepEqual(problem(['ViewBase', 'ViewEndpointSecret'], true), ['readOnly', null]);
  },
);

test('allows: one of the listed capabilities suffices; an empty list lets any credential through', () => {
  assert.equal(allows(new Set(['ViewBase']), []), true);
  assert.equal(allows(new Set(['ViewBase']), ['ViewEndpointSecret', 'ManageEndpoint']), false);
  assert.equal(allows(new Set(['ViewBase', 'ManageEndpoint']), ['ViewEndpointSecret', 'ManageEndpoint']), true);
});
