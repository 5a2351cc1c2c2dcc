/**
 * A host request whose `Content-Type` is present but is no media type is served as one
 * without `Content-Type`.
 *
 * The gateway reads every request body as the JSON-RPC message, whatever its label (app.ts:
 * one catch-all content-type parser), and a request without `Content-Type` goes to the seller
 * labelled `application/json` (routing/handler.ts). But Fastify refuses, before any route, a
 * value that is not `type/subtype` (RFC 9110 §8.3.1): empty (or only spaces, which the HTTP
 * parser trims), only parameters (`;`, `; charset=utf-8`), no `/` (`json`), more than one
 * `/`, a list (`application/json, text/plain`). It sends its error FST_ERR_CTP_INVALID_MEDIA_TYPE
 * (415, "Unsupported Media Type") to the error handler before the body is read. Reported
 * failure (a hostile new user's trial 11, F2): the handler turned that into 400
 * `invalid_request`, Fastify's wording, id null, a reason docs/errors.md does not give, while
 * `text/plain` and no label at all were forwarded
 * (test/regressions/empty-content-type-fastify-refusal.test.ts).
 *
 * Such a value says nothing a reader can use, so the request is served as if it had none: the
 * field is removed from the request's headers and the request handed back to the router, which
 * reads its body, routes it and answers it as any request without `Content-Type` (forwarded
 * labelled `application/json`; refused, for its id, for what a request without one is refused
 * for). Only such a request pays for this (a second route lookup and request object); every
 * other request goes through Fastify as before. A value Fastify reads as a media type, however
 * odd its parameters (`application/json; charset=`, `application/json;;`), is forwarded as
 * written, as `text/plain` is.
 *
 * The removed value stays on the request ({@link removedContentTypeOf}) for the one refusal
 * that names the label: a POST with an `Origin` must be labelled JSON (request/head-refusal.ts),
 * and one whose label could not be parsed is told so, not told it has none (hostile trial 35,
 * leftover 2: `application/json garbage` got "must be labelled Content-Type: application/json":
 * test/regressions/unparseable-content-type-said-unlabelled.test.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** Where the removed value is kept on the request (a symbol: no other request carries it). */
const REMOVED_CONTENT_TYPE = Symbol('removedContentType');

type MarkedRequest = IncomingMessage & { [REMOVED_CONTENT_TYPE]?: string };

/** The `Content-Type` value removed from `req` as no media type, or undefined (every other request: one property read). */
export function removedContentTypeOf(req: IncomingMessage): string | undefined {
  return (req as MarkedRequest)[REMOVED_CONTENT_TYPE];
}

/** RFC 9110 §5.6.2 `token`, as Fastify's ContentType checks a type and a subtype (lib/content-type.js). */
const TOKEN = /^[\w!#$%&'*+.^`|~-]+$/;

/**
 * Whether Fastify reads `value` (a `Content-Type` field value) as a media type, i.e. does not
 * refuse it with FST_ERR_CTP_INVALID_MEDIA_TYPE: `type/subtype` before the first `;` (or the
 * whole value), each a token once the type's leading and the subtype's trailing whitespace
 * are trimmed; parameters are not judged. Fastify's own check (lib/content-type.js
 * ContentType), for a head judged before Fastify sees it (`Expect: 100-continue`:
 * head-refusal.ts); test/unit/media-type.test.ts compares the two.
 */
export function isMediaType(value: string): boolean {
  const semicolon = value.indexOf(';');
  const mediaType = semicolon === -1 ? value : value.slice(0, semicolon);
  const slash = mediaType.indexOf('/');
  return slash !== -1 && TOKEN.test(mediaType.slice(0, slash).trimStart()) && TOKEN.test(mediaType.slice(slash + 1).trimEnd());
}

/** Fastify's error for a `Content-Type` that is no media type (lib/handle-request.js). */
const NO_MEDIA_TYPE = 'FST_ERR_CTP_INVALID_MEDIA_TYPE';

/**
 * When `error` is Fastify's refusal of a `Content-Type` that is no media type: removes the
 * field from the request (keeping its value: {@link removedContentTypeOf}), takes the request from this reply (`hijack`: Fastify sends nothing
 * for it) and hands it to `routing` (the app's router, `app.routing`) again; returns true, the
 * answer then comes from the route. Otherwise returns false and does nothing. A request
 * without the field never comes here (Fastify refuses only a value it has), so a request is
 * handed back at most once.
 */
export function servedWithoutContentType(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  routing: (req: IncomingMessage, res: ServerResponse) => void,
): boolean {
  const value = request.raw.headers['content-type'];
  if (error.code !== NO_MEDIA_TYPE || value === undefined) return false;
  (request.raw as MarkedRequest)[REMOVED_CONTENT_TYPE] = value;
  delete request.raw.headers['content-type'];
  reply.hijack();
  // Fastify set the response's status to 415 for its refusal; nothing of it was written.
  reply.raw.statusCode = 200;
  routing(request.raw, reply.raw);
  return true;
}
