/**
 * THE schema of the YAML config file (snake_case keys, units in names). Single source of
 * truth for which keys exist, their types and bounds; the raw types are inferred from it.
 *
 * - Every object is strict: an unknown key is an error (a typo in a limit name must never
 *   fall back silently to a default).
 * - Every key is optional except `agents`, `agents.<agent>.url` and `ops_listen.port` (when
 *   `ops_listen` is given): `load.ts` applies the built-ins of `defaults.ts` and resolves
 *   the levels (call > tool > agent > defaults > built-in).
 * - The schema has no transforms or defaults: it only validates. The loader builds the
 *   frozen `GatewayConfig` (see `types.ts`) from the validated tree.
 * - Messages say what is expected; the loader adds the YAML path, the line and column, and
 *   what was found (never echoing secrets).
 *
 * The reference for every key is `docs/configuration.md`; a unit test checks that the doc
 * and `listSchemaKeyPaths()` list the same keys.
 */
import { isIP } from 'node:net';
import * as z from 'zod';
import {
  BOUNDS,
  CONTENT_CODINGS,
  DEDUPE_TEXT_MODES,
  LOG_LEVELS,
  MAX_TOOL_NAME_CHARS,
  MIN_RESUME_SECRET_LENGTH,
  SPEC_DEFAULT_RESPONSE_CEILING_BYTES,
} from './defaults.js';
import { urlAuthorityPercentProblem, urlAuthorityProblem, urlWritesUserinfo } from './url-authority.js';
import { urlBackslashProblem, urlCharactersProblem } from './url-characters.js';
import { configuredHeaderRefusal, dashSpelling, UNDERSCORE_READERS } from './owned-headers.js';

/** Agent names become a URL path segment: `/agents/<name>/mcp`. */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** MCP tool-name charset, 1 to {@link MAX_TOOL_NAME_CHARS} characters. */
export const TOOL_NAME_PATTERN = new RegExp(`^[A-Za-z0-9_.-]{1,${MAX_TOOL_NAME_CHARS}}$`);
/** RFC 9110 `token` (header field names). */
export const HEADER_NAME_PATTERN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Header values: no control characters except HTAB, nothing outside Latin-1 (what Node/undici accept). */
const HEADER_VALUE_PATTERN = /^[\t\x20-\x7e\x80-\xff]*$/;

/** A custom issue about a mapping key (a name) rather than its value: the loader points at the key. */
const KEY_ISSUE = { at: 'key' } as const;
/** Run a refinement even when inner values had problems, so every problem is reported at once. */
const ALWAYS = { when: () => true };

function intIn(min: number, max: number, note = ''): z.ZodNumber {
  const error = `expected an integer >= ${min} and <= ${max}${note}`;
  return integer(error).min(min, { error }).max(max, { error });
}

/**
 * A number that must be an integer: a fraction is one `invalid_type` issue (`error`), and no
 * check after it runs (one problem per key). The range is left to the caller's `min`/`max`.
 *
 * Not zod's `.int()`: besides the fraction, it reports a number outside the safe integers
 * (|n| > 2^53 - 1) as its own `too_big`/`too_small` issue, next to the one the key's
 * `max`/`min` reports, so `max_json_nodes: 1e30` was printed twice (a new user's trial,
 * test/regressions/check-config-huge-number-reported-twice.test.ts). Every bound here is far
 * below 2^53, so the range checks alone cover those numbers.
 *
 * Every number setting is an integer. A number whose YAML text is not an integer though its
 * double is (`64.0000000000000001`), or a negative zero, never gets here as a number: the
 * loader reads it from its text and puts a value no schema accepts in its place
 * (load.ts `unread`, yaml-numbers.ts).
 */
function integer(error: string): z.ZodNumber {
  return z.number({ error }).check((ctx) => {
    if (!Number.isInteger(ctx.value)) ctx.issues.push({ code: 'invalid_type', expected: 'int', input: ctx.value, message: error, continue: false });
  });
}

/** Any `*_bytes` key: 1 .. 1 GiB. */
const bytes = intIn(BOUNDS.bytes.min, BOUNDS.bytes.max, ' (1 GiB)');
/** Any `*_ms` key: 1 ms .. 24 h. */
const ms = intIn(BOUNDS.ms.min, BOUNDS.ms.max, ' (24 h)');
const depth = intIn(BOUNDS.depth.min, BOUNDS.depth.max);
const nodes = intIn(BOUNDS.nodes.min, BOUNDS.nodes.max);
const port = intIn(BOUNDS.port.min, BOUNDS.port.max);
const messages = intIn(BOUNDS.messages.min, BOUNDS.messages.max);
const breaches = intIn(BOUNDS.breaches.min, BOUNDS.breaches.max, ' (0 turns the backoff off)');

/** Why a `shutdown_sse_retry_ms` is refused. */
const SSE_RETRY_ERROR = `expected 0 (no retry: field) or an integer >= ${BOUNDS.sseRetry.min} and <= ${BOUNDS.sseRetry.max} (5 min)`;
/**
 * `shutdown_sse_retry_ms`: 0, or the range of a `retry:` value the gateway forwards
 * (BOUNDS.sseRetry: below 500 ms a host's client would come back before the successor had a
 * chance to listen, as a seller's `retry: 1` made it hammer the gateway).
 */
const sseRetryMs = integer(SSE_RETRY_ERROR).check((ctx) => {
  const v = ctx.value;
  if (v !== 0 && (v < BOUNDS.sseRetry.min || v > BOUNDS.sseRetry.max)) ctx.issues.push({ code: 'custom', input: v, message: SSE_RETRY_ERROR });
});

/** The agent guard's keys (src/admission/agent-guard.ts): allowed in `defaults` and on an agent, not per tool. */
const guardShape = {
  max_buffered_response_bytes: bytes.optional(),
  backoff_after_breaches: breaches.optional(),
  backoff_base_ms: ms.optional(),
  backoff_max_ms: ms.optional(),
};

/** `defaults.max_response_bytes`: the spec's 4 MiB ceiling on a default (agents and tools may go higher). */
const DEFAULT_RESPONSE_BYTES_EXPECTED = `expected an integer >= 1 and <= ${SPEC_DEFAULT_RESPONSE_CEILING_BYTES} (4 MiB)`;
const defaultResponseBytes = integer(DEFAULT_RESPONSE_BYTES_EXPECTED)
  .min(1, { error: DEFAULT_RESPONSE_BYTES_EXPECTED })
  .max(SPEC_DEFAULT_RESPONSE_CEILING_BYTES, {
    error:
      `a default may not exceed ${SPEC_DEFAULT_RESPONSE_CEILING_BYTES} bytes (4 MiB), the protocol-wide ceiling on a default ` +
      '(AdCP MCP response extraction, "Size Limits"); raise max_response_bytes for a specific agent or tool instead',
  });

const oneOf = (values: readonly string[]): string => `expected one of ${values.join(', ')}`;

const dedupeText = z.enum(DEDUPE_TEXT_MODES, { error: oneOf(DEDUPE_TEXT_MODES) });

/** The `Limits` keys: allowed in `defaults`, on an agent and per tool. */
const limitShape = {
  max_response_bytes: bytes.optional(),
  max_sse_event_bytes: bytes.optional(),
  max_json_depth: depth.optional(),
  max_json_nodes: nodes.optional(),
  response_deadline_ms: ms.optional(),
  sse_idle_timeout_ms: ms.optional(),
  sse_deadline_ms: ms.optional(),
  dedupe_text: dedupeText.optional(),
};

const url = z.string({ error: 'expected an absolute http: or https: URL' }).superRefine((value, ctx) => {
  // Messages never echo the URL: it could carry credentials or come from a secret variable.
  // First: whitespace, a control character or any other non-ASCII one, which the parser below
  // would quietly drop, map (IDNA) or encode (url-characters.ts); the checks after it would read
  // another url than the one written.
  const characters = urlCharactersProblem(value);
  if (characters !== undefined) {
    ctx.addIssue({ code: 'custom', message: characters });
    return;
  }
  // Then a `%` in the authority, which the parser would decode in a host before mapping it
  // (IDNA) as above: `exam%C2%ADple.com` is `example.com` (url-authority.ts).
  const percent = urlAuthorityPercentProblem(value);
  if (percent !== undefined) {
    ctx.addIssue({ code: 'custom', message: percent });
    return;
  }
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'is not a valid absolute URL (expected http:// or https://...)' });
    return;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    ctx.addIssue({ code: 'custom', message: `scheme must be http: or https:, got ${JSON.stringify(parsed.protocol.slice(0, 20))}` });
  }
  // Read from the text: the parser above makes a host of the first path segment (url-authority.ts).
  const authority = urlAuthorityProblem(value);
  if (authority !== undefined) ctx.addIssue({ code: 'custom', message: authority });
  // A backslash, which the parser reads as `/` and an RFC 3986 reader does not (url-characters.ts);
  // one that leaves no host, or no `//`, is reported by the problem above alone.
  const backslash = authority === undefined ? urlBackslashProblem(value) : undefined;
  if (backslash !== undefined) ctx.addIssue({ code: 'custom', message: backslash });
  // Port 0 (`:0`, `:00`): no seller listens there, every call failed upstream_unreachable (review 36, F5).
  if (authority === undefined && parsed.port === '0') {
    ctx.addIssue({
      code: 'custom',
      message:
        'has port 0, where no seller can listen (a connection to it fails, so every call would fail upstream_unreachable): ' +
        "write the seller's port (1 .. 65535), or none for the scheme's default (80 for http:, 443 for https:)",
    });
  }
  // From the text too: the parser drops an empty userinfo (`https://@host/`, url-authority.ts).
  if (parsed.username !== '' || parsed.password !== '' || urlWritesUserinfo(value)) {
    ctx.addIssue({ code: 'custom', message: 'must not contain credentials (user:password@); send them with `headers` instead' });
  }
  if (value.includes('#')) {
    ctx.addIssue({ code: 'custom', message: 'must not contain a fragment (#...)' });
  }
});

const headerValue = z.string({ error: 'expected a string header value (quote numbers)' }).regex(HEADER_VALUE_PATTERN, {
  error: 'header value contains characters not allowed in HTTP (control characters, line breaks or non-Latin-1)',
});

const headers = z
  .record(z.string(), headerValue, { error: 'expected a mapping of header name to value' })
  .superRefine((value, ctx) => {
    if (typeof value !== 'object' || value === null) return;
    const seen = new Map<string, string>();
    for (const name of Object.keys(value)) {
      const lower = name.toLowerCase();
      if (!HEADER_NAME_PATTERN.test(name)) {
        ctx.addIssue({ code: 'custom', path: [name], params: KEY_ISSUE, message: `invalid header name ${JSON.stringify(name)}: must be an HTTP token` });
        continue;
      }
      const refusal = configuredHeaderRefusal(lower);
      if (refusal !== undefined) {
        ctx.addIssue({ code: 'custom', path: [name], params: KEY_ISSUE, message: `header \`${lower}\` may not be configured${refusal}` });
      }
      // Keyed by the `-` spelling: `x_api_key` beside `X-Api-Key` is one header to a seller that reads `_` as `-` (owned-headers.ts).
      const key = dashSpelling(lower);
      const previous = seen.get(key);
      if (previous !== undefined) {
        const why = previous.toLowerCase() === lower ? 'header names are case-insensitive' : `${UNDERSCORE_READERS} reads \`_\` in a header name as \`-\``;
        ctx.addIssue({ code: 'custom', path: [name], params: KEY_ISSUE, message: `header \`${name}\` repeats \`${previous}\` (${why})` });
      } else {
        seen.set(key, name);
      }
    }
  }, ALWAYS);

const acceptEncoding = z
  .array(z.enum(CONTENT_CODINGS, { error: oneOf(CONTENT_CODINGS) }), {
    error: 'expected a list of content codings, such as [gzip, deflate, br] or [identity]',
  })
  .min(1, { error: 'must list at least one content coding (use [identity] for none)' })
  .superRefine((value, ctx) => {
    if (!Array.isArray(value)) return;
    const seen = new Set<unknown>();
    value.forEach((coding, index) => {
      if (seen.has(coding)) ctx.addIssue({ code: 'custom', path: [index], message: `duplicate content coding ${JSON.stringify(coding)}` });
      seen.add(coding);
    });
  }, ALWAYS);

/** `agents.<agent>.tools.<tool>`: the `Limits` keys only. */
export const toolSchema = z.strictObject(limitShape, { error: 'expected a mapping of limit keys' });

const tools = z
  .record(z.string(), toolSchema, { error: 'expected a mapping of tool name to limit overrides' })
  .superRefine((value, ctx) => {
    if (typeof value !== 'object' || value === null) return;
    for (const name of Object.keys(value)) {
      if (!TOOL_NAME_PATTERN.test(name)) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          params: KEY_ISSUE,
          message: `invalid tool name ${JSON.stringify(name.slice(0, 140))}: must match ${TOOL_NAME_PATTERN.source}`,
        });
      }
    }
  }, ALWAYS);

/** The problem of an agent name that does not match {@link AGENT_NAME_PATTERN}. */
export function invalidAgentNameMessage(name: string): string {
  return `invalid agent name ${JSON.stringify(name.slice(0, 80))}: must match ${AGENT_NAME_PATTERN.source} (it is the path segment of /agents/<name>/mcp)`;
}

/** `agents.<agent>`. */
export const agentSchema = z.strictObject(
  {
    url,
    headers: headers.nullish(),
    max_call_response_bytes: bytes.optional(),
    max_request_bytes: bytes.optional(),
    max_batch_messages: messages.optional(),
    accept_encoding: acceptEncoding.optional(),
    tls_insecure_skip_verify: z.boolean({ error: 'expected true or false' }).optional(),
    ...limitShape,
    ...guardShape,
    tools: tools.nullish(),
  },
  { error: 'expected a mapping with at least `url`' },
);

const agents = z
  .record(z.string(), agentSchema, { error: 'expected a mapping of agent name to agent' })
  .nullable()
  .superRefine((value, ctx) => {
    if (value === null || (typeof value === 'object' && Object.keys(value).length === 0)) {
      ctx.addIssue({ code: 'custom', message: 'at least one agent is required' });
      return;
    }
    if (typeof value !== 'object') return;
    for (const name of Object.keys(value)) {
      if (!AGENT_NAME_PATTERN.test(name)) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          params: KEY_ISSUE,
          message: invalidAgentNameMessage(name),
        });
      }
    }
  }, ALWAYS);

/** `defaults`: the `Limits` keys plus `max_request_bytes`, `max_batch_messages` and the guard keys; `max_response_bytes` is capped at 4 MiB. */
export const defaultsSchema = z.strictObject(
  { ...limitShape, max_response_bytes: defaultResponseBytes.optional(), max_request_bytes: bytes.optional(), max_batch_messages: messages.optional(), ...guardShape },
  { error: 'expected a mapping of limit keys' },
);

/** `listen`. */
/**
 * A listen host: an IP address (`127.0.0.1`, `::1`, `0.0.0.0`, `::`), or a host name of
 * letters, digits, hyphens, underscores and dots (labels of 1-63 characters, as RFC 1123 has
 * them plus `_`, which container names carry and Docker's DNS resolves; `localhost`). Checked here so that `--check-config` does not call valid a host
 * the gateway cannot listen on (a new user's trial: `listen.host: "not a host!"` passed the
 * check, and startup then failed with ENOTFOUND, exit 1). Whether a name resolves is only
 * known at startup.
 */
const hostSchema = z
  .string({ error: 'expected a host name or IP address' })
  .refine((h) => isIP(h) !== 0 || HOST_NAME.test(h), { error: 'expected a host name or IP address (letters, digits, hyphens, underscores and dots; or an IPv4 or IPv6 address such as 127.0.0.1 or ::1)' });
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

export const listenSchema = z.strictObject(
  {
    host: hostSchema.optional(),
    port: port.optional(),
  },
  { error: 'expected a mapping with `host` and `port`' },
);

/** `ops_listen`: a separate listener for /healthz, /readyz and /metrics (absent: they are on `listen`). */
export const opsListenSchema = z.strictObject(
  {
    host: hostSchema.optional(),
    port,
  },
  { error: 'expected a mapping with `port` (and optionally `host`)' },
);

/** `resume`. */
export const resumeSchema = z.strictObject(
  {
    // Never echo the value: it is a secret.
    secret: z
      .string({ error: `expected a string of at least ${MIN_RESUME_SECRET_LENGTH} characters (quote numbers)` })
      .min(MIN_RESUME_SECRET_LENGTH, { error: `must be at least ${MIN_RESUME_SECRET_LENGTH} characters long` })
      .optional(),
    ttl_ms: ms.optional(),
  },
  { error: 'expected a mapping with `secret` and `ttl_ms`' },
);

/**
 * One `allowed_origins` entry: a browser origin exactly as browsers send it in `Origin`
 * (scheme, host, port only when not the scheme's default; lower case; no path), e.g.
 * `https://console.example.com`. Compared with the header as a string.
 */
const originSchema = z.string({ error: 'expected an origin string such as https://console.example.com' }).refine(
  (s) => {
    try {
      const url = new URL(s);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === s;
    } catch {
      return false;
    }
  },
  { error: 'expected an origin exactly as a browser sends it: http(s)://host[:port], lower case, no path or trailing slash (e.g. https://console.example.com)' },
);

/**
 * One `allowed_hosts` entry: a host as clients send it in `Host`, `name` or `name:port`: a
 * host name (letters, digits, hyphens, underscores, dots), an IPv4 address, or an IPv6
 * address in brackets (`[fd00::1]`), written the way a URL writes it (lower case, IPv4 and
 * IPv6 canonical), and a port of 1 .. 65535 without leading zeros. No scheme, path or
 * wildcard. Matched by src/request/browser-guard.ts `isListedHost`.
 */
const allowedHostSchema = z.string({ error: 'expected a host string such as gateway.internal or gateway.internal:8787' }).refine(isAllowedHostEntry, {
  error:
    'expected a host as clients send it in the Host header: name or name:port, lower case, an IPv6 address in brackets, a port of 1 to 65535, no scheme, path or wildcard (e.g. gateway.internal or gateway.internal:8787)',
});

/** Whether `entry` is a valid `allowed_hosts` entry (see `allowedHostSchema`). */
function isAllowedHostEntry(entry: string): boolean {
  const m = /^(\[[^\]]*\]|[^:[\]]+)(?::([1-9][0-9]{0,4}))?$/.exec(entry);
  if (m === null) return false;
  const name = m[1] as string;
  if (m[2] !== undefined && Number(m[2]) > BOUNDS.port.max) return false;
  if (name.startsWith('[') ? isIP(name.slice(1, -1)) !== 6 : isIP(name) !== 4 && !HOST_NAME.test(name)) return false;
  try {
    return new URL(`http://${name}/`).hostname === name;
  } catch {
    return false;
  }
}

/** The whole file. */
export const configSchema = z.strictObject(
  {
    listen: listenSchema.nullish(),
    ops_listen: opsListenSchema.nullish(),
    log_level: z.enum(LOG_LEVELS, { error: oneOf(LOG_LEVELS) }).optional(),
    shutdown_grace_ms: ms.optional(),
    shutdown_sse_retry_ms: sseRetryMs.optional(),
    request_timeout_ms: ms.optional(),
    allowed_origins: z.array(originSchema, { error: 'expected a list of origins' }).nullish(),
    allowed_hosts: z.array(allowedHostSchema, { error: 'expected a list of host names' }).nullish(),
    defaults: defaultsSchema.nullish(),
    resume: resumeSchema.nullish(),
    agents,
  },
  { error: 'expected a mapping (the file must have at least an `agents:` block)' },
);

/** The validated file, before defaults are applied. */
export type RawConfig = z.infer<typeof configSchema>;
/** One `agents.<agent>` entry as written. */
export type RawAgent = z.infer<typeof agentSchema>;
/** One `agents.<agent>.tools.<tool>` entry as written. */
export type RawTool = z.infer<typeof toolSchema>;
/** The `defaults` block as written. */
export type RawDefaults = z.infer<typeof defaultsSchema>;

/** The keys of `Limits` (allowed in `defaults`, on an agent, per tool). */
export const LIMIT_KEYS = Object.freeze(Object.keys(limitShape)) as readonly (keyof typeof limitShape)[];

/** Placeholder segment used for the user-named keys of a mapping, by the key that holds it. */
const PLACEHOLDERS: Readonly<Record<string, string>> = { agents: '<agent>', tools: '<tool>' };

function unwrap(schema: z.ZodType): z.ZodType {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
  return s;
}

/**
 * Every key path of the schema, in declaration order, e.g. `listen`, `listen.host`,
 * `agents.<agent>.tools.<tool>.max_response_bytes`. A mapping of user-chosen names holding
 * objects (`agents`, `tools`) contributes a placeholder segment; `headers` is a leaf.
 */
export function listSchemaKeyPaths(): string[] {
  const out: string[] = [];
  const walk = (schema: z.ZodType, prefix: string): void => {
    const s = unwrap(schema);
    if (s instanceof z.ZodObject) {
      for (const [key, child] of Object.entries(s.shape as Record<string, z.ZodType>)) {
        const path = prefix === '' ? key : `${prefix}.${key}`;
        out.push(path);
        const inner = unwrap(child);
        if (inner instanceof z.ZodRecord && unwrap(inner.valueType as z.ZodType) instanceof z.ZodObject) {
          const placeholder = PLACEHOLDERS[key] ?? '<name>';
          out.push(`${path}.${placeholder}`);
          walk(inner.valueType as z.ZodType, `${path}.${placeholder}`);
        } else {
          walk(inner, path);
        }
      }
    }
  };
  walk(configSchema, '');
  return out;
}

/**
 * The scalar type the setting at `path` (a path into the YAML tree) takes when that is a
 * number or a boolean, else undefined (a string, a mapping, a list, or no such setting). A
 * `${VAR}` always makes a string, so it can never set one of these: the loader says so instead
 * of advising quotes (a hostile trial 45, Info).
 */
export function nonStringScalarAt(path: readonly PropertyKey[]): 'number' | 'boolean' | undefined {
  const s = schemaAt(path);
  return s instanceof z.ZodNumber ? 'number' : s instanceof z.ZodBoolean ? 'boolean' : undefined;
}

/** The schema (unwrapped) of the value at `path`, or undefined when `path` leads nowhere. */
function schemaAt(path: readonly PropertyKey[]): z.ZodType | undefined {
  let s: z.ZodType = configSchema;
  for (const segment of path) {
    s = unwrap(s);
    if (s instanceof z.ZodObject) {
      const child = (s.shape as Record<string, z.ZodType | undefined>)[String(segment)];
      if (child === undefined) return undefined;
      s = child;
    } else if (s instanceof z.ZodRecord) {
      s = s.valueType as z.ZodType;
    } else if (s instanceof z.ZodArray) {
      s = s.element as z.ZodType;
    } else {
      return undefined;
    }
  }
  return unwrap(s);
}

/**
 * The keys allowed in the object at `path` (a path into the YAML tree: strings for mapping
 * keys, numbers for list indexes), or undefined when `path` does not lead to a strict object.
 * Used to suggest the closest key for an unknown one.
 */
export function knownKeysAt(path: readonly PropertyKey[]): string[] | undefined {
  const s = schemaAt(path);
  return s instanceof z.ZodObject ? Object.keys(s.shape as object) : undefined;
}
