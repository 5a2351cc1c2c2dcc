/**
 * The refusal of a request no route of a listener takes, by its method and target, for both
 * listeners: the gateway's (`listen`) and the ops one (`ops_listen`, when set). One code for
 * the two, so an unknown path or a wrong method gets the same answer on either: the gateway's
 * refusal shape (JSON-RPC error body, id null, `error.data.reason`), a `refused` line and a
 * count (app.ts). What a listener serves decides the answer ({@link UnroutedScope}):
 *
 * - a path it serves, with a method none of its routes takes: 405 `method_not_allowed` with
 *   `Allow` (RFC 9110 §15.5.6): on an MCP endpoint `POST, GET, DELETE`, on `/healthz`,
 *   `/readyz` and `/metrics` `GET, HEAD`;
 * - any other path: 404 `not_found`, naming the path (its first 64 characters) and what the
 *   listener serves.
 *
 * Reported failure (a hostile new user's trial 19, L1): the ops listener answered an unknown
 * path or a wrong method with Fastify's own 404 body
 * (`{"message":"Route GET:/nope not found","error":"Not Found","statusCode":404}`), with no
 * `refused` line and no count; the main listener answered a wrong method on an ops path 404
 * (test/regressions/ops-listen-unknown-path-fastify-404.test.ts).
 */
import type { FastifyReply } from 'fastify';
import type { UnroutedRefusal } from '../errors/connect-refusal.js';
import { refuse, SHOWN_CHARS, shownInMessage } from '../errors/local-reply.js';
import { OPS_METHODS, OPS_PATHS } from '../ops/routes.js';
import type { JsonRpcIdRef } from '../errors/json-rpc-text.js';
import type { Exchange } from '../exchange.js';

/** Methods MCP Streamable HTTP uses on the MCP endpoint. */
export const MCP_METHODS = ['POST', 'GET', 'DELETE'] as const;
const MCP_METHOD_SET: ReadonlySet<string> = new Set(MCP_METHODS);

/** Whether `method` is one an MCP endpoint's route takes ({@link MCP_METHODS}); any other is refused 405 `method_not_allowed`. */
export function isMcpMethod(method: string | undefined): boolean {
  return MCP_METHOD_SET.has(method ?? '');
}
/** The path of an MCP endpoint, `/agents/<agent>/mcp` (as the route matches it). */
const MCP_PATH = /^\/agents\/[^/]+\/mcp$/;
/** An MCP endpoint's request target, `/agents/<agent>/mcp` with any query: the agent's name as written (percent-encoded). */
const MCP_TARGET = /^\/agents\/([^/?#]+)\/mcp(?:[?#]|$)/;

/**
 * The agent a request target names when no route gave it as a parameter (a method Fastify
 * does not route, an `Expect` refused before routing), or null for any other path: as the
 * route's `:agent` parameter is for a routed method (percent-decoded, as find-my-way decodes
 * it; a name that does not decode is kept as written), first 64 characters, as the refusal
 * line logs it. Reported failure (a new user's trial, 2026-12-03): TRACE and PROPFIND on
 * `/agents/good/mcp` were logged `agent: null`, PUT `agent: "good"`
 * (test/regressions/refused-unrouted-method-names-no-agent.test.ts).
 */
export function agentOfPath(target: string): string | null {
  return agentNameOfPath(target)?.slice(0, SHOWN_CHARS) ?? null;
}

/**
 * The origin form (`/path?query`) of a request target: the target itself, or an absolute-form
 * target (`http://host:port/path?query`, RFC 9112 §3.2.2, which Fastify routes by its path)
 * without its scheme and authority; any other target as it is.
 */
export function originFormOf(target: string): string {
  const authority = /^https?:\/\/[^/?#]*/i.exec(target);
  if (authority === null) return target;
  const rest = target.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** The agent's name a request target gives, whole, as the route's `:agent` parameter would (see `agentOfPath`), or undefined for any other path. */
export function agentNameOfPath(target: string): string | undefined {
  const name = MCP_TARGET.exec(target)?.[1];
  if (name === undefined) return undefined;
  try {
    return decodeURIComponent(name);
  } catch {
    // A name that does not decode (badUrlRefusal refuses it): kept as written.
    return name;
  }
}

/** `target` without its query. */
const pathOf = (target: string): string => target.split('?')[0] ?? '';

/** What a listener serves. */
export interface UnroutedScope {
  /** The MCP endpoints `/agents/<agent>/mcp` (the gateway's listener). */
  readonly mcp: boolean;
  /** `/healthz`, `/readyz`, `/metrics` (the gateway's listener without `ops_listen`, or the ops one). */
  readonly ops: boolean;
}

const METHOD_NOT_ALLOWED_MESSAGE = `Method not allowed: MCP endpoints accept ${MCP_METHODS.join(', ')}.`;

const OPS_PATH_SET: ReadonlySet<string> = new Set(Object.values(OPS_PATHS));
const OPS_LIST = `${OPS_PATHS.health}, ${OPS_PATHS.ready} and ${OPS_PATHS.metrics}`;

/** The `not_found` message for `method` on `path` (the target without its query), as `scope` serves. */
function noRouteMessage(method: string, path: string, scope: UnroutedScope): string {
  const served = scope.mcp ? 'MCP endpoints are /agents/<agent>/mcp' : `this port serves ${OPS_LIST}`;
  return `No route for ${method} ${shownInMessage(path)}: ${served}.`;
}

/** The refusal of `method` on `target`, which no route of a listener serving `scope` takes (see file comment). */
export function unroutedRefusal(method: string, target: string, scope: UnroutedScope): UnroutedRefusal {
  const path = pathOf(target);
  if (scope.mcp && MCP_PATH.test(path)) return { reason: 'method_not_allowed', message: METHOD_NOT_ALLOWED_MESSAGE, headers: { allow: MCP_METHODS.join(', ') } };
  if (scope.ops && OPS_PATH_SET.has(path)) {
    return { reason: 'method_not_allowed', message: `Method not allowed: ${path} accepts ${OPS_METHODS.join(', ')}.`, headers: { allow: OPS_METHODS.join(', ') } };
  }
  return { reason: 'not_found', message: noRouteMessage(method, path, scope), headers: {} };
}

/**
 * Whether a route of a listener serving `scope` takes `method` on `target` (origin form), so
 * that Fastify reads the request's body before its handler answers: an MCP endpoint's path
 * (its routes take every method Fastify routes, refusing the others in the handler), or an
 * ops path with GET or HEAD. Any other request is refused from its head by the not-found
 * context (app.ts `refuseFromHead`), its body never read.
 */
export function routedByPath(method: string | undefined, target: string, scope: UnroutedScope): boolean {
  const path = pathOf(target);
  if (scope.mcp && MCP_PATH.test(path)) return true;
  return scope.ops && OPS_PATH_SET.has(path) && (OPS_METHODS as readonly string[]).includes(method ?? '');
}

/** Answers the request of `reply`, which no route takes, with its {@link unroutedRefusal}. */
export function refuseUnrouted(reply: FastifyReply, scope: UnroutedScope): FastifyReply {
  const request = reply.request;
  const refusal = unroutedRefusal(request.method, request.url, scope);
  for (const [name, value] of Object.entries(refusal.headers)) reply.header(name, value);
  return refuse(reply, refusal.reason, null, refusal.message);
}

/**
 * The refusal of a request target Fastify's router cannot decode (FST_ERR_BAD_URL: a path
 * segment that is not valid percent-encoding, RFC 3986 §2.1, such as `/agents/%zz/mcp`): on
 * an MCP endpoint's path, 404 `unknown_agent` (no agent can have a name that does not
 * decode), the name echoed as written to 64 characters; on any other path (and on a listener
 * serving no MCP endpoint), 404 `not_found`, as for a path with no route. Id null: no body is
 * read for it. Its `refused` line and count come with `refuse`. Reported failure (a new user's
 * trial, 2026-12-03): such a target got Fastify's own 400 (`FST_ERR_BAD_URL`, the path
 * echoed), with no `refused` line and no count
 * (test/regressions/agent-name-bad-percent-encoding-fastify-400.test.ts).
 */
export function badUrlRefusal(reply: FastifyReply, target: string, scope: UnroutedScope): FastifyReply {
  const name = scope.mcp ? MCP_TARGET.exec(target)?.[1] : undefined;
  const path = pathOf(target);
  if (name === undefined) return refuse(reply, 'not_found', null, noRouteMessage(reply.request.method, path, scope));
  return refuse(reply, 'unknown_agent', null, `Unknown agent "${shownInMessage(name)}": the name is not valid percent-encoding (RFC 3986 §2.1).`, undefined, { agent: shownInMessage(name) });
}

/**
 * Refuses a request to an agent the config does not have: 404 `unknown_agent`, the name
 * (`agent`, as the route gives it) to its first 64 characters, for `id` (request/peek.ts
 * refusalIdOf; null when no body was read: request/agent-body-limit.ts). `exchange`: the open
 * exchange of a request taken up before a reload removed its agent (errors/local-reply.ts refuse).
 */
export function refuseUnknownAgent(reply: FastifyReply, agent: string, id: JsonRpcIdRef | null, exchange?: Exchange): FastifyReply {
  return refuse(reply, 'unknown_agent', id, `Unknown agent "${shownInMessage(agent)}": no such agent in the gateway config.`, exchange, { agent: shownInMessage(agent) });
}
