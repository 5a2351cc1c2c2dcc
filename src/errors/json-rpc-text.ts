/**
 * The JSON text of a JSON-RPC message the gateway mints (a local error, a refusal), with the
 * request's id exactly as the host wrote it.
 *
 * Why: the gateway reads the host's request with `JSON.parse`, so a numeric id goes through a
 * JavaScript double; an id such as `9007199254740993` would come back as `9007199254740992`,
 * and the host would never match the answer to its request (JSON-RPC 2.0 §5: the response id
 * "MUST be the same as the value of the id member in the Request Object"), and `1.0`, `1E2`,
 * `-0` as `1`, `100`, `0`, the same values in other bytes. The peek keeps the id's text
 * whenever `JSON.stringify` would write the number otherwise (request/peek.ts `idText`), and
 * the minted message is written with that text. Reported failures: big numeric ids lost
 * digits in minted errors (test/regressions/big-number-precision.test.ts); `1.0`, `1E2`, `-0`
 * and `0.1e1` came back rewritten while `-1e-400` came back as written (a hostile new-user
 * trial 13, L2: test/regressions/minted-error-rewrites-host-id.test.ts). A string id is
 * written as JSON.stringify writes it: the same string (`"\u0037"` comes back `"7"`).
 */

/** A request id as read by the peek: the parsed value and, for a number a double cannot carry exactly, its JSON text. */
export interface JsonRpcIdRef {
  readonly id: string | number | null;
  /** The id's JSON text as the host wrote it; undefined unless it is a number `JSON.stringify` writes otherwise. */
  readonly idText: string | undefined;
}

/**
 * `JSON.stringify(message)`, with the value of its `id` member replaced by `idText` when
 * given. `message` must be built as `{ jsonrpc: '2.0', id, ... }` (that key order: the id is
 * then the second member, at a known place in the text); otherwise, or when `idText` is
 * undefined, the text is JSON.stringify's.
 */
export function stringifyJsonRpc(message: { readonly jsonrpc: '2.0'; readonly id: string | number | null }, idText: string | undefined): string {
  const text = JSON.stringify(message);
  if (idText === undefined) return text;
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)}`;
  return text.startsWith(head) ? `{"jsonrpc":"2.0","id":${idText}${text.slice(head.length)}` : text;
}
