/**
 * An agent `url` as the gateway shows it to people: `--check-config`'s limits table
 * (config/table.ts) and `probe`'s report (probe/probe.ts, both the table and `--json`). One
 * function for both, so the two never disagree on what is hidden. Pure.
 *
 * A seller credential can be anywhere in the url: the userinfo (refused by the config), the
 * query (`?api_key=...`) or the path (`https://seller.example/mcp/sk-live-.../`, a key some
 * sellers put in the path). The query and userinfo are hidden whole; a path segment is hidden
 * when its shape is that of a credential ({@link mayBeCredential}): the rest of the path stays,
 * since which path an agent goes to (`/mcp` or `/adcp/mcp`) is what an operator checks.
 *
 * Reported failure: a hostile new user's trial 12, L8: `url:
 * http://127.0.0.1:9/mcp/sk-live-SECRET123abcdefXYZ0987/` was printed whole by `--check-config`
 * and by `probe` (test/regressions/check-config-prints-path-credential.test.ts).
 */
import { REDACTED } from '../observability/redacted.js';


/** A path segment this long or longer that mixes ASCII letters and digits is hidden (API keys, tokens, UUIDs). */
export const MIXED_SEGMENT_MIN_CHARS = 16;
/** A path segment this long or longer is hidden whatever it holds (any long opaque value). */
export const LONG_SEGMENT_MIN_CHARS = 32;

/**
 * Prefixes of common credential formats, compared ASCII case-insensitively: OpenAI, Stripe
 * and the like (`sk-`, `sk_`, `pk_`, `rk_`), Mailgun (`key-`), GitHub (`ghp_`, `gho_`, `ghu_`,
 * `ghs_`, `ghr_`, `github_pat_`), GitLab (`glpat-`), Slack (`xoxb-`, `xoxp-`, `xoxa-`,
 * `xoxr-`, `xoxs-`), AWS access keys (`akia`), and base64 JSON such as a JWT (`eyj`).
 */
const CREDENTIAL_PREFIXES = ['sk-', 'sk_', 'pk_', 'rk_', 'key-', 'ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_', 'glpat-', 'xoxb-', 'xoxp-', 'xoxa-', 'xoxr-', 'xoxs-', 'akia', 'eyj'];

/** Characters a segment must have after a {@link CREDENTIAL_PREFIXES} prefix to be hidden by it. */
export const PREFIX_TAIL_MIN_CHARS = 8;

const LETTER = /[A-Za-z]/;
const DIGIT = /[0-9]/;

/**
 * Whether a path segment (as the URL parser writes it: percent-encoded, so lengths count
 * `%xx` as three characters) has the shape of a credential:
 * - {@link MIXED_SEGMENT_MIN_CHARS} (16) characters or more holding both an ASCII letter and a
 *   digit (`sk-live-SECRET123abc`, `3f2504e0-4f89-11d3-9a0c-0305e82c3301`); or
 * - {@link LONG_SEGMENT_MIN_CHARS} (32) characters or more, whatever they are; or
 * - a `=` (a `name=value`, such as a matrix parameter `;api_key=...`); or
 * - a known credential prefix ({@link CREDENTIAL_PREFIXES}) followed by at least
 *   {@link PREFIX_TAIL_MIN_CHARS} (8) more characters (so the locale `sk-sk` is shown).
 * A shorter plain segment (`mcp`, `adcp`, `v2`, `sales-agent`, `2025-11-25`, `12345`) is not.
 * A heuristic: a short random key (`/mcp/a1b2c3/`) passes it; credentials belong in the
 * agent's `headers`, which are never shown.
 */
export function mayBeCredential(segment: string): boolean {
  if (segment.length >= LONG_SEGMENT_MIN_CHARS) return true;
  if (segment.length >= MIXED_SEGMENT_MIN_CHARS && LETTER.test(segment) && DIGIT.test(segment)) return true;
  if (segment.includes('=')) return true;
  const lower = segment.toLowerCase();
  return CREDENTIAL_PREFIXES.some((prefix) => lower.length >= prefix.length + PREFIX_TAIL_MIN_CHARS && lower.startsWith(prefix));
}

/** `pathname` with each segment that {@link mayBeCredential} replaced by `[redacted]`; the `/`s and empty segments stay. */
export function displayPath(pathname: string): string {
  return pathname
    .split('/')
    .map((segment) => (mayBeCredential(segment) ? REDACTED : segment))
    .join('/');
}

/**
 * An agent URL for display: scheme, host and port as they are; the path with each segment that
 * may be a credential replaced by `[redacted]` ({@link displayPath}); the query string, if any,
 * as `?[redacted]` and userinfo as `[redacted]@` (the config refuses URLs with credentials, but
 * this never relies on it), as the logs do; a fragment (refused too) as `#[redacted]`.
 *
 *   https://seller.example/adcp/mcp?key=abc          -> https://seller.example/adcp/mcp?[redacted]
 *   http://127.0.0.1:9/mcp/sk-live-SECRET123abcdef/  -> http://127.0.0.1:9/mcp/[redacted]/
 */
export function displayUrl(url: URL): string {
  const userinfo = url.username !== '' || url.password !== '' ? `${REDACTED}@` : '';
  const query = url.search !== '' ? `?${REDACTED}` : '';
  const fragment = url.hash !== '' ? `#${REDACTED}` : '';
  return `${url.protocol}//${userinfo}${url.host}${displayPath(url.pathname)}${query}${fragment}`;
}
