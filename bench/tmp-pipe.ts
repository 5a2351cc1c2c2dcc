import { JsonScanner } from '../src/mcp/json-scan.js';
import { spliceLegacyLift } from '../src/response/lift-splice.js';
import { spliceDedupe } from '../src/response/dedupe-splice.js';
import { mayRewrite, rewriteScanned } from '../src/response/scanned-message.js';
import { sizedMessage } from './cases.js';
import type { Exchange } from '../src/exchange.js';
const LIMITS = { max_response_bytes: 1 << 24, max_json_depth: 64, max_json_nodes: 100_000 };
const ex = { rpc: { kind: 'request', id: 1, method: 'tools/call', toolName: undefined }, protocolVersion: '2025-06-18', normalize: true, limits: LIMITS, actions: [] } as unknown as Exchange;
function run(body: Buffer): number {
  const scanner = new JsonScanner({ maxDepth: 64, maxNodes: 100_000 });
  scanner.feed(body);
  const scan = scanner.end();
  if (!scan.ok) throw new Error('scan');
  if (!mayRewrite(ex, scan)) return body.length;
  const lifted = process.env.OLD ? undefined : scan.members?.structuredContent !== undefined ? spliceDedupe(ex, body, scan) : spliceLegacyLift(ex, body, scan);
  if (lifted) return lifted.length;
  const message = JSON.parse(body.toString('utf8'));
  return rewriteScanned(ex, message, body, scan).out.length;
}
const size = Number(process.argv[2] ?? 1024);
for (const v of ['a', 'b', 'c'] as const) {
  const body = Buffer.from(sizedMessage(v, size));
  const n = Math.max(20, Math.floor(2e7 / size));
  for (let i = 0; i < n; i++) run(body);
  const best: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t = process.hrtime.bigint();
    let _s = 0;
    for (let i = 0; i < n; i++) _s += run(body);
    best.push(Number(process.hrtime.bigint() - t) / n / 1000);
  }
  best.sort((x, y) => x - y);
  console.log(v, size, 'us/op', best[0]!.toFixed(2), best[2]!.toFixed(2), 'out', run(body));
}
