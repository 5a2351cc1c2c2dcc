/**
 * The rule that keeps a numeric JSON-RPC id as the host wrote it: beside the parsed number,
 * its JSON text is kept whenever `JSON.stringify` writes that number otherwise (RpcPeek.idText,
 * BatchRequestRef.idText), and every answer the gateway mints carries that text byte for byte
 * (errors/json-rpc-text.ts). Otherwise a minted answer says the id as `JSON.stringify` writes
 * it, which is then the host's text.
 *
 * The text differs when one `JSON.parse` changed the value (`9007199254740993` read as
 * `9007199254740992`, `0.99999999999999999999` as `1`, `1e-400` as `0`) or only its spelling
 * (`1.0`, `1E2`, `0.1e1`, `-0`, written `1`, `100`, `1`, `0`). A number outside the range of a
 * double (`1e400`, `-1e400`: read as infinite) has no such pair: the peek refuses it
 * (request/peek.ts ID_RANGE_PROBLEM) before this rule is asked.
 *
 * Source: a hostile new-user trial 13, L2: minted errors carry numeric host ids byte for byte;
 * `1.0`, `1E2`, `-0` and `0.1e1` came back `1`, `100`, `0` and `1`, while
 * `12345678901234567891` and `-1e-400` came back as written
 * (test/regressions/minted-error-rewrites-host-id.test.ts); big numeric ids lost digits
 * (test/regressions/big-number-precision.test.ts).
 */

/**
 * The text to keep for the numeric id `id` written `written`: `written` when `JSON.stringify(id)`
 * is another text, else undefined (the id is the text `JSON.stringify` writes).
 *
 * Shape: `written` a JSON number token as the host wrote it (ASCII characters, RFC 8259 §6:
 * `1.0`, `-0`, `9007199254740993`); `id` its value as a double, finite (`Number(written)`,
 * which is what `JSON.parse` reads). A caller refuses an id outside the range of a double
 * (`1e400`) before asking. Cost: one `JSON.stringify` of a number and one string comparison.
 */
export function idTextOfNumber(written: string, id: number): string | undefined {
  return written === JSON.stringify(id) ? undefined : written;
}

/**
 * The inverse of {@link idTextOfNumber}: the JSON text the host wrote for the numeric id `id`,
 * given the text kept for it (`idText`, undefined when none was kept): `idText`, else
 * `JSON.stringify(id)`. Shape: as {@link idTextOfNumber}'s.
 */
export function writtenNumberId(id: number, idText: string | undefined): string {
  return idText ?? JSON.stringify(id);
}
