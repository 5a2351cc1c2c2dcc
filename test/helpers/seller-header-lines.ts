/**
 * A seller on 127.0.0.1 that records the header lines of each request as it received them
 * (`name: value` from node:http's rawHeaders: spelling and order kept), behind the real
 * gateway: the stack of the regressions on which of a host's headers reach a seller. It answers
 * a GET with 405 (`allow: POST`) and anything else with 200 and a `tools/call` result (one text
 * item, `ok`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { toolResponse } from '../support/raw-seller.js';
import { startGateway } from './gateway.js';
import { useSellerAndGateway } from './stack.js';

interface HeaderLinesSeller {
  readonly url: string;
  readonly port: number;
  /** Each request's header lines, in the order the requests came. */
  readonly seen: string[][];
  close(): Promise<void>;
}

async function startHeaderLinesSeller(): Promise<HeaderLinesSeller> {
  const seen: string[][] = [];
  const server = http.createServer((req, res) => {
    const lines: string[] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    seen.push(lines);
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET') res.writeHead(405, { allow: 'POST' }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(1, { content: [{ type: 'text', text: 'ok' }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = async (): Promise<void> => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { url: `http://127.0.0.1:${port}/mcp`, port, seen, close };
}

/**
 * Starts (in `before`, closed in `after`: see useSellerAndGateway) that seller and, in front of
 * it, the gateway of the YAML `gatewayYaml(sellerUrl)`. Gives the gateway's `port`, the
 * seller's `sellerPort`, every request's lines (`seen`) and `lastSeen()`: the last request's,
 * the gateway's `Via` pseudonym replaced by `adcp-gw-<pseudonym>`.
 */
export function useHeaderLinesSeller(gatewayYaml: (sellerUrl: string) => string) {
  const stack = useSellerAndGateway(startHeaderLinesSeller, (seller) => startGateway(gatewayYaml(seller.url)));
  return {
    get port(): number {
      return Number(new URL(stack.gateway.baseUrl).port);
    },
    get sellerPort(): number {
      return stack.seller.port;
    },
    get seen(): readonly string[][] {
      return stack.seller.seen;
    },
    lastSeen: (): string[] => stack.seller.seen.at(-1)!.map((line) => line.replace(/adcp-gw-[0-9a-f]{16}/, 'adcp-gw-<pseudonym>')),
  };
}
