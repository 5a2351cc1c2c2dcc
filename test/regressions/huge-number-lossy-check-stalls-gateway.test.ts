/**
 * A follow-up of hostile trial 56 (event-loop stalls from huge JSON numbers, which delay every
 * agent's answers): json-numbers.ts `hasLossyNumber`, the check that keeps a rewrite from
 * losing digits, read a seller's number token that needs the exact check (rule 3: a fraction
 * or exponent near or past the double range's ends, or 16-17 significant digits) by copying
 * the whole token and converting it with `Number` twice, however long it was: a text item
 * `{"n":1e-<4M digits>}` cost ~0.1-0.2 s of the event loop in that check alone (it runs twice
 * on a text the gateway may lift), and its scan read each character through a state machine
 * (4-8 ns a character; now a loop per part of a token, 2-3 ns).
 *
 * Now a long token is read spelled short (its significant digits and exponent, the same exact
 * value: test/unit/json-numbers-differential.test.ts checks every answer against the version
 * before), and a value past the double range (`Infinity`) or below half its smallest (0), or
 * an exponent `Number` does not read (NaN), is lossy without converting.
 *
 * Asserted without timing (test/helpers/long-number-work.ts): no `Number` of a string over 64
 * characters and no copy of a number text out of a Buffer, for tokens of 100,000 digits, as a
 * string, a Buffer and a Uint8Array; and through the gateway, a seller's text holding one goes
 * to the host as the seller wrote it (not lifted: lossy), with none of that work.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { hasLossyNumber } from '../../src/mcp/json-numbers.js';
import { startRawSeller, toolResponse, type RawSeller } from '../support/raw-seller.js';
import { agentsYaml, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost, toolCall } from '../helpers/raw.js';
import { countLongNumberWork } from '../helpers/long-number-work.js';
import { TEST_TIMEOUT_MS, withTimeout } from '../helpers/timeout.js';

const N = 100_000;
const NINES = '9'.repeat(N);
const ZEROS = '0'.repeat(N);

/** Tokens of ~100,000 characters that reach the exact check, and the answer (the same before and after). */
const TOKENS: readonly [string, boolean][] = [
  [`1e-${NINES}`, true], // 0
  [`1e${NINES}`, true], // Infinity, written null
  [`-0.${ZEROS}1`, true], // -0
  [`1234567890123456.${ZEROS}`, false], // 16 digits, exact
  [`1234567890123456.${ZEROS}7`, true], // 17 significant digits, one the double has not
  [`5${ZEROS}e-${N + 324}`, false], // 5e-324, the smallest double
  [`-2.4703282292062328${ZEROS}e-324`, true], // read as -5e-324
  [`1e-0${ZEROS}5`, false], // 1e-5, its exponent with 100,000 leading zeros
];

test('hasLossyNumber on 100,000-character tokens that need the exact check: the same answers, no long conversion or copy', async () => {
  for (const [token, lossy] of TOKENS) {
    const text = `{"a":[1,2.5],"n":${token},"s":"x"}`;
    const utf8 = Buffer.from(text);
    const view = new Uint8Array(utf8.length + 2).fill(0x31);
    view.set(utf8, 1);
    const work = await countLongNumberWork(() => [hasLossyNumber(text), hasLossyNumber(utf8), hasLossyNumber(view.subarray(1, 1 + utf8.length))]);
    assert.deepEqual(work.result, [lossy, lossy, lossy], token.slice(0, 40));
    assert.deepEqual({ reads: work.reads, copies: work.copies }, { reads: 0, copies: 0 }, token.slice(0, 40));
  }
});

let seller: RawSeller;
let gateway: RunningGateway;
const ANSWER_TEXT = `{"n":1e-${NINES}}`;
before(async () => {
  seller = await startRawSeller((req, res) => {
    const { id } = JSON.parse(req.body.toString('utf8')) as { id: number };
    res.writeHead(200, { 'content-type': 'application/json' }).end(toolResponse(id, { content: [{ type: 'text', text: ANSWER_TEXT }] }));
  });
  gateway = await startGateway(agentsYaml({ s: seller.url }, ['log_level: silent']));
});
after(async () => {
  await gateway?.close();
  await seller?.close();
});

test('through the gateway: a text {"n":1e-<100,000 nines>} goes out as the seller wrote it, with no long conversion or copy', { timeout: TEST_TIMEOUT_MS }, async () => {
  const work = await countLongNumberWork(() =>
    withTimeout(rawPost(gateway.agentUrl('s'), toolCall(7, 'get_products'), { 'mcp-protocol-version': '2025-06-18' }), undefined, 'the call'),
  );
  assert.equal(work.result.status, 200);
  assert.equal(work.result.text(), toolResponse(7, { content: [{ type: 'text', text: ANSWER_TEXT }] }));
  assert.deepEqual({ reads: work.reads, copies: work.copies }, { reads: 0, copies: 0 });
});
