/**
 * A model of how Python's `http.cookiejar` (under requests and httpx) reads a `Set-Cookie` line,
 * for the cookie-scoping regression tests: `parse_ns_headers` splits at `;`, the first item is
 * the name=value pair, every item is `str.strip()`ped (which strips more than HTTP's SP and
 * HTAB: U+0085, U+00A0, \x0b, \x0c, \x1c-\x1f), and the first `path` wins. Checked against
 * CPython's own parser (hostile trials 28 and 30).
 */

/** What Python's `str.strip()` strips, within latin1 (the header's decoding there too). */
const PY_SPACE = '\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0';

function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && PY_SPACE.includes(s[a]!)) a++;
  while (b > a && PY_SPACE.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

/** The cookie's name and path as `http.cookiejar` reads them (`path` undefined when none is read). */
export function cookiejarCookie(line: string): { name: string; path: string | undefined } {
  const params = line.split(';');
  const name = pyStrip(pyStrip(params[0]!).split('=')[0]!);
  for (let i = 1; i < params.length; i++) {
    const param = pyStrip(params[i]!);
    const eq = param.indexOf('=');
    const key = pyStrip(eq === -1 ? param : param.slice(0, eq));
    if (key.toLowerCase() === 'path' && eq !== -1) return { name, path: pyStrip(param.slice(eq + 1)) };
  }
  return { name, path: undefined };
}
