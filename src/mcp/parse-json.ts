/**
 * One `JSON.parse` of a body's bytes, with a value for "no JSON text" in place of the
 * exception: the reading the JSON answer path (response/json-stage.ts) and the
 * acknowledgement check (response/ack-body.ts) share, so a seller's body answering a POST that
 * carries no request is parsed once for both.
 */

/** What {@link parseJsonText} returns for bytes that are no JSON text. */
export const NOT_JSON: unique symbol = Symbol('not JSON');

/**
 * The JSON value of `bytes` (UTF-8, decoded as `Buffer#toString('utf8')` does: U+FFFD for each
 * ill-formed sequence; no BOM expected: a leading one makes it no JSON text), or
 * {@link NOT_JSON}. Never `undefined` (no JSON text has that value). Cost: one decode and one
 * `JSON.parse` of the whole text.
 */
export function parseJsonText(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return NOT_JSON;
  }
}
