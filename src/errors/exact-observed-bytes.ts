/**
 * A `content_length` error's `observed_bytes` written with the digits the seller announced,
 * when a JavaScript double cannot carry them (over 2^53 - 1, `Number.MAX_SAFE_INTEGER`).
 *
 * Why (hostile trial 28, L3 b): `Content-Length: 9007199254740993` was reported
 * `"observed_bytes":9007199254740992`, `18446744073709551615` as `18446744073709552000`, where
 * docs/errors.md says observed_bytes is the announced length
 * (test/regressions/huge-content-length-observed-bytes-rounded.test.ts). The value stays a
 * JSON number (JSON sets no limit on digits): a host that reads integers exactly (Python's
 * `json`) gets the seller's value, one that reads doubles the same double as before. llhttp
 * reads a Content-Length up to 2^64 - 1 (20 digits), which a double prints as plain digits
 * (below 10^21), so the minted text holds the rounded value as `String(observed)`.
 *
 * Cost: nothing unless such a length was announced (read-body.ts sets the digits only then).
 */

/** The announced digits (no leading zeros) of a Content-Length `text` over 2^53 - 1, or undefined when `declared` is exact. */
export function inexactLengthDigits(text: string, declared: number): string | undefined {
  return declared > Number.MAX_SAFE_INTEGER ? text.replace(/^0+/, '') : undefined;
}

/**
 * `text` (a minted JSON-RPC message: errors/local-reply.ts) with the rounded `observed` replaced
 * by `digits` where the error writes it: `details.observed_bytes`, as JSON and as JSON inside a
 * string (a tool result's text), and the message's "announced a N-byte response"
 * (mcp/local-error.ts MESSAGES.content_length).
 */
export function withExactObservedBytes(text: string, observed: number, digits: string): string {
  const shown = String(observed);
  return text
    .replaceAll(`"observed_bytes":${shown}`, `"observed_bytes":${digits}`)
    .replaceAll(`\\"observed_bytes\\":${shown}`, `\\"observed_bytes\\":${digits}`)
    .replaceAll(`announced a ${shown}-byte response`, `announced a ${digits}-byte response`);
}
