/** isProxyFamilyName (src/request/proxy-name.ts): `proxy`, `proxy-*`, `proxy_*`, and nothing else. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isStrippedRequestHeader } from '../../src/request/headers.js';
import { isProxyFamilyName } from '../../src/request/proxy-name.js';
import { isStrippedResponseHeader } from '../../src/response/headers.js';

test('the family, and names that only start alike', () => {
  const names = ['proxy', 'proxy-', 'proxy_', 'proxy-authorization', 'proxy_authorization', 'proxy-status', 'proxyish', 'proxy2', 'proxy.x', 'xproxy', 'prox', 'p', ''];
  const family = [true, true, true, true, true, true, false, false, false, false, false, false, false];
  assert.deepEqual(names.map(isProxyFamilyName), family);
  assert.deepEqual(names.map(isStrippedRequestHeader), family);
  assert.deepEqual(names.map(isStrippedResponseHeader), family);
});
