/**
 * Regression (review 35, F4, Low, docs): src/resume/token.ts said "neither the seller nor the
 * client can reset the count with a reconnect", but a host resuming again from an early token
 * T1 (or opening several resumes from T1 at once) gets up to the limit minus T1's count on each:
 * routing/resumed-stream.ts resumedCount starts each resume from T1's own count, and the tail ledger
 * notes only a stream's last token. It is the host's choice and a stateless token cannot see
 * it; the docs now say exactly what holds (the bound along one chain of resumes, each from the
 * newest token taken) and what does not (a resume forked from an older token), in token.ts and
 * in docs/configuration.md where the cumulative bound across resumes is described.
 *
 * Input: a raw seller on 127.0.0.1 answering the POST with one small event `id: e1`, then a
 * drop, and every resume (GET) with one 6,000-byte event `id: e2`, then a drop; the agent's
 * `max_response_bytes` 10000. The host resumes from T1 (e1's token), then from T2 (the resumed
 * stream's token), then from T1 again.
 * Expected (the behaviour, unchanged): both resumes from T1 get the 6,000-byte event whole;
 * the one from T2 ends `sse_cumulative`, limit_bytes 10000. The two docs say so.
 * Before the fix: 3 of the 11 assertions failed (the three doc checks; 2 of 3 tests).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startRawSeller } from '../support/raw-seller.js';
import { RESUME_YAML, startObservedGateway } from '../support/hostile-seller.js';
import { agentsYaml } from '../helpers/gateway.js';
import { rawPost, sseIds, sseMessages, toolCall } from '../helpers/raw.js';
import { useSellerAndGateway } from '../helpers/stack.js';
import { REPO } from '../helpers/repo.js';
import { TEST_TIMEOUT_MS } from '../helpers/timeout.js';

const progress = (n: number, message: string): string => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: n, message } });
/** The resumes' event: 6,000 bytes of data, within 10000 from T1's count, over it from T2's. */
const BULK = progress(2, 'x'.repeat(6_000 - progress(2, '').length));

const stack = useSellerAndGateway(
  () =>
    startRawSeller((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(req.method === 'GET' ? `id: e2\ndata: ${BULK}\n\n` : `id: e1\ndata: ${progress(1, '')}\n\n`);
      setTimeout(() => res.destroy(), 20);
    }),
  (seller) => startObservedGateway(agentsYaml({ s: { url: seller.url, max_response_bytes: 10000 } }, RESUME_YAML)),
);

async function resume(token: string): Promise<string> {
  const res = await fetch(stack.gateway.agentUrl('s'), { headers: { accept: 'text/event-stream', 'last-event-id': token } });
  assert.equal(res.status, 200);
  return res.text();
}

/** A doc comment's text, its ` * ` prefixes dropped and its lines joined by spaces. */
const flat = (comment: string): string => comment.replace(/^\s*\/?\*+\/?\s?/gm, '').replace(/\s+/g, ' ');

describe('older-token-resume-restarts-count-undocumented', { timeout: TEST_TIMEOUT_MS }, () => {
  test('resumes forked from an older token each start from its count; the chain from the newest trips the bound', async () => {
    assert.equal(BULK.length, 6_000);
    const [t1] = sseIds((await rawPost(stack.gateway.agentUrl('s'), toolCall(1, 'get_products'))).text());
    assert.ok(t1 !== undefined);
    const first = await resume(t1);
    assert.deepEqual(sseMessages(first), [JSON.parse(BULK)]);
    const [t2] = sseIds(first);
    const details = (sseMessages(await resume(t2!)).at(-1) as { result?: { structuredContent?: { adcp_error?: { details?: Record<string, unknown> } } } }).result?.structuredContent?.adcp_error?.details;
    assert.deepEqual([details?.reason, details?.limit_bytes], ['sse_cumulative', 10000]);
    assert.deepEqual(sseMessages(await resume(t1)), [JSON.parse(BULK)], 'again from T1: the same 6,000 bytes');
  });

  test('src/resume/token.ts says what holds and what does not (was: "neither the seller nor the client can reset the count")', () => {
    const src = readFileSync(join(REPO, 'src/resume/token.ts'), 'utf8');
    const moduleDoc = flat(src.slice(0, src.indexOf('*/')));
    assert.equal(moduleDoc.includes('neither the seller nor the client can reset the count with a reconnect'), false);
    assert.ok(
      moduleDoc.includes(
        'A host resuming again and again from an early token T1, or opening several resumes from T1 at once, gets up to the limit minus T1\'s count on each',
      ),
      moduleDoc,
    );
  });

  test('docs/configuration.md says it where the cumulative bound across resumes is described', () => {
    const doc = readFileSync(join(REPO, 'docs/configuration.md'), 'utf8').replace(/\s+/g, ' ');
    assert.ok(
      doc.includes(
        'It does not hold across resumes a host forks from one token: a host that resumes one token T1 several times at once, or again from T1 after a resume from it went further, can receive up to the bound minus T1\'s count once per such resume',
      ),
    );
  });
});
