/**
 * Regression (a re-read of today's changes, Low: peek shapes): RpcPeek gained `idWritten` (a
 * long string id's bytes, request/peek.ts decide) and `cancelledRequestId` (a scanned
 * cancellation's `params.requestId`), each written only on its own path, so single-message
 * peeks had three hidden classes (a small request's, a long string id's, a cancellation's),
 * the frozen NO_BODY a fourth, and every read of `exchange.rpc.*` (and isRequestId) saw them
 * all. Now every single-message peek writes every member, in one order (undefined when
 * absent), and NO_BODY is not frozen: one hidden class. A batch's peek keeps its own (its three
 * batch members are written only on it, by design: a single request's costs nothing).
 *
 * How: V8's `%HaveSameMap` (natives syntax, enabled for this process before the probe
 * function is compiled). No timing is measured.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { NO_BODY, peekJsonRpc, PEEK_SCAN_MIN_BYTES } from '../../src/request/peek.js';
import { rpcOfResumedStream } from '../../src/routing/resumed-stream.js';
import type { RpcPeek } from '../../src/exchange.js';
import type { ResumeState } from '../../src/resume/token.js';

setFlagsFromString('--allow-natives-syntax');
// V8 natives syntax, compiled after the flag is set.
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

const BOUNDS = { maxDepth: 64, maxNodes: 100_000 };

function peekOf(body: string): RpcPeek {
  const result = peekJsonRpc(Buffer.from(body), BOUNDS);
  assert.ok(result.ok, body.slice(0, 80));
  return result.peek;
}

const pad = 'p'.repeat(PEEK_SCAN_MIN_BYTES);

test('every single-message peek has one hidden class', () => {
  const small = peekOf('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products"}}');
  const scanned = peekOf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_products","arguments":{"a":"${pad}"}}}`);
  const longId = peekOf(`{"jsonrpc":"2.0","id":"${'k'.repeat(2048)}","method":"tools/call","params":{"name":"get_products"}}`);
  const cancellation = peekOf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"${pad}"}}`);
  const smallCancellation = peekOf('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}');
  const hostResponse = peekOf('{"jsonrpc":"2.0","id":3,"result":{}}');
  const base = { upstreamId: 'u', agent: 'a', rpcId: 9, method: 'tools/call', toolName: 'get_products' } as unknown as ResumeState;
  const resumed = rpcOfResumedStream(base);
  const resumedNotification = rpcOfResumedStream({ ...base, answersNoRequest: true } as ResumeState);
  // The paths taken are the ones meant: the long id's bytes and the cancellation's requestId kept.
  assert.equal(longId.idWritten?.length, 2048);
  assert.equal(cancellation.kind, 'notification');
  const named = cancellation.cancelledRequestId;
  assert.ok(named);
  assert.equal(named.bytes.toString('latin1', named.range[0], named.range[1]), '7');
  assert.equal(resumed.kind, 'request');
  assert.equal(resumedNotification.kind, 'notification');
  const peeks = { small, scanned, longId, cancellation, smallCancellation, hostResponse, NO_BODY, resumed, resumedNotification };
  // Reads of every member, as the gateway's (a map left behind by a field's generalization is migrated on access).
  for (const p of Object.values(peeks)) void [p.kind, p.id, p.idText, p.method, p.toolName, p.taskId, p.idWritten, p.cancelledRequestId];
  const differ = Object.entries(peeks).filter(([, p]) => !haveSameMap(small, p)).map(([name]) => name);
  assert.deepEqual(differ, []);
  assert.deepEqual(Object.keys(NO_BODY), ['kind', 'id', 'idText', 'method', 'toolName', 'taskId', 'idWritten', 'cancelledRequestId']);
});

test('a batch keeps its own hidden class (by design)', () => {
  const batch = peekOf('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
  assert.equal(batch.kind, 'batch');
  assert.equal(haveSameMap(batch, NO_BODY), false);
});
