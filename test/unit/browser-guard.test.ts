// src/request/browser-guard.ts: which Origin and Host headers the MCP endpoint serves (DNS
// rebinding; test/regressions/dns-rebinding-host-get-uses-credentials.test.ts and
// conformance-dns-rebinding-localhost-origin.test.ts run them through the gateway).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  absoluteFormAuthority,
  hostNameEnd,
  isHostAllowed,
  isJsonContentType,
  isListedHost,
  isLoopbackListenHost,
  isLoopbackOrigin,
  isOtherSiteFetch,
  ownListenHosts,
} from '../../src/request/browser-guard.js';
import { fieldLineCount } from '../../src/request/field-lines.js';

describe('hostNameEnd', () => {
  test('the end of the name, or -1 for a malformed authority', () => {
    const cases: [string, number][] = [
      ['127.0.0.1:8787', 9],
      ['localhost', 9],
      ['[::1]:1', 5],
      ['[::1]', 5],
      ['gw:65535', 2],
      ['gw:65536', -1],
      ['gw:', -1],
      ['gw:123456', -1],
      ['gw:8a', -1],
      ['[::1', -1],
      ['[::1]x', -1],
      ['', 0],
    ];
    for (const [value, end] of cases) assert.equal(hostNameEnd(value, 0), end, value);
  });
});

describe('isLoopbackOrigin', () => {
  test('http or https, localhost / 127.0.0.1 / [::1], any port or none, nothing after', () => {
    for (const origin of ['http://localhost:6274', 'http://localhost', 'https://127.0.0.1', 'http://127.0.0.1:8787', 'http://[::1]:3000', 'https://[::1]', 'http://LocalHost:1']) {
      assert.equal(isLoopbackOrigin(origin), true, origin);
    }
  });

  test('anything else', () => {
    for (const origin of [
      'null',
      'http://localhost.evil.example',
      'http://localhost.',
      'http://evil.localhost',
      'http://127.0.0.2',
      'http://127.0.0.1.nip.io',
      'http://[0:0:0:0:0:0:0:1]',
      'http://localhost/',
      'http://localhost:',
      'http://localhost:99999',
      'http://user@localhost',
      'ftp://localhost',
      'HTTP://localhost',
      'localhost',
      '',
    ]) {
      assert.equal(isLoopbackOrigin(origin), false, origin);
    }
  });
});

describe('isLoopbackListenHost', () => {
  test('loopback: localhost names, 127.0.0.0/8, ::1 (any spelling), ::ffff:127.x', () => {
    for (const host of ['127.0.0.1', '127.1', '127.9.8.7', 'localhost', 'LocalHost', 'localhost.', 'gw.localhost', '::1', '0:0:0:0:0:0:0:1', '[::1]', '::ffff:127.0.0.1']) {
      assert.equal(isLoopbackListenHost(host), true, host);
    }
  });

  test('not loopback: wildcards, other addresses and names', () => {
    for (const host of ['0.0.0.0', '::', '10.1.2.3', '128.0.0.1', 'gateway', 'localhost.example', '::ffff:7f:1', '::ffff:10.0.0.1', 'fe80::1%eth0']) {
      assert.equal(isLoopbackListenHost(host), false, host);
    }
  });
});

describe('isListedHost', () => {
  const listed = ['gw.internal', 'gw.example:8787', '[fd00::1]', '10.0.0.5:8787'];
  test('a name without a port matches any port; with a port, that port only; case-insensitive', () => {
    const cases: [string, boolean][] = [
      ['gw.internal', true],
      ['gw.internal:1', true],
      ['GW.INTERNAL:8787', true],
      ['gw.example:8787', true],
      ['gw.example', false],
      ['gw.example:8788', false],
      ['[fd00::1]:9', true],
      ['10.0.0.5:8787', true],
      ['10.0.0.5', false],
      ['x.gw.internal', false],
      ['gw.internalx', false],
      ['gw.internal:x', false],
      ['gw.internal/', false],
    ];
    for (const [host, expected] of cases) assert.equal(isListedHost(host, listed), expected, host);
  });
});

describe('isHostAllowed', () => {
  test('no Host: served', () => {
    assert.equal(isHostAllowed(undefined, true, []), true);
  });

  test('loopback listener: loopback names and listed hosts only', () => {
    for (const host of ['127.0.0.1:8787', 'localhost', 'LOCALHOST:1', '[::1]:8787', '127.0.0.1']) assert.equal(isHostAllowed(host, true, []), true, host);
    for (const host of ['rebind.evil.example:8790', '', 'localhost.evil.example', '127.0.0.1.nip.io', '127.0.0.2', 'localhost:0x1f']) assert.equal(isHostAllowed(host, true, []), false, host);
    assert.equal(isHostAllowed('gw:1', true, ['gw']), true);
  });

  test('other listener: unchecked while allowed_hosts is empty, else loopback and listed only', () => {
    assert.equal(isHostAllowed('rebind.evil.example:8790', false, []), true);
    assert.equal(isHostAllowed('rebind.evil.example:8790', false, ['gateway']), false);
    assert.equal(isHostAllowed('gateway:8787', false, ['gateway']), true);
    assert.equal(isHostAllowed('localhost:8787', false, ['gateway']), true);
  });
});

// A new user's trial (2026-12-03, finding 5): listen.host 127.0.0.2 checked Host and refused its own address.
describe('ownListenHosts', () => {
  test('a loopback listen address the loopback names do not cover is served as Host', () => {
    assert.deepEqual(ownListenHosts('127.0.0.2'), ['127.0.0.2']);
    assert.deepEqual(ownListenHosts('My.Localhost.'), ['my.localhost']);
    assert.deepEqual(ownListenHosts('::ffff:127.0.0.3'), ['[::ffff:127.0.0.3]']);
    assert.equal(isHostAllowed('127.0.0.2:8787', true, [], ownListenHosts('127.0.0.2')), true);
    assert.equal(isHostAllowed('127.0.0.3:8787', true, [], ownListenHosts('127.0.0.2')), false);
  });

  test('none for the loopback names themselves and for a listener that is not loopback', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1', '[::1]', '0.0.0.0', '10.0.0.5', 'gateway']) assert.deepEqual(ownListenHosts(host), [], host);
  });
});

// A new user's trial (2026-12-03, finding 4): two Host fields (request/field-lines.ts), and an absolute-form target.
describe('fieldLineCount', () => {
  test('counts the field lines of one name in any case', () => {
    assert.equal(fieldLineCount(['Host', 'localhost', 'Content-Type', 'x'], 'host'), 1);
    assert.equal(fieldLineCount(['host', 'a', 'HOST', 'b', 'Hosts', 'c'], 'host'), 2);
    assert.equal(fieldLineCount([], 'host'), 0);
    assert.equal(fieldLineCount(['Mcp-Session-Id', 'a', 'mcp_session_id', 'b', 'MCP-SESSION-ID', 'c'], 'mcp-session-id'), 2);
  });
});

describe('absoluteFormAuthority', () => {
  test('the authority of an absolute-form target, undefined for the origin form', () => {
    assert.equal(absoluteFormAuthority('/agents/a/mcp'), undefined);
    assert.equal(absoluteFormAuthority('http://evil.example/agents/a/mcp'), 'evil.example');
    assert.equal(absoluteFormAuthority('http://127.0.0.1:8787/agents/a/mcp?x=1'), '127.0.0.1:8787');
    assert.equal(absoluteFormAuthority('https://[::1]:9'), '[::1]:9');
    assert.equal(absoluteFormAuthority('*'), undefined);
  });
});

describe('isOtherSiteFetch', () => {
  test('cross-site and same-site are another site; same-origin, none, absent and anything else are not', () => {
    for (const site of ['cross-site', 'same-site']) assert.equal(isOtherSiteFetch(site), true, site);
    for (const site of ['same-origin', 'none', undefined, '', 'Cross-Site', ['cross-site']]) assert.equal(isOtherSiteFetch(site), false, JSON.stringify(site));
  });
});

describe('isJsonContentType', () => {
  test('application/json in any letter case, alone or before parameters', () => {
    for (const v of ['application/json', 'APPLICATION/JSON', 'application/json;charset=utf-8', 'application/json; charset=utf-8', 'application/json ; x=1', 'application/json\t;x', 'application/json ', 'application/json \t']) {
      assert.equal(isJsonContentType(v), true, v);
    }
  });
  test("what a page sends without a preflight, or no JSON label, is not", () => {
    for (const v of [undefined, '', 'text/plain', 'text/plain; x=application/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/json-rpc', 'application/jso', ' application/json', 'application/json,text/plain', 'application/*+json']) {
      assert.equal(isJsonContentType(v), false, JSON.stringify(v));
    }
  });
  // Hostile trial 35, leftover 2: no media type (Fastify refuses it), so no JSON label either.
  test('application/json followed by anything but parameters is not', () => {
    for (const v of ['application/json garbage', 'application/json x;charset=utf-8', 'application/json\tx', 'application/json ,text/plain']) {
      assert.equal(isJsonContentType(v), false, JSON.stringify(v));
    }
  });
});
