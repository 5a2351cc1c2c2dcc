/**
 * Resumption across gateway processes (ARCHITECTURE §4: "any replica with the same secret
 * resumes any stream"): a tools/call stream starts on a gateway running as its own process
 * (src/main.ts), drops after an event id; the host resumes on a second gateway that shares
 * only the resume secret, and the cumulative count carried by the token still holds.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startGatewayProcess } from '../helpers/process.js';
import { rawPost, sseMessages, toolCall, sseIds } from '../helpers/raw.js';
import { startRawSeller, type RawSeller, type SeenRequest } from '../support/raw-seller.js';

const SECRET = 'two-process-resume-secret-0123456789abcdef';
const LIMIT = 8192;
let seller: RawSeller;
let dir: string;
let other: RunningGateway;
let answer: (req: SeenRequest, res: ServerResponse) => void = () => {};

const agentYaml = () => `agents:\n  s:\n    url: ${seller.url}\n    max_response_bytes: ${LIMIT}\n`;
const progress = (id: string, pad: number) =>
  `id: ${id}\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"message":"${'p'.repeat(pad)}"}}\n\n`;

before(async () => {
  seller = await startRawSeller((req, res) => answer(req, res));
  dir = await mkdtemp(join(tmpdir(), 'gw-two-'));
  other = await startGateway(`log_level: silent\nresume:\n  secret: ${SECRET}\n${agentYaml()}`);
});
after(async () => {
  await other.close();
  await seller.close();
  await rm(dir, { recursive: true, force: true });
});

test('a stream started on one gateway process resumes on another; the count holds', { timeout: 60_000 }, async () => {
  const file = join(dir, 'a.yaml');
  await writeFile(file, `listen: { host: 127.0.0.1, port: 0 }\nlog_level: info\nresume:\n  secret: ${SECRET}\n${agentYaml()}`);
  const gw = await startGatewayProcess(file);
  try {
    const address = gw.address;

    const first = progress('s1', 3000);
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(first);
      setTimeout(() => res.destroy(), 30);
    };
    const opened = await rawPost(`${address}/agents/s/mcp`, toolCall(7, 'list_products'), { 'mcp-protocol-version': '2025-11-25' });
    const token = sseIds(opened.text())[0]!;
    assert.match(token, /^agw1\./);

    let seen: string | undefined;
    const replay = progress('s2', 3000);
    answer = (req, res) => {
      seen = req.headers['last-event-id'] as string;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(replay + replay); // 3 KB already counted + 6 KB > 8 KiB: the second replayed event crosses
    };
    const resumed = await fetch(other.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token, 'mcp-protocol-version': '2025-11-25' } });
    const msgs = sseMessages(await resumed.text()) as Array<{ id?: number; result?: { structuredContent: { adcp_error: { details: { reason: string; limit_bytes: number } } } } }>;
    assert.equal(seen, 's1');
    assert.equal(msgs.length, 2, 'one replayed event fits, then the error');
    assert.equal(msgs[1]!.id, 7);
    assert.equal(msgs[1]!.result!.structuredContent.adcp_error.details.reason, 'sse_cumulative');
    assert.equal(msgs[1]!.result!.structuredContent.adcp_error.details.limit_bytes, LIMIT);
    assert.ok(Buffer.byteLength(first) + 2 * Buffer.byteLength(replay) > LIMIT && Buffer.byteLength(first) + Buffer.byteLength(replay) <= LIMIT);
  } finally {
    gw.child.kill('SIGTERM');
  }
});
