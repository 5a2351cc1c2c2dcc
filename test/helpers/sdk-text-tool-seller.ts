/**
 * A real MCP TypeScript SDK 1.x seller (`McpServer` + `StreamableHTTPServerTransport`,
 * stateless: a new server and transport per HTTP request) whose tools each answer a legacy
 * text-only result, `{"content":[{"type":"text","text":<the tool's text>}, …]}` (one item per
 * text): the answers the gateway lifts. `/sse` answers a POST with a `text/event-stream` (`enableJsonResponse: false`,
 * the SDK's default), `/json` with an `application/json` body.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface SdkTextToolSeller {
  /** `http://127.0.0.1:<port>/sse`, or `/json` when `json`. */
  url(json: boolean): string;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

/** Starts the seller on 127.0.0.1; `texts`: each tool's name and the text (or texts, in order) it answers. */
export async function startSdkTextToolSeller(texts: Readonly<Record<string, string | readonly string[]>>): Promise<SdkTextToolSeller> {
  const http: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const server = new McpServer({ name: 'sdk-text-tool-seller', version: '1.0.0' });
      for (const [name, text] of Object.entries(texts)) {
        server.registerTool(name, { description: `Answers a legacy text result (${name}).` }, async () => ({
          content: (typeof text === 'string' ? [text] : text).map((t) => ({ type: 'text' as const, text: t })),
        }));
      }
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: req.url === '/json' });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: (json) => `http://127.0.0.1:${port}/${json ? 'json' : 'sse'}`,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
