/**
 * Request ids as a host writes them, and the seller's answer to them written the same way or
 * another, for the differential fuzz (test/unit/rewrite-paths-differential-fuzz.test.ts):
 * - {@link ID_GROUPS}: spellings of one id value each (`7`, `7.0`, `7e0`, `70e-1`; `"7"`,
 *   `"\u0037"`; `9007199254740993` and `9007199254740992`, one double apart; `-0` and `0`...);
 * - {@link hostRpc}: the exchange's `rpc` as the gateway reads the host's request, by the
 *   peek itself (request/peek.ts peekJsonRpc: `id`, and `idText` when JSON.stringify writes
 *   the number otherwise: mcp/id-text.ts);
 * - {@link sameIdValue}: the reference for "the response carries the request's id" (JSON-RPC
 *   2.0 §5: "the same as the value of the id member in the Request Object"): strings as
 *   strings, numbers by their exact decimal value (BigInt: no double), written here, not the
 *   gateway's json-numbers.ts;
 * - {@link mintedErrorId}: the id the gateway writes in the error it mints for the request
 *   (errors/local-reply.ts answerWithLocalError, run on a fake reply), as a JSON body or as
 *   the SSE error event.
 */
import type { FastifyReply } from 'fastify';
import { parseConfig } from '../../src/config/load.js';
import { resolveCallLimits } from '../../src/config/resolve.js';
import type { AgentConfig } from '../../src/config/types.js';
import { createExchange, type RpcPeek } from '../../src/exchange.js';
import { answerWithLocalError, type LocalErrorInput } from '../../src/errors/local-reply.js';
import { writtenIdRanges } from '../../src/mcp/written-ids.js';
import { peekJsonRpc } from '../../src/request/peek.js';

/** Spellings of one id value each (JSON texts), the first the one JSON.stringify writes where there is one. */
export const ID_GROUPS: readonly (readonly string[])[] = [
  ['7', '7.0', '7e0', '70e-1', '0.7e1', '7E+0', '7.000'],
  ['"7"', '"\\u0037"'],
  ['8', '8.0', '0.8E1'],
  ['-1', '-1.0', '-10e-1'],
  ['0', '-0', '0.0', '-0.0', '0e5'],
  ['9007199254740993', '9007199254740993.0', '9.007199254740993e15'],
  ['9007199254740992', '9.007199254740992e15'],
  ['12345678901234567890', '1.234567890123456789e19'],
  ['7.00000000000000000001'],
  ['1e-400', '10e-401'],
  ['"a\\"b"', '"a\\u0022b"'],
  ['"x/y"', '"x\\/y"'],
];

/** The exchange's `rpc` for a host request of `method` whose id the host wrote `idText`, as the peek reads it. */
export function hostRpc(idText: string, method: string): RpcPeek {
  const params = method === 'tools/call' ? '{"name":"get_products","arguments":{}}' : method === 'tasks/result' || method === 'tasks/get' ? '{"taskId":"t1"}' : '{}';
  const peek = peekJsonRpc(Buffer.from(`{"jsonrpc":"2.0","id":${idText},"method":"${method}","params":${params}}`));
  if (!peek.ok || peek.peek.kind !== 'request') throw new Error(`the peek refused the host id ${idText}: ${JSON.stringify(peek)}`);
  return peek.peek;
}

/** An id's value for comparison: a string's own text, or a number's exact decimal (`-` digits `e` exponent, no trailing zero; `0` for any zero). */
function idValue(text: string): string {
  if (text.startsWith('"')) return `s:${JSON.parse(text) as string}`;
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (m === null) return `?:${text}`;
  let digits = BigInt(m[2]! + (m[3] ?? ''));
  let exp = BigInt(m[4] ?? '0') - BigInt((m[3] ?? '').length);
  if (digits === 0n) return 'n:0';
  while (digits % 10n === 0n) {
    digits /= 10n;
    exp += 1n;
  }
  return `n:${m[1]}${digits}e${exp}`;
}

/** Whether the id texts `a` and `b` (JSON values) are the same id value (JSON-RPC 2.0 §5): same string, or same number exactly. */
export function sameIdValue(a: string, b: string): boolean {
  return idValue(a) === idValue(b);
}

/** The bytes of the `id` of the JSON message `bytes` (its top-level object), or undefined when it has none. */
export function writtenId(bytes: Buffer): string | undefined {
  const range = writtenIdRanges(bytes)[0];
  return range && bytes.toString('utf8', range[0], range[1]);
}

let agent: AgentConfig | undefined;
/** {@link mintedErrorId}'s answers by request and form ('' for none). */
const minted = new Map<string, string>();

/**
 * The id written in the error the gateway mints for the request `rpc` (its reason
 * `input.reason`), as a JSON body (`sse` false) or as the error event ending a request's SSE
 * stream (`sse` true). Cached per request and form: it depends on nothing else.
 */
export function mintedErrorId(rpc: RpcPeek, protocolVersion: string, input: LocalErrorInput, sse: boolean): string | undefined {
  const key = `${rpc.id === null ? 'null' : typeof rpc.id}:${String(Object.is(rpc.id, -0) ? '-0' : rpc.id)}:${rpc.idText}:${rpc.method}:${protocolVersion}:${input.reason}:${sse}`;
  const known = minted.get(key);
  if (known !== undefined) return known === '' ? undefined : known;
  agent ??= parseConfig(['log_level: silent', 'agents:', '  s:', '    url: http://127.0.0.1:9/mcp', ''].join('\n'), { env: {}, source: 'written-request-ids' }).agents.get('s')!;
  const exchange = createExchange({
    agent,
    rpc,
    limits: resolveCallLimits(agent, rpc.toolName, undefined),
    protocolVersion,
    normalize: true,
    stream: { startedAt: Date.now(), usedBytes: 0, resumeFrom: undefined },
    mintEventId: () => undefined,
  });
  exchange.sseStarted = sse;
  const writes: string[] = [];
  const raw = { headersSent: false, writableEnded: false, destroyed: false, write: (s: string) => void writes.push(s), end: () => {} };
  const reply = { raw, sent: false, getHeaders: () => ({}), removeHeader() {}, code: () => reply, header: () => reply, headers: () => reply, send: (b: string) => void writes.push(b) };
  answerWithLocalError(exchange, reply as unknown as FastifyReply, input);
  if (writes.length !== 1) throw new Error(`minted ${writes.length} writes for ${key}`);
  // An SSE error event: `event: message`, one `data:` line, the blank line.
  const text = sse ? /^data: (.*)$/m.exec(writes[0]!)![1]! : writes[0]!;
  const id = writtenId(Buffer.from(text));
  minted.set(key, id ?? '');
  return id;
}
