/**
 * An in-memory MCP event store (SDK 1.x `EventStore`) for the test seller that replays a
 * stream's events in the order they were stored.
 *
 * Why not the SDK's example `InMemoryEventStore`: its event ids are
 * `<stream>_<Date.now()>_<random>` and it replays by sorting the ids as strings, so two events
 * stored in the same millisecond replay in random order. The priming event (stored as `{}`,
 * written with empty data) then sometimes came after the progress notification whose id the
 * client resumed from, and was replayed as `event: message` / `data: {}`: no JSON-RPC message,
 * which the gateway refuses on a request's stream (`upstream_not_mcp`, docs/errors.md) while
 * the SDK client drops it. Reported failure: test/support/sdk1/revision-suite.ts "the SDK
 * client resumes a POST stream the seller closed" failed ~1 run in 10 under load
 * (session 19's CI runs), with the gateway's error in place of the report.
 *
 * Ids are `<stream>_<sequence>`, the sequence counting every stored event. Like the example
 * store, it has no `getStreamIdForEventId` (the SDK then skips its 409 check on a resume).
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export class OrderedEventStore implements EventStore {
  private readonly events: { id: string; streamId: string; message: JSONRPCMessage }[] = [];
  private readonly index = new Map<string, number>();

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}_${this.events.length}`;
    this.index.set(id, this.events.length);
    this.events.push({ id, streamId, message });
    return Promise.resolve(id);
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const at = this.index.get(lastEventId);
    if (at === undefined) return '';
    const streamId = this.events[at]!.streamId;
    for (const event of this.events.slice(at + 1)) {
      if (event.streamId === streamId) await send(event.id, event.message);
    }
    return streamId;
  }
}
