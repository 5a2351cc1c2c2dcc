/**
 * The UTF-8 byte order mark (U+FEFF encoded: EF BB BF) at the start of a JSON text fed in
 * chunks. RFC 8259 §8.1: senders "MUST NOT add a byte order mark (U+FEFF) to the beginning of
 * a networked-transmitted JSON text", but "implementations that parse JSON texts MAY ignore
 * the presence of a byte order mark rather than treating it as an error".
 */

/** The three bytes of a UTF-8 BOM. */
export const UTF8_BOM: Readonly<Uint8Array> = Uint8Array.of(0xef, 0xbb, 0xbf);

/** What {@link matchBomStart} returns when the bytes so far are not a BOM's start. */
export const NOT_BOM = -1;

/**
 * How many bytes of a BOM the start of a text now matches, after `chunk`, when the chunks
 * before it matched `matched` (0, 1 or 2) bytes: `matched` plus the bytes of `chunk` that
 * continue the BOM, up to 3 (3: the text starts with a whole BOM, whose rest is the first
 * `3 - matched` bytes of `chunk`), or {@link NOT_BOM} when a byte of `chunk` breaks it. An empty
 * chunk leaves `matched` as it was. Cost: at most 3 byte compares; one for a text that starts
 * with any other byte.
 */
export function matchBomStart(chunk: Uint8Array, matched: number): number {
  let i = 0;
  while (matched < UTF8_BOM.length && i < chunk.length) {
    if (chunk[i] !== UTF8_BOM[matched]) return NOT_BOM;
    i++;
    matched++;
  }
  return matched;
}

/**
 * `body` without a leading UTF-8 BOM: the bytes after it (a view, no copy), or `body` itself
 * when it does not start with one. Only the first is dropped: a second BOM, or one anywhere
 * else, stays (no JSON text then). A body that is only a BOM gives an empty one.
 *
 * Used for a host's POST body (routing/handler.ts), as the seller side drops an answer's
 * (response/json-stage.ts): the body is peeked and forwarded without it, so the seller gets
 * the bytes the gateway read, their Content-Length (reply-from measures the body it sends).
 * Before, such a body was refused with a bare `parse_error`, id null (a hostile new-user trial
 * 14, L3: test/regressions/host-body-bom-parse-error.test.ts). Cost: at most 3 byte compares.
 */
export function withoutLeadingBom(body: Buffer): Buffer {
  return matchBomStart(body, 0) === UTF8_BOM.length ? body.subarray(UTF8_BOM.length) : body;
}
