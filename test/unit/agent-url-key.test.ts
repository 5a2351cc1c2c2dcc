// Whether two agent urls name the same resource (src/config/agent-url-key.ts): the one
// comparison a reload's moved check and a resume token's seller url both use (hostile trial 36, F5).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentUrlKey, sameAgentUrl } from '../../src/config/agent-url-key.js';

describe('agentUrlKey / sameAgentUrl', () => {
  it('is the href for a url with nothing to normalize', () => {
    for (const href of ['https://seller.example/adcp/mcp', 'http://127.0.0.1:3001/mcp?account=one&region=eu', 'https://[::1]:8443/']) {
      assert.equal(agentUrlKey(new URL(href)), href);
    }
  });

  it('equates the spellings the URL parser already writes one way: host case, a default port, dot segments, IDNA', () => {
    const same: Array<[string, string]> = [
      ['HTTPS://Seller.Example:443/adcp/mcp', 'https://seller.example/adcp/mcp'],
      ['http://seller.example:80/a/./b/../mcp', 'http://seller.example/a/mcp'],
      ['http://seller.example/a/%2e%2E/mcp', 'http://seller.example/mcp'],
      ['https://bücher.example/mcp', 'https://xn--bcher-kva.example/mcp'],
      ['http://0x7f.1/mcp', 'http://127.0.0.1/mcp'],
    ];
    for (const [a, b] of same) assert.ok(sameAgentUrl(a, b), `${a} = ${b}`);
  });

  it('the reported failure: an empty query is no query', () => {
    assert.ok(sameAgentUrl('https://seller.example/mcp?', 'https://seller.example/mcp'));
    assert.equal(agentUrlKey('https://seller.example/mcp?'), 'https://seller.example/mcp');
    assert.equal(agentUrlKey(new URL('https://seller.example/mcp?')), 'https://seller.example/mcp');
  });

  it('decodes percent-encoded unreserved characters (RFC 3986 §6.2.2.2), in path, query and userinfo, either hex case', () => {
    assert.ok(sameAgentUrl('https://seller.example/m%63p', 'https://seller.example/mcp'));
    assert.ok(sameAgentUrl('https://seller.example/m%43p', 'https://seller.example/mCp'));
    assert.equal(agentUrlKey('https://seller.example/%41%5a%61%7A%30%39%2D%2E%5F%7E%7e'), 'https://seller.example/AZaz09-._~~');
    assert.equal(agentUrlKey('https://seller.example/mcp?account=%6F%6Ee&x=%7e'), 'https://seller.example/mcp?account=one&x=~');
    assert.equal(agentUrlKey('https://%75ser:p%61ss@seller.example/mcp'), 'https://user:pass@seller.example/mcp');
    assert.equal(agentUrlKey('https://:p%61ss@seller.example/mcp'), 'https://:pass@seller.example/mcp');
  });

  it('upper-cases the hex of every other percent-encoding (RFC 3986 §6.2.2.1), and leaves a `%` without two hex digits', () => {
    assert.equal(agentUrlKey('https://seller.example/a%2fb?q=%c3%a9%2b%20'), 'https://seller.example/a%2Fb?q=%C3%A9%2B%20');
    assert.ok(sameAgentUrl('https://seller.example/a%2fb', 'https://seller.example/a%2Fb'));
    assert.equal(agentUrlKey('https://seller.example/a%zz%4?b=%'), 'https://seller.example/a%zz%4?b=%');
  });

  it('ignores a fragment (never sent to a server)', () => {
    assert.ok(sameAgentUrl('https://seller.example/mcp#x', 'https://seller.example/mcp'));
    assert.ok(sameAgentUrl('https://seller.example/mcp?#x', 'https://seller.example/mcp'));
    assert.ok(sameAgentUrl('https://seller.example/mcp?a=1#x', 'https://seller.example/mcp?a=1'));
  });

  it('keeps apart what a server may read differently', () => {
    const base = 'https://seller.example/adcp/mcp';
    for (const other of [
      'http://seller.example/adcp/mcp',
      'https://seller.example:8443/adcp/mcp',
      'https://other.example/adcp/mcp',
      'https://seller.example./adcp/mcp',
      'https://seller.example/adcp/mcp/',
      'https://seller.example/adcp/MCP',
      'https://seller.example/adcp%2Fmcp', // an encoded slash is no path separator
      'https://seller.example/adcp/mcp?a',
      'https://seller.example/adcp/mcp?%20',
      'https://user@seller.example/adcp/mcp',
    ]) {
      assert.equal(sameAgentUrl(base, other), false, other);
    }
    assert.equal(sameAgentUrl('https://s.example/mcp?a=1&b=2', 'https://s.example/mcp?b=2&a=1'), false, 'parameter order');
    assert.equal(sameAgentUrl('https://s.example/mcp?q=a+b', 'https://s.example/mcp?q=a%20b'), false, '+ and %20');
    assert.equal(sameAgentUrl('https://s.example/mcp?q=%26', 'https://s.example/mcp?q=&'), false, 'an encoded reserved character');
  });

  it('throws a TypeError for a string that is no URL', () => {
    assert.throws(() => agentUrlKey('not a url'), TypeError);
  });
});
