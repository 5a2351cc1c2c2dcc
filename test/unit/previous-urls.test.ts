// The urls an agent had before the reloads that moved it (src/resume/previous-urls.ts; hostile trial 36, F2).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { MAX_PREVIOUS_URLS, PreviousAgentUrls } from '../../src/resume/previous-urls.js';
import type { GatewayConfig } from '../../src/config/types.js';
import { AgentReload } from '../../src/routing/agent-reload.js';

const config = (agents: Record<string, string>): GatewayConfig =>
  parseConfig(['agents:', ...Object.entries(agents).flatMap(([name, url]) => [`  ${name}:`, `    url: "${url}"`]), ''].join('\n'), { env: {} });

const hrefs = (urls: readonly URL[]): string[] => urls.map((u) => u.href);

describe('PreviousAgentUrls', () => {
  it('remembers the url a reload moved an agent from, newest first; none for an agent never moved', () => {
    const p = new PreviousAgentUrls();
    const c1 = config({ acme: 'http://a.example/mcp', kept: 'http://k.example/mcp' });
    const c2 = config({ acme: 'http://b.example/mcp', kept: 'http://k.example/mcp' });
    const c3 = config({ acme: 'http://c.example/mcp', kept: 'http://k.example/mcp' });
    p.update(new AgentReload(c1, c2));
    assert.deepEqual(hrefs(p.of('acme')), ['http://a.example/mcp']);
    p.update(new AgentReload(c2, c3));
    assert.deepEqual(hrefs(p.of('acme')), ['http://b.example/mcp', 'http://a.example/mcp']);
    assert.deepEqual(p.of('kept'), []);
    assert.deepEqual(p.of('unknown'), []);
  });

  it('a respelling is no move (config/agent-url-key.ts), and the url in force is never a previous one', () => {
    const p = new PreviousAgentUrls();
    const a = config({ acme: 'http://a.example/mcp' });
    p.update(new AgentReload(a, config({ acme: 'http://a.example/mcp?' })));
    p.update(new AgentReload(config({ acme: 'http://a.example/mcp?' }), config({ acme: 'http://a.example/m%63p' })));
    assert.deepEqual(p.of('acme'), []);
    const b = config({ acme: 'http://b.example/mcp' });
    p.update(new AgentReload(a, b));
    p.update(new AgentReload(b, config({ acme: 'http://a.example/m%63p' }))); // back where it was, respelled
    assert.deepEqual(hrefs(p.of('acme')), ['http://b.example/mcp']);
  });

  it(`keeps at most ${MAX_PREVIOUS_URLS} per agent, each once`, () => {
    const p = new PreviousAgentUrls();
    let was = config({ acme: 'http://s0.example/mcp' });
    for (let i = 1; i <= 6; i++) {
      const next = config({ acme: `http://s${i}.example/mcp` });
      p.update(new AgentReload(was, next));
      was = next;
    }
    assert.deepEqual(hrefs(p.of('acme')), ['http://s5.example/mcp', 'http://s4.example/mcp', 'http://s3.example/mcp', 'http://s2.example/mcp']);
    const back = config({ acme: 'http://s4.example/mcp' });
    p.update(new AgentReload(was, back));
    assert.deepEqual(hrefs(p.of('acme')), ['http://s6.example/mcp', 'http://s5.example/mcp', 'http://s3.example/mcp', 'http://s2.example/mcp']);
  });

  it('forgets an agent the config no longer has: added back, it starts with none', () => {
    const p = new PreviousAgentUrls();
    const a = config({ acme: 'http://a.example/mcp', other: 'http://o.example/mcp' });
    const b = config({ acme: 'http://b.example/mcp', other: 'http://o.example/mcp' });
    p.update(new AgentReload(a, b));
    const without = config({ other: 'http://o.example/mcp' });
    p.update(new AgentReload(b, without));
    assert.deepEqual(p.of('acme'), []);
    p.update(new AgentReload(without, config({ acme: 'http://c.example/mcp', other: 'http://o.example/mcp' })));
    assert.deepEqual(p.of('acme'), []);
  });
});
