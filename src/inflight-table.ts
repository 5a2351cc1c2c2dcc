/**
 * A table of entries that live as long as one request or stream: added when it starts,
 * removed when it ends, thousands of times a second. The gateway's in-flight registries use
 * it (app.ts: the open SSE streams, the open exchanges) to count them and, at shutdown, to
 * reach each one's end function.
 *
 * Shape: an array of slots and a free list. `add` puts a value in a free slot (or a new one at
 * the end) and returns the slot's number; `remove(slot, value)` empties it only while it still
 * holds that value, so a second removal (an exchange ended twice) is a no-op even after the
 * slot was reused. No key, no hashing, no allocation once the array has grown to the peak
 * number of entries in flight.
 *
 * Why not a `Map` (issue 5, "the gateway gets ~2x slower on small requests after large
 * answers"): V8 stores a `Map` or `Set` in an ordered hash table and rebuilds it every few
 * deletions under this churn. The table it leaves keeps its entries and a pointer to its
 * successor (for live iterators). Once one table of the chain is in the old generation (it
 * outlived two scavenges, as it does while a few multi-MiB answers hold their entries), every
 * later table and every entry they held stay reachable for the scavenger until the next
 * mark-compact: each small request's whole object graph (its hooks close over the exchange,
 * the reply, the handler) was copied, then promoted. Measured on Node 20.18 (V8 11.3), 10,000
 * 1 KiB requests after 60 answers of 4 MiB: with a `Map` ~2 MB survived each scavenge,
 * scavenges took 5-9 ms instead of ~1, and gateway CPU per 1 KiB request went from ~195 to
 * 240-350 µs. An emptied slot here drops its value at once.
 *
 * Why not a dictionary-mode object keyed by a per-exchange string (what this was): V8
 * internalizes and hashes each fresh key on insertion. In a loop with 8 entries in flight an
 * insertion and removal cost ~0.8 µs against ~0.06 µs here; in the bench's 1 KiB profile
 * `set` alone was 1.1% of the gateway's CPU (2026-12-02).
 *
 * test/unit/inflight-table.test.ts shows both with nothing but the table.
 */
export class InFlightTable<V> {
  private readonly slots: Array<V | undefined> = [];
  /** Empty slots, reused last-in first-out. */
  private readonly free: number[] = [];
  private count = 0;

  /** Entries in the table now. */
  get size(): number {
    return this.count;
  }

  /** Adds `value`; returns its slot, for {@link remove}. */
  add(value: V): number {
    const slot = this.free.length > 0 ? this.free.pop()! : this.slots.length;
    this.slots[slot] = value;
    this.count++;
    return slot;
  }

  /** Removes the entry at `slot` if it still holds `value`; false when it does not (removed already). */
  remove(slot: number, value: V): boolean {
    if (this.slots[slot] !== value || value === undefined) return false;
    this.slots[slot] = undefined;
    this.free.push(slot);
    this.count--;
    return true;
  }

  /**
   * Calls `fn` with each entry's value now, in slot order; no array is made. `fn` must not add
   * or remove entries (an entry it adds may or may not be visited).
   */
  forEach(fn: (value: V) => void): void {
    const slots = this.slots;
    for (let i = 0; i < slots.length; i++) {
      const value = slots[i];
      if (value !== undefined) fn(value);
    }
  }

  /** The entries' values now, as an array (a later `add` or `remove` does not change it). Order unspecified. */
  values(): V[] {
    const out: V[] = [];
    for (const value of this.slots) if (value !== undefined) out.push(value);
    return out;
  }
}
