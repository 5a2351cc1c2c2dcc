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
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** Fastify's error for a `Content-Type` that is no media type (lib/handle-request.js). */
const NO_MEDIA_TYPE = 'FST_ERR_CTP_INVALID_MEDIA_TYPE';

/**
 * When `error` is Fastify's refusal of a `Content-Type` that is no media type: removes the
 * field from the request, takes the request from this reply (`hijack`: Fastify sends nothing
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
  if (error.code !== NO_MEDIA_TYPE || request.raw.headers['content-type'] === undefined) return false;
  delete request.raw.headers['content-type'];
  reply.hijack();
  // Fastify set the response's status to 415 for its refusal; nothing of it was written.
  reply.raw.statusCode = 200;
  routing(request.raw, reply.raw);
  return true;
}
