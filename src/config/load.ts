/**
 * The config loader: YAML text -> validated, resolved, deep-frozen `GatewayConfig`.
 *
 * Steps, each collecting problems rather than stopping at the first:
 * 0. (`loadConfigFile`) the path must name a regular file of at most `MAX_CONFIG_FILE_BYTES`
 *    (1 MiB); it is read with that cap, so a device, a FIFO or a huge file never blocks the
 *    loader or fills memory. `parseConfig` applies the same size cap to its text.
 * 1. YAML syntax (line:column from `yaml`'s parser; duplicate keys are errors), one document,
 *    nested at most `MAX_CONFIG_NESTING` deep (yaml-document.ts). A file with such errors
 *    stops here: its tree can't be trusted for the next steps. A `%YAML` directive of a
 *    version other than 1.2 is a problem too, but does not stop: the file is read as YAML 1.2
 *    anyway, and its other problems are listed with it (yaml-document.ts). An unquoted
 *    `${VAR}` inside a flow mapping or list (`{ url: ${X} }`), which yaml reads as `$` and a
 *    mapping, is named at its value's YAML path with the fix, in place of yaml's cascade of
 *    messages (yaml-flow-env.ts).
 * 2. Build a plain tree from the YAML nodes (null-prototype mappings, so keys like
 *    `__proto__` stay data), expanding `${VAR}` in every string value and remembering where
 *    each path sits in the file.
 * 3. Validate against the one schema (`schema.ts`); unknown keys get a "did you mean"
 *    (suggest.ts), computed only for the problems shown (problem-list.ts).
 * 4. Cross-checks that need the environment (the resume secret from the environment).
 * 5. Resolve defaults (call > tool > agent > defaults > built-in; see `resolve.ts`) and freeze.
 *
 * Problems never echo a secret: values under `headers`, `resume` and `resume.secret`, of any
 * YAML type (a number too), and any value that came from an environment variable are
 * described by type only (`isSecretPath`).
 */
import { createHash } from 'node:crypto';
import { constants as fsConstants, type Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { isAlias, isMap, isScalar, isSeq, LineCounter, Scalar, type Alias, type Document, type Node as YamlNode } from 'yaml';
import type { z } from 'zod';
import {
  BUILTIN_DEFAULTS,
  BUILTIN_GUARD,
  DEFAULT_ACCEPT_ENCODING,
  DEFAULT_LISTEN,
  DEFAULT_LOG_LEVEL,
  DEFAULT_RESUME_TTL_MS,
  DEFAULT_SHUTDOWN_GRACE_MS,
  DEFAULT_SHUTDOWN_SSE_RETRY_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MAX_CONFIG_FILE_BYTES,
  MIN_RESUME_SECRET_LENGTH,
  RESUME_SECRET_ENV,
} from './defaults.js';
import { expandEnv } from './env.js';
import { agentUrlSelfProblem, type OwnListener } from './agent-url-self.js';
import { AGENT_URL_KEY, agentUrlKey } from './agent-url-key.js';
export type { OwnListener } from './agent-url-self.js';
import { listenOverlap } from './listen-overlap.js';
import { protoKeyIssues } from './proto-keys.js';
import { urlAuthorityProblem } from './url-authority.js';
import { RESOLUTION, resolveLevel, type AgentResolution, type ResolvedLevel } from './resolve.js';
import { deferMessage, moreProblemsLine, shownProblems } from './problem-list.js';
import { configSchema, LIMIT_KEYS, nonStringScalarAt, type RawAgent, type RawConfig, type RawTool } from './schema.js';
import { unknownKeyMessage } from './suggest.js';
import { aliasTargets } from './yaml-aliases.js';
import { MAX_CONFIG_NESTING, parseConfigYaml, TOO_DEEP } from './yaml-document.js';
import {
  flowReferenceCandidates,
  unquotedFlowReferenceMessage,
  unquotedFlowReferences,
  type UnquotedFlowReference,
  type UnquotedFlowReferences,
} from './yaml-flow-env.js';
import { inexactNumber } from './yaml-numbers.js';
import { notUtf8Message, otherUnicodeEncoding } from './text-encoding.js';
import { coreTagMisfit, describeTagged, isReadTag, isRefusedTagWarning } from './yaml-tags.js';
import type { AgentConfig, GatewayConfig, Limits, ToolOverrides } from './types.js';
import type { GuardSettings } from '../admission/agent-guard.js';

/** One problem in a config file. `path` is the YAML path (`agents.acme.max_response_bytes`, `""` for the file itself); line and column are 1-based. */
export interface ConfigProblem {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

/**
 * Thrown by `parseConfig` and `loadConfigFile` with every problem found (never just the first).
 * `source` is the file name as the caller gave it (or the `source` label), if any.
 * `code` is the system error code when the file could not be opened or read (`ENOENT`: it
 * does not exist; `EACCES`, `EISDIR`, ...), so a caller can tell a missing file from an
 * invalid one without parsing the message; undefined when the file was read, or refused
 * for its size or kind (a directory found by `stat`, a FIFO), or the text is invalid.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: ConfigProblem[];
  readonly source: string | undefined;
  readonly code: string | undefined;

  constructor(problems: ConfigProblem[], source?: string, opts: { code?: string } = {}) {
    super('');
    this.problems = problems;
    this.source = source;
    this.code = opts.code;
    this.message = this.format();
  }

  /**
   * A human-readable report, one problem per line, at most `MAX_SHOWN_PROBLEMS` (50) of them
   * and then `... and N more problems` (problem-list.ts); the head counts them all:
   * ```
   * config/gateway.yaml: 2 problems
   *   agents.acme.max_response_bytes (line 12, column 25): expected an integer >= 1 and <= 1073741824 (1 GiB), got "big"
   *   line 3, column 1: YAML syntax: ...
   * ```
   */
  format(): string {
    const n = this.problems.length;
    const head = `${this.source ?? 'config'}: ${n} problem${n === 1 ? '' : 's'}`;
    const { shown, more } = shownProblems(this.problems);
    const lines = shown.map((p) => {
      const at = p.line === undefined ? '' : `line ${p.line}${p.column === undefined ? '' : `, column ${p.column}`}`;
      if (p.path === '') return `  ${at === '' ? '' : `${at}: `}${p.message}`;
      return `  ${p.path}${at === '' ? '' : ` (${at})`}: ${p.message}`;
    });
    if (more > 0) lines.push(`  ${moreProblemsLine(more)}`);
    return [head, ...lines].join('\n');
  }
}

/** Options of `parseConfig`. */
export interface ParseConfigOptions {
  /** Variables for `${VAR}` and `ADCP_GATEWAY_RESUME_SECRET`. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Where the text came from: used in `ConfigError` and stored as `GatewayConfig.source`. */
  source?: string;
}

/**
 * Parses, validates and resolves a config file's text.
 *
 * @param text the YAML text (UTF-8 string).
 * @param opts `env` (default `process.env`) and `source` (a file name or label).
 * @returns the frozen `GatewayConfig` (`source` = `opts.source`).
 * @throws ConfigError with every problem (YAML syntax, schema, `${VAR}`, resume secret).
 */
export function parseConfig(text: string, opts: ParseConfigOptions = {}): GatewayConfig {
  return buildConfig(text, opts.env ?? process.env, opts.source, opts.source);
}

/**
 * Reads and parses a config file.
 *
 * @param path the file (relative to the cwd, or absolute).
 * @param opts `env` (default `process.env`).
 * @returns the frozen `GatewayConfig`, `source` = the absolute path.
 * @throws ConfigError when the file can't be read (missing, no permission), is not a regular
 *   file (a directory, a FIFO, a device such as /dev/urandom), is larger than
 *   `MAX_CONFIG_FILE_BYTES` (1 MiB), or is invalid; `ConfigError.source` is `path` as given,
 *   `ConfigError.code` the system error code of a file that could not be read (`ENOENT`, ...).
 */
export async function loadConfigFile(path: string, opts: { env?: NodeJS.ProcessEnv } = {}): Promise<GatewayConfig> {
  const absolute = resolvePath(path);
  const text = await readConfigText(absolute, path);
  return buildConfig(text, opts.env ?? process.env, absolute, path);
}

/** What a path that is not a regular file is, for the error. */
function fileKind(info: Stats): string {
  if (info.isDirectory()) return 'it is a directory';
  if (info.isFIFO()) return 'it is a FIFO (named pipe)';
  if (info.isCharacterDevice()) return 'it is a character device';
  if (info.isBlockDevice()) return 'it is a block device';
  if (info.isSocket()) return 'it is a socket';
  return 'it is not a file';
}

function tooLargeMessage(bytes: number | string): string {
  return `config file is ${bytes} bytes; at most ${MAX_CONFIG_FILE_BYTES}`;
}

/**
 * The text of the config file at `absolute`: a regular file (symbolic links followed) of at
 * most `MAX_CONFIG_FILE_BYTES`, read with that cap, as UTF-8 (a file whose first bytes show
 * UTF-16 or UTF-32 is refused, naming it: text-encoding.ts). Throws `ConfigError` (source `label`),
 * with `code` the system error code when the file could not be opened or read (`ENOENT`
 * for a missing file, `EACCES`, ...).
 *
 * The path is checked with `stat` before it is opened, so a FIFO (whose `open` would wait for
 * a writer) or a device (endless) is refused without reading; the opened handle is checked
 * again (the path may have been swapped in between) and opened non-blocking for the same reason.
 * Exported for code that re-reads the file (e.g. to compare its bytes) and wants the same bounds.
 */
export async function readConfigText(absolute: string, label: string = absolute): Promise<string> {
  const fail = (message: string, code?: string): ConfigError => new ConfigError([{ path: '', message }], label, code === undefined ? {} : { code });
  const cannotRead = (err: unknown): ConfigError => {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'not a regular file (it is a directory)' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    // The code is kept: the message alone would leave a caller parsing English to tell why.
    return fail(`cannot read ${absolute}: ${why}`, typeof code === 'string' ? code : undefined);
  };
  const check = (info: Stats): void => {
    if (!info.isFile()) throw fail(`cannot read ${absolute}: not a regular file (${fileKind(info)})`);
    if (info.size > MAX_CONFIG_FILE_BYTES) throw fail(tooLargeMessage(info.size));
  };

  try {
    check(await stat(absolute));
  } catch (err) {
    throw err instanceof ConfigError ? err : cannotRead(err);
  }
  let handle: FileHandle;
  try {
    // O_NONBLOCK: should the path have become a FIFO since the stat, open must not wait for a writer.
    handle = await open(absolute, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch (err) {
    throw cannotRead(err);
  }
  try {
    check(await handle.stat());
    // One byte more than the cap: a file that grew past it since the stat is still refused.
    const buffer = Buffer.allocUnsafe(MAX_CONFIG_FILE_BYTES + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > MAX_CONFIG_FILE_BYTES) throw fail(tooLargeMessage(`more than ${MAX_CONFIG_FILE_BYTES}`));
    // UTF-16 or UTF-32 named as such, not read as UTF-8 into a "got ��a\u0000g..." (text-encoding.ts).
    const encoding = otherUnicodeEncoding(buffer.subarray(0, Math.min(filled, 4)));
    if (encoding !== undefined) throw fail(notUtf8Message(encoding));
    return buffer.toString('utf8', 0, filled);
  } catch (err) {
    throw err instanceof ConfigError ? err : cannotRead(err);
  } finally {
    await handle.close();
  }
}

// ---------------------------------------------------------------------------------------
// Building the tree from YAML nodes

type Segment = string | number;

interface Located {
  /** Offset of the mapping key, when the value sits under one. */
  key?: number;
  /** Offset of the value node. */
  value?: number;
}

/** Bound on values produced from the document (aliases can multiply a small file). */
const MAX_TREE_VALUES = 200_000;

class TreeBuilder {
  readonly positions = new Map<string, Located>();
  /** Paths whose string value came (partly) from an environment variable. */
  readonly expanded = new Set<string>();
  /** Paths whose `${VAR}` expansion failed (schema issues there would be noise). */
  readonly envFailed = new Set<string>();
  /** Mappings (by path) holding a merge key `<<`, reported as such: a key missing from them may be one it was meant to bring. */
  readonly mergeParents = new Set<string>();
  /**
   * The YAML text of each number value, by path (`1e30`, `9007199254740993`, `0x10`): what a
   * problem shows as "got", not the double it became (`1e+30`, `9007199254740992`).
   */
  readonly numberTexts = new Map<string, string>();
  readonly problems: ConfigProblem[] = [];
  private count = 0;
  /** Set when the tree hit MAX_TREE_VALUES: the rest of the document was not built. */
  tooLarge = false;
  /**
   * Set when an alias put a mapping or list deeper than MAX_CONFIG_NESTING (the text itself
   * is checked before: yaml-document.ts): it and what it holds were not built. Without the
   * bound, a chain of anchors, each nesting the previous alias 40 deep, took 100 s and 2 GB
   * (every value's path is copied and keyed) and printed a path 10,000 segments long. Nothing
   * more is built once it is set (the loader stops at this problem).
   */
  tooDeep = false;
  private readonly active = new Set<YamlNode>();
  /** Each alias's anchored node, found in one walk (yaml's `Alias.resolve` walks the whole document per alias: yaml-aliases.ts). */
  private readonly targets: Map<Alias, YamlNode>;

  constructor(
    doc: Document,
    private readonly lines: LineCounter,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.targets = aliasTargets(doc);
  }

  problem(path: readonly Segment[], message: string, offset: number | undefined): void {
    this.problems.push(withPosition({ path: formatPath(path), message }, this.lines, offset));
  }

  build(node: unknown, path: Segment[], keyOffset?: number): unknown {
    const id = pathKey(path);
    const located: Located = { key: keyOffset };
    this.positions.set(id, located);
    if (node === null || node === undefined || this.tooDeep) return null;
    const n = node as YamlNode;
    located.value = n.range?.[0];
    if (++this.count > MAX_TREE_VALUES) {
      if (!this.tooLarge) this.problem(path, `the document expands to more than ${MAX_TREE_VALUES} values (aliases?)`, n.range?.[0]);
      this.tooLarge = true;
      return null;
    }
    if (isAlias(n)) {
      const target = this.targets.get(n);
      if (target === undefined) {
        this.problem(path, `unresolved alias *${n.source}`, n.range?.[0]);
        return null;
      }
      if (this.active.has(target)) {
        this.problem(path, `alias *${n.source} refers to itself`, n.range?.[0]);
        return null;
      }
      this.active.add(target);
      try {
        const value = this.build(target, path, keyOffset);
        // Point at the alias, not at the anchor, for problems on this path itself.
        this.positions.set(id, { key: keyOffset, value: n.range?.[0] });
        return value;
      } finally {
        this.active.delete(target);
      }
    }
    // A tag outside YAML's core schema (`!!set`, `!!omap`, `!!binary`, `!foo`): refused here,
    // named (yaml-tags.ts), and not read as what yaml made of it.
    if (!isReadTag(n.tag)) return unread(describeTagged(n.tag as string));
    // A core tag on a value it does not fit (`!!int 64.0`, `!!bool yes`): refused here too.
    const misfit = coreTagMisfit(n, isSecretPath(path));
    if (misfit !== undefined) return unread(misfit);
    if (isScalar(n)) {
      const value = n.value;
      // A number where a secret goes (a key written unquoted, `x-api-key: 73510094826613`) is
      // wrong whatever its text, and the text is never shown: no text kept, no exactness check.
      if (typeof value === 'number' && typeof n.source === 'string' && n.source !== '' && !isSecretPath(path)) {
        this.numberTexts.set(id, n.source);
        // `64.0000000000000001` read as 64, `-0` as 0: not the number written (yaml-numbers.ts).
        const inexact = inexactNumber(value, n.source);
        if (inexact !== undefined) return unread(inexact);
      }
      if (typeof value !== 'string') return value;
      const refuseEmpty = isAgentUrlPath(path) || isAgentHeaderPath(path);
      const result = expandEnv(value, this.env, { refuseEmpty });
      if (result.expanded) this.expanded.add(id);
      if (!result.ok) {
        this.envFailed.add(id);
        for (const p of result.problems) {
          this.problem(
            path,
            p.kind === 'missing'
              ? `environment variable \`${p.name}\` is not set`
              : p.kind === 'empty'
                ? isAgentUrlPath(path)
                  ? emptyUrlVariableMessage(p.name, value, this.env)
                  : emptyHeaderVariableMessage(p.name)
                : 'malformed `${...}` reference: expected ${NAME} with NAME of letters, digits and _ (write $${ for a literal ${)',
            n.range?.[0],
          );
        }
        return value;
      }
      return result.value;
    }
    if ((isSeq(n) || isMap(n)) && path.length >= MAX_CONFIG_NESTING) {
      if (!this.tooDeep) this.problem(path, `${TOO_DEEP} (through aliases)`, n.range?.[0]);
      this.tooDeep = true;
      return null;
    }
    if (isSeq(n)) {
      return n.items.map((item, index) => this.build(item, [...path, index]));
    }
    if (isMap(n)) {
      const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const pair of n.items) {
        const keyNode = pair.key as YamlNode | null;
        const keyAt = keyNode?.range?.[0] ?? (pair.value as YamlNode | null)?.range?.[0];
        if (keyNode !== null && !isReadTag(keyNode.tag)) {
          this.problem(path, `mapping keys must be plain strings, got ${describeTagged(keyNode.tag as string)}`, keyAt);
          continue;
        }
        const keyMisfit = keyNode === null ? undefined : coreTagMisfit(keyNode, false);
        if (keyMisfit !== undefined) {
          this.problem(path, `mapping keys must be plain strings, got ${keyMisfit}`, keyAt);
          continue;
        }
        const key = scalarKey(keyNode);
        if (key === undefined) {
          this.problem(path, 'mapping keys must be plain strings', keyAt);
          continue;
        }
        if (key === '<<' && isScalar(keyNode) && keyNode.type === Scalar.PLAIN) {
          // YAML 1.1's merge key: named, and the keys it would have brought not reported missing.
          this.problem([...path, key], MERGE_KEY_MESSAGE, keyAt);
          this.mergeParents.add(pathKey(path));
          continue;
        }
        if (Object.hasOwn(out, key)) {
          // yaml reports duplicates of identical keys; this catches e.g. `1:` and `"1":`.
          this.problem([...path, key], `duplicate key \`${key}\``, keyAt);
          continue;
        }
        out[key] = this.build(pair.value, [...path, key], keyAt);
      }
      return out;
    }
    this.problem(path, 'unsupported YAML node', (n as { range?: [number] }).range?.[0]);
    return null;
  }
}

/**
 * The problem of a YAML merge key (`<<: {...}`, `<<: *base`), which the config does not read
 * (YAML 1.2 has none). Before, it was `unknown key \`<<\`` with the list of known keys, plus
 * `missing required key \`url\`` for what it was meant to bring (a hostile new operator's trial
 * 45, Info: test/regressions/config-merge-key-reported-as-unknown-key.test.ts). A quoted `"<<"`
 * is an ordinary (unknown) key.
 */
const MERGE_KEY_MESSAGE = 'merge keys (<<) are not supported: write the keys out (an alias can stand for a whole mapping: `a: *base`)';

/** `agents.<agent>.url`: a `${VAR}` here may not be set to the empty string (`emptyUrlVariableMessage`). */
function isAgentUrlPath(path: readonly Segment[]): boolean {
  return path.length === 3 && path[0] === 'agents' && path[2] === 'url';
}

/** `agents.<agent>.headers.<name>`: a `${VAR}` here may not be set to the empty string (`emptyHeaderVariableMessage`). */
function isAgentHeaderPath(path: readonly Segment[]): boolean {
  return path.length === 4 && path[0] === 'agents' && path[2] === 'headers';
}

/**
 * The problem of a variable set to the empty string in an agent header value. The header
 * would go to the seller on every request without the part the variable stands for:
 * `Authorization: "Bearer ${SELLER_TOKEN}"` with `SELLER_TOKEN=""` passed `--check-config` and
 * sent `Authorization: Bearer ` (a hostile new user's trial;
 * test/regressions/empty-env-var-header-value.test.ts). Names the variable, never a value.
 */
function emptyHeaderVariableMessage(name: string): string {
  return (
    `environment variable \`${name}\` is set but empty ` +
    '(an empty variable in a header value is an error: the header would reach the seller without what the variable stands for, such as a token)'
  );
}

/**
 * The problem of a variable set to the empty string in an agent `url` (`raw`, the text as
 * written). In a url every part steers where the agent's requests and configured headers go,
 * and compose files and systemd `Environment=` lines make set-but-empty values easily: the
 * host of `https://${SELLER_HOST}/adcp/mcp` with `SELLER_HOST=""` became `adcp` (a new user's
 * trial 9, F4; test/regressions/empty-env-var-url-host.test.ts). Says when this variable's
 * empty value leaves the url without a host (url-authority.ts). Names the variable, never a value.
 */
function emptyUrlVariableMessage(name: string, raw: string, env: NodeJS.ProcessEnv): string {
  // This variable alone empty (any other empty one given a stand-in): is the host gone?
  const alone: NodeJS.ProcessEnv = Object.create(null) as NodeJS.ProcessEnv;
  for (const key of Object.keys(env)) alone[key] = env[key] === '' && key !== name ? 'x' : env[key];
  const expanded = expandEnv(raw, alone);
  const hostless = expanded.ok && urlAuthorityProblem(expanded.value) !== undefined;
  return (
    `environment variable \`${name}\` is set but empty${hostless ? ', which leaves the url without a host' : ''} ` +
    "(an empty variable in a url is an error: it changes where the agent's requests and headers go)"
  );
}

/**
 * What the tree holds in place of a value the config does not read, though yaml did: one with
 * a tag outside YAML's core schema (yaml-tags.ts), or a number that is not the one its text
 * writes (yaml-numbers.ts). No schema accepts a symbol, so the key it is at gets a problem of
 * its own, where `describe` shows `found` (the symbol's description) as what was found.
 */
function unread(found: string): symbol {
  return Symbol(found);
}

function scalarKey(node: YamlNode | null): string | undefined {
  if (node === null || !isScalar(node)) return undefined;
  if (typeof node.value === 'string') return node.value;
  if (node.value === null) return undefined;
  // A plain key like `123` or `true`: keep the text as written.
  return typeof node.source === 'string' && node.source !== '' ? node.source : String(node.value);
}

function pathKey(path: readonly PropertyKey[]): string {
  return JSON.stringify(path.map((s) => (typeof s === 'symbol' ? String(s) : s)));
}

/** `agents.acme.tools["get.products"].max_response_bytes`, `agents.acme.accept_encoding[1]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z0-9_-]+$/.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out;
}

function withPosition(problem: ConfigProblem, lines: LineCounter, offset: number | undefined): ConfigProblem {
  if (offset === undefined) return problem;
  const { line, col } = lines.linePos(offset);
  return { ...problem, line, column: col };
}

// ---------------------------------------------------------------------------------------
// Schema issues -> problems

/**
 * Whether a value at `path` may hold a secret, so that a problem there never shows it, whatever
 * its YAML type: `resume` and `resume.secret`, `agents.<agent>.headers` and what is under it
 * (docs/configuration.md: "Never echoed in errors", "Values are never echoed in errors").
 * Strings there are described as `a string`, numbers as `a number`, booleans as `a boolean`.
 * A secret written as an unquoted number (`resume.secret: 9182...`, `x-api-key: 73510094826613`)
 * was shown as written, on stderr and in the `config reload failed` log line, where log
 * redaction cannot know it (a hostile new user's trial, F1;
 * test/regressions/config-error-echoes-numeric-secret.test.ts).
 */
function isSecretPath(path: readonly PropertyKey[]): boolean {
  return (
    (path[0] === 'resume' && (path.length === 1 || (path.length === 2 && path[1] === 'secret'))) ||
    (path.length >= 3 && path[0] === 'agents' && path[2] === 'headers')
  );
}

/**
 * What was found, for "got ...". Values at a secret path (`isSecretPath`: `secret`), of any
 * type, and environment-derived strings are described by type only. A number is shown as written in the YAML (`written`, its scalar's text: `1e30`, not
 * `1e+30`; `9007199254740993`, not the double `9007199254740992`; a new user's trial), at most
 * 40 characters; without it, as JavaScript writes the number. A value the config does not read
 * (`unread`) is shown as its symbol says: `binary data (!!binary)`, not "a mapping", which
 * `!!binary aGVsbG8=` was reported as (a new user's trial, 2026-12-03, F10); `a set (!!set)`;
 * `64.0000000000000001`, not 64.
 */
function describe(value: unknown, secret: boolean, written?: string): string {
  if (value === null) return 'null (an empty value)';
  if (typeof value === 'string') {
    if (secret) return 'a string';
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'symbol') return value.description ?? 'a value the config does not read'; // unread()
  if (secret && (typeof value === 'number' || typeof value === 'boolean')) return `a ${typeof value}`;
  if (typeof value === 'number' && written !== undefined) return written.length > 40 ? `${written.slice(0, 40)}…` : written;
  if (typeof value === 'number') return Number.isNaN(value) ? '.nan' : Number.isFinite(value) ? String(value) : value > 0 ? '.inf' : '-.inf';
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

function lookup(tree: unknown, path: readonly PropertyKey[]): { found: boolean; value: unknown; parentIsObject: boolean } {
  let current: unknown = tree;
  let parentIsObject = true;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return { found: false, value: undefined, parentIsObject: false };
    parentIsObject = true;
    const key = segment as string | number;
    if (!Object.hasOwn(current, key)) return { found: false, value: undefined, parentIsObject };
    current = (current as Record<string | number, unknown>)[key];
  }
  return { found: true, value: current, parentIsObject };
}

/** The key and parent path of each unknown-key problem, whose message is made when read (`unknownKeyProblem`). */
const unknownKeys = new WeakMap<ConfigProblem, { readonly key: string; readonly parent: readonly PropertyKey[] }>();

/**
 * `problem` (path, line, column) as the problem of unknown key `key` under `parent`: its
 * message, with the "did you mean" (suggest.ts), is computed when first read (problem-list.ts).
 */
export function unknownKeyProblem(problem: ConfigProblem, key: string, parent: readonly PropertyKey[]): ConfigProblem {
  unknownKeys.set(problem, { key, parent });
  return deferMessage(problem, () => unknownKeyMessage(key, parent));
}

/** The key and parent path of a problem made by `unknownKeyProblem` whose message was not read yet (else undefined). */
export function pendingUnknownKey(problem: ConfigProblem): { readonly key: string; readonly parent: readonly PropertyKey[] } | undefined {
  const descriptor = Object.getOwnPropertyDescriptor(problem, 'message');
  return descriptor?.get === undefined ? undefined : unknownKeys.get(problem);
}

function issuesToProblems(
  issues: readonly z.core.$ZodIssue[],
  tree: unknown,
  builder: TreeBuilder,
  lines: LineCounter,
): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const positionOf = (path: readonly PropertyKey[], prefer: 'key' | 'value'): number | undefined => {
    // The node itself, or the nearest ancestor that exists in the file.
    for (let n = path.length; n >= 0; n--) {
      const at = builder.positions.get(pathKey(path.slice(0, n)));
      if (at === undefined) continue;
      if (n < path.length) return n === 0 ? undefined : (at.key ?? at.value);
      return prefer === 'key' ? (at.key ?? at.value) : (at.value ?? at.key);
    }
    return undefined;
  };
  const add = (path: readonly PropertyKey[], message: string, prefer: 'key' | 'value'): void => {
    out.push(withPosition({ path: formatPath(path), message }, lines, positionOf(path, prefer)));
  };

  for (const issue of issues) {
    const path = issue.path;
    if (builder.envFailed.has(pathKey(path))) continue;
    if (issue.code === 'unrecognized_keys') {
      // The "did you mean" only when the message is read: for the problems shown (problem-list.ts).
      for (const key of issue.keys) {
        const at = [...path, key];
        out.push(unknownKeyProblem(withPosition({ path: formatPath(at), message: '' }, lines, positionOf(at, 'key')), key, path));
      }
      continue;
    }
    if (issue.code === 'custom') {
      const atKey = (issue.params as { at?: string } | undefined)?.at === 'key';
      add(path, issue.message, atKey ? 'key' : 'value');
      continue;
    }
    const found = lookup(tree, path);
    if (!found.found && found.parentIsObject) {
      // A key a merge key was meant to bring: the merge key's problem says it all.
      if (builder.mergeParents.has(pathKey(path.slice(0, -1)))) continue;
      const key = String(path[path.length - 1] ?? '');
      const hint = path.length === 1 && key === 'agents' ? ' (at least one agent is required)' : '';
      add(path, path.length === 0 ? issue.message : `missing required key \`${key}\`${hint}`, 'key');
      continue;
    }
    const fromEnv = builder.expanded.has(pathKey(path));
    const secret = isSecretPath(path) || fromEnv;
    let got = `, got ${describe(found.value, secret, builder.numberTexts.get(pathKey(path)))}`;
    if (typeof found.value === 'string' && isSecretPath(path) && issue.code !== 'invalid_type') {
      got = ''; // a secret's problem is its length or characters: "got a string" adds nothing
    } else if (typeof found.value === 'string' && fromEnv) {
      const kind = nonStringScalarAt(path);
      got = `, got a string from \${...}${kind === undefined ? ' (a substituted value is always a string)' : `: ${variableCannotSet(kind)}`}`;
    }
    add(path, `${issue.message}${got}`, 'value');
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Resolution and freezing

/**
 * A URL whose setters throw, so the frozen config's agent URL can't be changed in place
 * (`Object.freeze` does not protect a URL's internal state). `searchParams` returns a copy.
 */
class FrozenURL extends URL {}
for (const name of ['href', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash']) {
  const descriptor = Object.getOwnPropertyDescriptor(URL.prototype, name);
  Object.defineProperty(FrozenURL.prototype, name, {
    get: descriptor?.get,
    set: frozenUrl,
    enumerable: descriptor?.enumerable ?? true,
    configurable: false,
  });
}
Object.defineProperty(FrozenURL.prototype, 'searchParams', {
  get(this: URL): URLSearchParams {
    return new URLSearchParams(this.search);
  },
  enumerable: true,
  configurable: false,
});

function frozenUrl(): never {
  throw new TypeError('the config is frozen: copy the URL (new URL(agent.url)) before changing it');
}

/** A Map whose mutators throw (`Object.freeze` does not protect a Map's entries). */
class FrozenMap<K, V> extends Map<K, V> {
  constructor(entries: Iterable<readonly [K, V]>) {
    super();
    for (const [k, v] of entries) super.set(k, v);
    Object.freeze(this);
  }
  override set(_key: K, _value: V): this {
    throw new TypeError('the config is frozen: agents cannot be added or replaced');
  }
  override delete(_key: K): boolean {
    throw new TypeError('the config is frozen: agents cannot be removed');
  }
  override clear(): void {
    throw new TypeError('the config is frozen: agents cannot be removed');
  }
}

function overridesOf(raw: Partial<Record<keyof Limits, unknown>>): ToolOverrides {
  const out: Record<string, unknown> = {};
  for (const key of LIMIT_KEYS) {
    if (raw[key] !== undefined) out[key] = raw[key];
  }
  return Object.freeze(out) as ToolOverrides;
}

/** The guard keys set on `raw` over `base` (defaults: the built-ins; an agent: the resolved defaults). */
function resolveGuard(raw: Partial<GuardSettings>, base: GuardSettings): GuardSettings {
  return Object.freeze({
    max_buffered_response_bytes: raw.max_buffered_response_bytes ?? base.max_buffered_response_bytes,
    backoff_after_breaches: raw.backoff_after_breaches ?? base.backoff_after_breaches,
    backoff_base_ms: raw.backoff_base_ms ?? base.backoff_base_ms,
    backoff_max_ms: raw.backoff_max_ms ?? base.backoff_max_ms,
  });
}

/** An agent being assembled (`ConfigAssembler`): its levels, and the tools and headers added so far. */
interface AgentInProgress {
  readonly name: string;
  readonly raw: RawAgent;
  readonly level: ResolvedLevel;
  readonly tools: Record<string, ToolOverrides>;
  /** Filled with `Map.prototype.set` while assembling (its own `set` throws), frozen already. */
  readonly toolLevels: FrozenMap<string, ResolvedLevel>;
  readonly headers: Record<string, string>;
  /** Overrides (as JSON, keys in `LIMIT_KEYS` order) -> the one object and level tools with them share. */
  readonly shared: Map<string, { readonly overrides: ToolOverrides; readonly level: ResolvedLevel }>;
}

/**
 * Builds the frozen `GatewayConfig` from a validated raw config, in pieces: the top-level keys
 * (constructor), then each agent (`addAgent`), its headers (`addHeaders`) and tools
 * (`addTools`) in as many calls as the caller likes, then `finish`. `resolveConfig` feeds it a
 * whole tree at once; a reload feeds it the pages a worker thread sends (config/off-thread.ts),
 * one page per event-loop turn, so that no turn resolves more than a page of a 30,000-tool
 * file (a hostile new user's trial 19, M1: test/regressions/config-reload-blocks-event-loop.test.ts).
 * The result is the same object either way (call > tool > agent > defaults > built-in).
 */
export class ConfigAssembler {
  private readonly defaultsLevel: ResolvedLevel;
  private readonly defaultRequest: { readonly max_request_bytes: number; readonly max_batch_messages: number };
  private readonly defaultGuard: GuardSettings;
  private readonly agents: FrozenMap<string, AgentConfig> = new FrozenMap([]);
  private current: AgentInProgress | undefined;

  /**
   * @param raw the validated tree (its `agents` are not read: add them with `addAgent`).
   * @param env the environment (`ADCP_GATEWAY_RESUME_SECRET` when the file sets no secret).
   * @param source stored as `GatewayConfig.source`.
   */
  constructor(
    private readonly raw: RawConfig,
    private readonly env: NodeJS.ProcessEnv,
    private readonly source: string | undefined,
  ) {
    const d = raw.defaults ?? {};
    const builtinLevel: ResolvedLevel = {
      limits: {
        max_response_bytes: BUILTIN_DEFAULTS.max_response_bytes,
        max_sse_event_bytes: BUILTIN_DEFAULTS.max_response_bytes,
        max_json_depth: BUILTIN_DEFAULTS.max_json_depth,
        max_json_nodes: BUILTIN_DEFAULTS.max_json_nodes,
        response_deadline_ms: BUILTIN_DEFAULTS.response_deadline_ms,
        sse_idle_timeout_ms: BUILTIN_DEFAULTS.sse_idle_timeout_ms,
        sse_deadline_ms: BUILTIN_DEFAULTS.sse_deadline_ms,
        dedupe_text: BUILTIN_DEFAULTS.dedupe_text,
      },
      sseEventExplicit: undefined,
      sseEventOwn: false,
    };
    this.defaultsLevel = resolveLevel(builtinLevel, overridesOf(d));
    this.defaultRequest = Object.freeze({
      max_request_bytes: d.max_request_bytes ?? BUILTIN_DEFAULTS.max_request_bytes,
      max_batch_messages: d.max_batch_messages ?? BUILTIN_DEFAULTS.max_batch_messages,
    });
    this.defaultGuard = resolveGuard(d, BUILTIN_GUARD);
  }

  /** Starts agent `name` (the one before it is done); its `headers` and `tools`, if `raw` has them, are added too. */
  addAgent(name: string, raw: RawAgent): void {
    this.endAgent();
    this.current = {
      name,
      raw,
      level: resolveLevel(this.defaultsLevel, overridesOf(raw)),
      tools: Object.create(null) as Record<string, ToolOverrides>,
      toolLevels: new FrozenMap([]),
      headers: Object.create(null) as Record<string, string>,
      shared: new Map(),
    };
    if (raw.headers != null) this.addHeaders(Object.entries(raw.headers));
    if (raw.tools != null) this.addTools(Object.entries(raw.tools));
  }

  /** Headers of the agent last started (names lower-cased). */
  addHeaders(entries: Iterable<readonly [string, string]>): void {
    const agent = this.agentInProgress();
    for (const [header, value] of entries) agent.headers[header.toLowerCase()] = value;
  }

  /**
   * Tools of the agent last started, each resolved over the agent's level. Tools with the same
   * overrides (thousands sharing one `&limits` anchor) share one frozen overrides object and one
   * resolved level: a 30,000-tool file holds two objects for them, not 60,000.
   */
  addTools(entries: Iterable<readonly [string, RawTool]>): void {
    const agent = this.agentInProgress();
    for (const [tool, rawTool] of entries) {
      const fresh = overridesOf(rawTool);
      const key = JSON.stringify(fresh);
      let shared = agent.shared.get(key);
      if (shared === undefined) {
        shared = { overrides: fresh, level: resolveLevel(agent.level, fresh) };
        agent.shared.set(key, shared);
      }
      agent.tools[tool] = shared.overrides;
      Map.prototype.set.call(agent.toolLevels, tool, shared.level);
    }
  }

  /** The frozen config (call once, after the last agent), with `fingerprint` recorded for it ({@link configFingerprint}). */
  finish(fingerprint: ConfigFingerprint): GatewayConfig {
    this.endAgent();
    const raw = this.raw;
    const envSecret = this.env[RESUME_SECRET_ENV];
    const listenHost = raw.listen?.host ?? DEFAULT_LISTEN.host;
    const defaults = { ...this.defaultsLevel.limits, ...this.defaultGuard, ...this.defaultRequest };
    // The defaults' level, for the event limit `defaults` sets itself (resolve.ts defaultsOwnSseEventBytes).
    Object.defineProperty(defaults, RESOLUTION, { value: this.defaultsLevel, enumerable: false, writable: false, configurable: false });
    const config: GatewayConfig = Object.freeze({
      listen: Object.freeze({ host: listenHost, port: raw.listen?.port ?? DEFAULT_LISTEN.port }),
      // ops_listen.host defaults to the gateway's own host.
      ops_listen: raw.ops_listen ? Object.freeze({ host: raw.ops_listen.host ?? listenHost, port: raw.ops_listen.port }) : undefined,
      defaults: Object.freeze(defaults),
      agents: this.agents,
      resume: Object.freeze({
        secret: raw.resume?.secret ?? (typeof envSecret === 'string' && envSecret !== '' ? envSecret : undefined),
        ttl_ms: raw.resume?.ttl_ms ?? DEFAULT_RESUME_TTL_MS,
      }),
      log_level: raw.log_level ?? DEFAULT_LOG_LEVEL,
      shutdown_grace_ms: raw.shutdown_grace_ms ?? DEFAULT_SHUTDOWN_GRACE_MS,
      shutdown_sse_retry_ms: raw.shutdown_sse_retry_ms ?? DEFAULT_SHUTDOWN_SSE_RETRY_MS,
      request_timeout_ms: raw.request_timeout_ms ?? DEFAULT_REQUEST_TIMEOUT_MS,
      allowed_origins: Object.freeze([...(raw.allowed_origins ?? [])]),
      allowed_hosts: Object.freeze([...(raw.allowed_hosts ?? [])]),
      source: this.source,
    });
    fingerprints.set(config, fingerprint);
    return config;
  }

  private agentInProgress(): AgentInProgress {
    if (this.current === undefined) throw new Error('ConfigAssembler: no agent started');
    return this.current;
  }

  private endAgent(): void {
    const a = this.current;
    if (a === undefined) return;
    this.current = undefined;
    const raw = a.raw;
    const resolution: AgentResolution = Object.freeze({ agent: a.level, tools: a.toolLevels });
    const agent: AgentConfig = {
      name: a.name,
      url: Object.freeze(new FrozenURL(raw.url)),
      headers: Object.freeze(a.headers),
      max_request_bytes: raw.max_request_bytes ?? this.defaultRequest.max_request_bytes,
      max_batch_messages: raw.max_batch_messages ?? this.defaultRequest.max_batch_messages,
      max_call_response_bytes: raw.max_call_response_bytes,
      accept_encoding: Object.freeze([...(raw.accept_encoding ?? DEFAULT_ACCEPT_ENCODING)]),
      tls_insecure_skip_verify: raw.tls_insecure_skip_verify === true,
      guard: resolveGuard(raw, this.defaultGuard),
      limits: a.level.limits,
      tools: Object.freeze(a.tools),
    };
    Object.defineProperty(agent, RESOLUTION, { value: resolution, enumerable: false, writable: false, configurable: false });
    // The seller endpoint as requests in flight and remembered cancellations are scoped (agent-url-key.ts agentKeyOf): made once here.
    Object.defineProperty(agent, AGENT_URL_KEY, { value: agentUrlKey(agent.url), enumerable: false, writable: false, configurable: false });
    Map.prototype.set.call(this.agents, a.name, Object.freeze(agent));
  }
}

function resolveConfig(raw: RawConfig, env: NodeJS.ProcessEnv, source: string | undefined, fingerprint: ConfigFingerprint): GatewayConfig {
  const assembler = new ConfigAssembler(raw, env, source);
  const rawAgents: Record<string, RawAgent> = raw.agents ?? {};
  for (const name of Object.keys(rawAgents)) assembler.addAgent(name, rawAgents[name] as RawAgent);
  return assembler.finish(fingerprint);
}

// ---------------------------------------------------------------------------------------

function sortProblems(problems: ConfigProblem[]): ConfigProblem[] {
  return problems
    .map((p, i) => ({ p, i }))
    .sort((a, b) => (a.p.line ?? Infinity) - (b.p.line ?? Infinity) || (a.p.column ?? 0) - (b.p.column ?? 0) || a.i - b.i)
    .map(({ p }) => p);
}

/**
 * `ops_listen.port` equal to `listen.port` on an overlapping address (the same host, either
 * host a wildcard, or a common address however spelled: `localhost` and `127.0.0.1`,
 * `::ffff:127.0.0.1` and `127.0.0.1`; listen-overlap.ts) would fail at start-up with
 * EADDRINUSE: report it at `ops_listen.port` instead. Port 0 (any free port) never collides.
 * Looks at the tree as written, so it runs alongside the schema's problems; values the schema
 * rejects are skipped.
 */
function opsListenProblems(tree: unknown, builder: TreeBuilder, lines: LineCounter): ConfigProblem[] {
  const { listen, ops } = writtenListeners(tree);
  if (listen === undefined || ops === undefined || listen.port !== ops.port) return [];
  const overlap = listenOverlap(listen.host, ops.host);
  if (overlap === undefined) return [];

  // Hosts are not echoed: like any string value they may come from a ${VAR}.
  const where =
    overlap === 'same_host'
      ? 'on the same host'
      : overlap === 'same_address'
        ? 'and both hosts take the same address (localhost is 127.0.0.1 and ::1; an IPv4-mapped IPv6 address ::ffff:a.b.c.d is a.b.c.d)'
        : `and ${overlap === 'first_wildcard' ? 'listen.host' : 'ops_listen.host'} is a wildcard address (0.0.0.0 or ::, every address)`;
  const at = builder.positions.get(pathKey(['ops_listen', 'port']));
  return [
    withPosition(
      {
        path: 'ops_listen.port',
        message:
          `must differ from listen.port (${ops.port}${listen.portIsDefault ? ', the default' : ''}) ${where}: ` +
          'the second listener would fail with EADDRINUSE (use another port, or 0 for any free port)',
      },
      lines,
      at?.value ?? at?.key,
    ),
  ];
}

/**
 * An agent `url` that names the gateway's own `listen` or `ops_listen` address (agent-url-self.ts):
 * a problem at `agents.<agent>.url`. A listener on port 0 is skipped (its port is known only
 * once it listens), as are values the schema rejects and a url that has a problem already.
 * Looks at the tree as written (values after `${VAR}` expansion), beside the schema's problems.
 * `running`: on a reload, the listeners the gateway has as it runs (start-up host, bound port),
 * checked after the file's: a change of `listen` applies only after a restart, and a reload
 * checked the file's alone, so a file moving `listen.port` passed with an agent url naming the
 * running port (a hostile new operator's trial 45, L4:
 * test/regressions/reload-self-url-checked-against-file-listen.test.ts).
 */
function agentUrlSelfProblems(tree: unknown, builder: TreeBuilder, lines: LineCounter, earlier: readonly ConfigProblem[], running: readonly OwnListener[]): ConfigProblem[] {
  const agents = lookup(tree, ['agents']).value;
  if (agents === null || typeof agents !== 'object') return [];
  const { listen, ops } = writtenListeners(tree);
  const listeners = [listen, ops, ...running].filter((l): l is OwnListener => l !== undefined);
  if (listeners.length === 0) return [];

  const out: ConfigProblem[] = [];
  for (const name of Object.keys(agents)) {
    const path = ['agents', name, 'url'];
    const url = lookup(tree, path).value;
    if (typeof url !== 'string') continue;
    const where = formatPath(path);
    if (earlier.some((p) => p.path === where)) continue;
    const message = agentUrlSelfProblem(url, listeners);
    if (message === undefined) continue;
    const at = builder.positions.get(pathKey(path));
    out.push(withPosition({ path: where, message }, lines, at?.value ?? at?.key));
  }
  return out;
}

/** A port a listener takes as written: 1 .. 65535 (0 is any free port). */
function isListenerPort(port: unknown): port is number {
  return typeof port === 'number' && Number.isInteger(port) && port > 0 && port <= 65_535;
}

/**
 * The `listen` and `ops_listen` listeners as the tree writes them, defaults filled in
 * (`listen`'s host and port; `ops_listen`'s host is `listen`'s): each only when its host is a
 * non-empty string and its port 1 .. 65535 (port 0, any free port, and values the schema
 * rejects give none). What opsListenProblems and agentUrlSelfProblems compare.
 */
function writtenListeners(tree: unknown): { listen: OwnListener | undefined; ops: OwnListener | undefined } {
  const listenHostAt = lookup(tree, ['listen', 'host']);
  const listenHost = listenHostAt.found ? listenHostAt.value : DEFAULT_LISTEN.host;
  const listenPortAt = lookup(tree, ['listen', 'port']);
  const listenPort = listenPortAt.found ? listenPortAt.value : DEFAULT_LISTEN.port;
  const listen: OwnListener | undefined =
    isListenerPort(listenPort) && typeof listenHost === 'string' && listenHost !== '' ? { key: 'listen', host: listenHost, port: listenPort, portIsDefault: !listenPortAt.found } : undefined;
  const opsAt = lookup(tree, ['ops_listen']);
  if (!opsAt.found || opsAt.value === null || typeof opsAt.value !== 'object') return { listen, ops: undefined };
  const opsPort = lookup(tree, ['ops_listen', 'port']).value;
  const opsHostAt = lookup(tree, ['ops_listen', 'host']);
  const opsHost = opsHostAt.found ? opsHostAt.value : listenHost;
  const ops: OwnListener | undefined = isListenerPort(opsPort) && typeof opsHost === 'string' && opsHost !== '' ? { key: 'ops_listen', host: opsHost, port: opsPort, portIsDefault: false } : undefined;
  return { listen, ops };
}

/**
 * yaml's options for a config file. Duplicate keys are reported by the TreeBuilder, with their
 * YAML path, next to every other problem (yaml's own check names only a position, and stops
 * everything else).
 */
const YAML_OPTIONS = { uniqueKeys: false } as const;

/**
 * Step 1: `text` read as the config's one YAML document (yaml-document.ts), with the `%YAML`
 * directives of another version as problems (`versionProblems`: validation goes on); or the
 * problems that stop here (yaml's syntax errors, a second document, too deep), in file order,
 * and where yaml's errors show an unquoted `${VAR}` in flow context (`braces`:
 * yaml-flow-env.ts). In that case the document is not returned, so that it can be collected
 * while the caller parses the file again.
 */
function readYaml(
  text: string,
  lines: LineCounter,
): { doc: Document.Parsed; versionProblems: ConfigProblem[]; problems?: undefined } | { problems: ConfigProblem[]; braces: ReadonlyMap<number, number> } {
  const parsedText = parseConfigYaml(text, lines, YAML_OPTIONS);
  const textProblems = parsedText.problems.map((p) => withPosition({ path: '', message: p.message }, lines, p.offset));
  if (!parsedText.ok) return { problems: textProblems, braces: new Map() };
  const versionProblems = parsedText.versionProblems.map((p) => withPosition({ path: '', message: p.message }, lines, p.offset));
  const doc = parsedText.doc;
  const yamlProblems = yamlSyntaxProblems(doc, text, lines);
  if (yamlProblems.length > 0 || textProblems.length > 0) {
    return { problems: sortProblems([...yamlProblems, ...textProblems, ...versionProblems]), braces: flowReferenceCandidates(text, doc) };
  }
  return { doc, versionProblems };
}

/**
 * yaml's errors and warnings in `doc` (parsed from `text`), as problems at their line and
 * column: `YAML: ` and the first line of yaml's message. Its warnings about a tag outside the
 * core schema (`Unresolved tag: !foo`), or a core tag on a value it does not fit (`!!int 64.0`),
 * are left to the TreeBuilder, which refuses every such value at its YAML path (yaml-tags.ts).
 */
function yamlSyntaxProblems(doc: Document.Parsed, text: string, lines: LineCounter): ConfigProblem[] {
  const warnings = doc.warnings.filter((w) => !isRefusedTagWarning(w, text, doc));
  return [...doc.errors, ...warnings].map((e) => withPosition({ path: '', message: `YAML: ${e.message.split('\n')[0] ?? e.message}` }, lines, e.pos[0]));
}

/**
 * Why a `${VAR}` cannot set a setting of `kind`, and the fix. Before, an unquoted one in a flow
 * mapping was told to be quoted (`write "${NUM}"`), and once quoted refused as "a substituted
 * value is always a string" (a hostile new operator's trial 45, Info:
 * test/regressions/config-env-number-advice-contradicts-itself.test.ts).
 */
function variableCannotSet(kind: 'number' | 'boolean'): string {
  return kind === 'number'
    ? 'a ${VAR} always makes a string, and this setting takes a number: write the number itself'
    : 'a ${VAR} always makes a string, and this setting takes true or false: write true or false itself';
}

/** The problem of an unquoted flow `${VAR}`: quote it, or, where a number or boolean goes, write the value (`variableCannotSet`). */
function flowReferenceMessage(r: UnquotedFlowReference): string {
  const kind = nonStringScalarAt(r.path);
  if (kind === undefined) return unquotedFlowReferenceMessage(r, isSecretPath(r.path));
  const names = r.references.map((name) => `\`${name}\``).join(', ');
  return `${names} cannot be used here: ${variableCannotSet(kind)}`;
}

/**
 * The problems of a file with unquoted `${VAR}` references in flow mappings or lists: one per
 * value holding them, at its YAML path and the first `${` (never echoing a value at a secret
 * path: `isSecretPath`), and the file's other syntax problems, read with the references masked
 * (same offsets: yaml-flow-env.ts).
 */
function unquotedFlowProblems(flow: UnquotedFlowReferences, text: string, lines: LineCounter): ConfigProblem[] {
  const at = (p: { offset: number; message: string }): ConfigProblem => withPosition({ path: '', message: p.message }, lines, p.offset);
  return [
    ...flow.references.map((r) => withPosition({ path: formatPath(r.path), message: flowReferenceMessage(r) }, lines, r.offset)),
    ...yamlSyntaxProblems(flow.parsed.doc, text, lines),
    ...flow.parsed.problems.map(at),
    ...flow.parsed.versionProblems.map(at),
  ];
}

function buildConfig(text: string, env: NodeJS.ProcessEnv, source: string | undefined, label: string | undefined): GatewayConfig {
  const { raw, fingerprint } = checkConfigText(text, env, label);
  return resolveConfig(raw, env, source, fingerprint);
}

/**
 * What a config was made from: the SHA-256 of its text (UTF-8, hex) and each environment
 * variable the loader read while checking it, with its value then (undefined: unset). The same
 * text and the same values make the same config, so a reload that finds both unchanged has
 * nothing to do (reload.ts). The values are kept in memory only, never logged.
 */
export interface ConfigFingerprint {
  readonly digest: string;
  readonly env: ReadonlyArray<readonly [string, string | undefined]>;
}

const fingerprints = new WeakMap<GatewayConfig, ConfigFingerprint>();

/** The fingerprint of a config `parseConfig`, `loadConfigFile` or a reload made (undefined for one built otherwise). */
export function configFingerprint(config: GatewayConfig): ConfigFingerprint | undefined {
  return fingerprints.get(config);
}

/** SHA-256 of `text` as UTF-8, hex. */
export function textDigest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Whether `env` gives every variable of `fingerprint` the value it had. */
export function sameEnvValues(fingerprint: ConfigFingerprint, env: NodeJS.ProcessEnv): boolean {
  return fingerprint.env.every(([name, value]) => (Object.hasOwn(env, name) ? env[name] : undefined) === value);
}

/** `env` seen through a proxy that records each variable read (name -> value then). */
function recordingEnv(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; reads: Map<string, string | undefined> } {
  const reads = new Map<string, string | undefined>();
  const note = (name: string | symbol): void => {
    if (typeof name === 'string' && !reads.has(name)) reads.set(name, Object.hasOwn(env, name) ? env[name] : undefined);
  };
  const proxy = new Proxy(env, {
    get(target, name, receiver) {
      note(name);
      return Reflect.get(target, name, receiver) as unknown;
    },
    getOwnPropertyDescriptor(target, name) {
      note(name);
      return Reflect.getOwnPropertyDescriptor(target, name);
    },
  });
  return { env: proxy, reads };
}

/**
 * Steps 1 to 4 of the loader: `text` checked, nothing resolved. Returns the validated tree
 * (null-prototype mappings; strings, numbers, booleans, lists and mappings only, so it can be
 * posted between threads) and the config's fingerprint (`digest`: the text's {@link textDigest},
 * when the caller has it already). `running`: a reload's running listeners, which agent urls
 * may not name either (`agentUrlSelfProblems`).
 *
 * @throws ConfigError (source `label`) with every problem.
 */
export function checkConfigText(
  text: string,
  rawEnv: NodeJS.ProcessEnv,
  label: string | undefined,
  digest = textDigest(text),
  running: readonly OwnListener[] = [],
): { raw: RawConfig; fingerprint: ConfigFingerprint } {
  const { env, reads } = recordingEnv(rawEnv);
  const raw = validate(text, env, label, running);
  return { raw, fingerprint: { digest, env: [...reads] } };
}

function validate(text: string, env: NodeJS.ProcessEnv, label: string | undefined, running: readonly OwnListener[]): RawConfig {
  // Same cap as loadConfigFile, for text given directly (parseConfig). A UTF-16 unit is 1 to 3
  // UTF-8 bytes, so the length alone settles most cases without counting bytes.
  if (text.length > MAX_CONFIG_FILE_BYTES || (text.length * 3 > MAX_CONFIG_FILE_BYTES && Buffer.byteLength(text, 'utf8') > MAX_CONFIG_FILE_BYTES)) {
    throw new ConfigError([{ path: '', message: tooLargeMessage(Buffer.byteLength(text, 'utf8')) }], label);
  }
  const lines = new LineCounter();
  const read = readYaml(text, lines);
  if (read.problems !== undefined) {
    // An unquoted `${VAR}` inside `{...}` or `[...]` is YAML syntax there: named, at its value's
    // path, with the file's other syntax errors and not yaml's cascade of messages (yaml-flow-env.ts).
    const flow = unquotedFlowReferences(text, read.braces, YAML_OPTIONS);
    throw new ConfigError(flow === undefined ? read.problems : sortProblems(unquotedFlowProblems(flow, text, lines)), label);
  }
  const { doc, versionProblems } = read;

  const builder = new TreeBuilder(doc, lines, env);
  const tree = builder.build(doc.contents, []);
  const problems: ConfigProblem[] = [...versionProblems, ...builder.problems];
  if (builder.tooLarge || builder.tooDeep) throw new ConfigError(sortProblems(problems), label);
  const contents = doc.contents as YamlNode | null;
  if (contents === null || (isScalar(contents) && contents.value === null && contents.source === '' && contents.tag === undefined)) {
    // Nothing but comments, whitespace or a document marker (`---`). An explicit `~` or
    // `null` goes on to the schema, which says a mapping is expected.
    const what = text.length === 0 ? 'the file is empty' : 'the file has no settings (only comments or whitespace)';
    problems.push({ path: '', message: `${what}: at least an \`agents:\` block with one agent is required` });
    throw new ConfigError(sortProblems(problems), label);
  }

  const parsed = configSchema.safeParse(tree);
  if (!parsed.success) problems.push(...issuesToProblems(parsed.error.issues, tree, builder, lines));
  // The `__proto__` entries the schema's records skip, name and value (proto-keys.ts).
  problems.push(...issuesToProblems(protoKeyIssues(tree), tree, builder, lines));

  // The resume secret may come from the environment instead of the file: same rule. Set but
  // empty is an error too, never "unset": it was, and a deployment whose secret variable
  // expanded to nothing (`ADCP_GATEWAY_RESUME_SECRET=$UNSET_VAR`) ran with a random
  // per-process secret, its resume tokens dying with the process and refused by every other
  // replica, with only a warning (a hostile new user's trial 12, L8;
  // test/regressions/empty-resume-secret-env-treated-unset.test.ts). The value is never echoed.
  const fileSecret = lookup(tree, ['resume', 'secret']);
  const envSecret = env[RESUME_SECRET_ENV];
  if (!fileSecret.found && envSecret === '') {
    problems.push({
      path: 'resume.secret',
      message: `the environment variable ${RESUME_SECRET_ENV} is set but empty: set it to at least ${MIN_RESUME_SECRET_LENGTH} characters, or unset it for a random per-process secret`,
    });
  } else if (!fileSecret.found && typeof envSecret === 'string' && envSecret.length < MIN_RESUME_SECRET_LENGTH) {
    problems.push({
      path: 'resume.secret',
      message: `the environment variable ${RESUME_SECRET_ENV} must be at least ${MIN_RESUME_SECRET_LENGTH} characters long`,
    });
  }

  problems.push(...opsListenProblems(tree, builder, lines));
  problems.push(...agentUrlSelfProblems(tree, builder, lines, problems, running));

  if (problems.length > 0 || !parsed.success) throw new ConfigError(sortProblems(problems), label);
  // The schema only validates (no transforms), so the validated tree is the raw config; use
  // our own null-prototype tree rather than zod's copy so names like `__proto__` stay data.
  return tree as RawConfig;
}
