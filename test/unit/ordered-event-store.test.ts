/**
 * The test seller's event store replays a stream's events after the resumed id, in the order
 * they were stored, even when all were stored in the same millisecond (the SDK's example
 * store sorted `<stream>_<ms>_<random>` ids, so it did not: see
 * test/support/sdk1/ordered-event-store.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { OrderedEventStore } from '../support/sdk1/ordered-event-store.js';

const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { n } });

test('replays the events stored after the resumed id, in order, for its stream only', async () => {
  const store = new OrderedEventStore();
  const ids: string[] = [];
  ids.push(await store.storeEvent('a', {} as JSONRPCMessage)); // a priming event
  for (let n = 0; n < 200; n++) {
    ids.push(await store.storeEvent('a', note(n)));
    await store.storeEvent('b', note(-n));
  }
  const sent: [string, JSONRPCMessage][] = [];
  const stream = await store.replayEventsAfter(ids[100]!, { send: async (id, message) => void sent.push([id, message]) });
  assert.equal(stream, 'a');
  assert.deepEqual(
    sent.map(([id]) => id),
    ids.slice(101),
  );
  assert.deepEqual(sent[0]![1], note(100));
  assert.equal(await store.replayEventsAfter('a_99999', { send: async () => assert.fail('nothing to replay') }), '');
});
