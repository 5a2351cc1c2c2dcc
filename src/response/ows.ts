/**
 * HTTP's optional whitespace: RFC 9110 §5.6.3 `OWS = *( SP / HTAB )`. A field value or a part of
 * one is trimmed of these only, not of all JS `trim()` drops (U+00A0, U+0085, U+FEFF, line
 * breaks...), which a seller's bytes can carry: a trim that took U+00A0 made
 * `Retry-After: \xa0120` readable (hostile trial 30, L1) and one that took U+0085 hid a cookie's
 * `Path` from the gateway but not from Python's `str.strip()` (hostile trial 28, M1).
 */

/** `text` without the SP and HTAB at its ends (a scan: a regex `[ \t]+$` backtracks quadratically over a long run of them). */
export function trimOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isOws(text.charCodeAt(start))) start++;
  while (end > start && isOws(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function isOws(c: number): boolean {
  return c === 0x20 || c === 0x09;
}
