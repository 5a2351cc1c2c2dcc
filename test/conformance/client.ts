/**
 * The client command `npm run conformance` hands to `@modelcontextprotocol/conformance`:
 *
 *   node --import tsx test/conformance/client.ts --mode direct|gateway <server-url>
 *
 * The conformance runner starts a test server for one client scenario, runs this command with
 * the server's URL appended and `MCP_CONFORMANCE_SCENARIO` set, then grades what the server
 * saw. `direct` connects the MCP SDK 1.x client straight to that URL; `gateway` first starts
 * the real gateway (buildApp, on 127.0.0.1, port 0) with one agent pointing at the URL, and
 * connects the same client through it. Same client, same steps: any difference in the
 * grade is the gateway's.
 *
 * Runs on the product's Node (>= 20.18.1); only the conformance runner itself needs Node 22.
 * Exits 0 when the scenario's steps completed, 1 otherwise (the runner records both).
 */
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';

type Step = (client: Client) => Promise<void>;

/** What the SDK client does in each client scenario (the scenario's server grades it). */
const SCENARIOS: Record<string, Step> = {
  initialize: async (client) => {
    await client.listTools();
  },
  tools_call: async (client) => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'add_numbers') ?? tools[0];
    if (!tool) throw new Error('tools_call: the server lists no tool');
    await client.callTool({ name: tool.name, arguments: { a: 5, b: 3 } }, CallToolResultSchema);
  },
  'elicitation-sep1034-client-defaults': async (client) => {
    const { tools } = await client.listTools();
    for (const tool of tools) await client.callTool({ name: tool.name, arguments: {} });
  },
  'sse-retry': async (client) => {
    const { tools } = await client.listTools();
    // The server closes the tool's stream after a priming event; the client must wait `retry:`
    // and resume with Last-Event-ID. Through the gateway that id is a gateway resume token.
    for (const tool of tools) await client.callTool({ name: tool.name, arguments: {} }, CallToolResultSchema, { timeout: 15_000 });
  },
};

/** A scenario this client does not know yet: connect and list, so a new scenario still runs. */
const FALLBACK: Step = async (client) => {
  await client.listTools();
};

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ options: { mode: { type: 'string', default: 'direct' } }, allowPositionals: true });
  const serverUrl = positionals.at(-1);
  if (!serverUrl) throw new Error('usage: client.ts --mode direct|gateway <server-url>');
  if (values.mode !== 'direct' && values.mode !== 'gateway') throw new Error(`unknown --mode ${values.mode}`);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  const step = SCENARIOS[scenario] ?? FALLBACK;

  // Loopback only: the runner's servers listen on every interface and name themselves "localhost".
  const upstream = new URL(serverUrl);
  if (upstream.hostname === 'localhost') upstream.hostname = '127.0.0.1';

  let target = upstream;
  let closeGateway = async (): Promise<void> => {};
  if (values.mode === 'gateway') {
    const yaml = ['log_level: silent', 'agents:', '  conformance:', `    url: ${JSON.stringify(upstream.href)}`, ''].join('\n');
    const app = await buildApp(parseConfig(yaml, { env: {}, source: 'conformance.yaml' }), { logger: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    target = new URL(`http://127.0.0.1:${port}/agents/conformance/mcp`);
    closeGateway = async () => {
      const closed = app.close();
      app.server.closeAllConnections();
      await closed;
    };
  }

  const client = new Client(
    { name: 'adcp-buyer-gateway-conformance', version: '1.0.0' },
    { capabilities: { elicitation: { form: { applyDefaults: true } } } },
  );
  // Accept every form elicitation with no values of its own: the SDK fills in the schema's defaults.
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: {} }));
  try {
    await client.connect(new StreamableHTTPClientTransport(target));
    await step(client);
  } finally {
    await client.close().catch(() => undefined);
    await closeGateway();
  }
}

const watchdog = setTimeout(() => {
  process.stderr.write('conformance client: gave up after 25 s\n');
  process.exit(1);
}, 25_000);
watchdog.unref();

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`conformance client failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
