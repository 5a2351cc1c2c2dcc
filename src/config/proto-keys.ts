/**
 * The config's `__proto__` keys where zod never looks: the schema's records (`agents`, an
 * agent's `headers` and `tools`: schema.ts) skip an own `__proto__` key altogether, name and
 * value, so that it cannot replace the prototype of the object they build (zod 4,
 * `$ZodRecord`). The loader keeps its own null-prototype tree (load.ts), so such an entry
 * reached the config unchecked:
 *
 * - `headers: { __proto__: ... }` passed `--check-config` and was silently never sent (every
 *   header object after the loader's takes it as its prototype: config/owned-headers.ts;
 *   review 36, F4: test/regressions/config-header-proto-never-sent.test.ts);
 * - `tools: { __proto__: { max_response_bytes: "abc", typo: 1 } }` passed, and a call of a tool
 *   named `__proto__` got `"abc"` as its limit;
 * - an agent named `__proto__` (no valid name) with `url: 5` threw a TypeError, not a config
 *   problem (test/regressions/config-proto-key-skips-validation.test.ts).
 *
 * This checks those entries as the schema checks the others, in issues the loader reports as
 * it reports the schema's (load.ts issuesToProblems): a header of that name is refused; a tool
 * of that name (a valid tool name, kept as data) has its limits validated; an agent of that
 * name is refused as no valid agent name, and what it holds is validated too.
 */
import type { z } from 'zod';
import { configuredHeaderRefusal } from './owned-headers.js';
import { agentSchema, invalidAgentNameMessage, toolSchema } from './schema.js';

const PROTO = '__proto__';

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

/** Whether `value` is a mapping (the loader's tree: a null-prototype object) with an own `__proto__` key. */
function holdsProto(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, PROTO);
}

/** A problem about the `__proto__` key under `parent` itself (the loader points at the key). */
function keyIssue(parent: Path, message: string): Issue {
  return { code: 'custom', path: [...parent, PROTO], params: { at: 'key' }, message, input: undefined } as Issue;
}

/** `schema`'s issues for `value`, at `path`. */
function issuesAt(schema: z.ZodType, value: unknown, path: Path): Issue[] {
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((issue) => ({ ...issue, path: [...path, ...issue.path] }) as Issue);
}

/** The issues of an agent's `headers` and `tools` `__proto__` entries (the agent at `path`, the tree's `agent`). */
function agentIssues(agent: unknown, path: Path): Issue[] {
  if (typeof agent !== 'object' || agent === null) return [];
  const { headers, tools } = agent as { headers?: unknown; tools?: unknown };
  const out: Issue[] = [];
  if (holdsProto(headers)) out.push(keyIssue([...path, 'headers'], `header \`${PROTO}\` may not be configured${configuredHeaderRefusal(PROTO) ?? ''}`));
  if (holdsProto(tools)) out.push(...issuesAt(toolSchema, tools[PROTO], [...path, 'tools', PROTO]));
  return out;
}

/**
 * The issues of every `__proto__` entry of `tree` (the loader's tree, before or after the
 * schema saw it) that the schema's records skip; [] for a config without one (the common
 * case: a few property reads).
 */
export function protoKeyIssues(tree: unknown): Issue[] {
  if (typeof tree !== 'object' || tree === null) return [];
  const agents = (tree as { agents?: unknown }).agents;
  if (typeof agents !== 'object' || agents === null || Array.isArray(agents)) return [];
  const out: Issue[] = [];
  if (holdsProto(agents)) {
    out.push(keyIssue(['agents'], invalidAgentNameMessage(PROTO)));
    // What it holds, as any agent's (its own `__proto__` entries as well).
    out.push(...issuesAt(agentSchema, agents[PROTO], ['agents', PROTO]));
  }
  for (const name of Object.keys(agents)) out.push(...agentIssues((agents as Record<string, unknown>)[name], ['agents', name]));
  return out;
}
