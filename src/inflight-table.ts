/**
 * A string-keyed table of entries that live as long as one request or stream: set when it
 * starts, deleted when it ends, thousands of times a second. The gateway's in-flight
 * registries use it (app.ts: the open SSE streams, the open exchanges) instead of a `Map`.
 * (The upstream requests' hooks no longer need a table: each request's headers carry them,
 * routing/dispatcher.ts `withUpstreamHooks`.)
 *
 * Why not a `Map` (issue 5, "the gateway gets ~2x slower on small requests after large
 * answers"): V8 stores a `Map` or `Set` in an ordered hash table and rebuilds it every few
 * deletions under this churn. The table it leaves keeps its entries and a pointer to its
 * successor (for live iterators). Once one table of the chain is in the old generation (it
 * outlived two scavenges, as it does while a few multi-MiB answers hold their entries), every
 * later table and every entry they held stay reachable for the scavenger until the next
 * mark-compact: each small request's whole object graph (its hooks close over the exchange,
 * the reply, the handler) was copied, then promoted.
 *
 * Measured on Node 20.18 (V8 11.3), 10,000 1 KiB requests after 60 answers of 4 MiB:
 * - with a `Map`: ~2 MB survived each scavenge (nearly all of it promoted at the next one),
 *   scavenges took 5-9 ms instead of ~1, and gateway CPU per 1 KiB request went from
 *   ~195 to 240-350 µs (the pass-through, with no such table, stayed at ~150);
 * - with this table: ~50 KB survived each scavenge, as before any large answer.
 * test/unit/inflight-table.test.ts shows the difference with nothing but the table.
 *
 * A dictionary-mode object (`Object.create(null)`) is an unordered hash table: when V8
 * rebuilds it, the old one is dropped, not chained. Keys are any strings (`__proto__` too:
 * the object has no prototype). Iteration order is unspecified.
 */
export class InFlightTable<V> {
  private entries: Record<string, V> = Object.create(null) as Record<string, V>;
  private count = 0;

  /** Entries in the table now. */
  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    return this.entries[key];
  }

  /** Adds or replaces the entry for `key`. */
  set(key: string, value: V): void {
    if (!(key in this.entries)) this.count++;
    this.entries[key] = value;
  }

  /** Removes the entry for `key`; false when there was none. */
  delete(key: string): boolean {
    if (!(key in this.entries)) return false;
    delete this.entries[key];
    this.count--;
    return true;
  }

  /** The entries' values now, as an array (a later `set` or `delete` does not change it). */
  values(): V[] {
    return Object.values(this.entries);
  }
}
