/**
 * Resume tokens in unit tests: a codec whose `mint` and `verify` take the seller url as an
 * optional last argument (default {@link TEST_SELLER}), and tokens signed by hand around any
 * payload, as the codec signs them (src/resume/token.ts: the MAC covers the token text and the
 * seller url) or as a gateway before the seller url was covered signed them.
 */
import { createHmac, hkdfSync } from 'node:crypto';
import { agentUrlKey } from '../../src/config/agent-url-key.js';
import { RESUME_TOKEN_PREFIX, type ResumeCodec, type ResumeState, type VerifyResult } from '../../src/resume/token.js';

/** The seller url unit tests mint and verify for unless they say otherwise. */
export const TEST_SELLER: URL = new URL('https://seller.example/adcp/mcp');

export interface SellerDefaultCodec {
  readonly ttlMs: number;
  mint(state: Omit<ResumeState, 'issuedAt'>, seller?: URL): string;
  verify(token: string, agent: string, seller?: URL): VerifyResult;
}

/** `codec` with the seller url defaulting to `seller`. */
export function withSeller(codec: ResumeCodec, seller: URL = TEST_SELLER): SellerDefaultCodec {
  return {
    ttlMs: codec.ttlMs,
    mint: (state, url = seller) => codec.mint(state, url),
    verify: (token, agent, url = seller) => codec.verify(token, agent, url),
  };
}

const hkdf = (secret: string, info: string): Buffer => Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), info, 32));

/** The token text before the signature: prefix and base64url payload (`payload` a string is taken as the JSON text). */
export function tokenHead(payload: unknown): string {
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return RESUME_TOKEN_PREFIX + Buffer.from(text, 'utf8').toString('base64url');
}

/** The signature a token with head `head` gets for `seller` (HKDF info "adcp-buyer-gateway resume v1 seller"; text, LF, the url's key: config/agent-url-key.ts). */
export function sellerSignature(secret: string, head: string, seller: URL = TEST_SELLER): string {
  return createHmac('sha256', hkdf(secret, 'adcp-buyer-gateway resume v1 seller')).update(`${head}\n${agentUrlKey(seller)}`).digest('base64url');
}

/** The signature of a token minted before the seller url was covered (HKDF info "adcp-buyer-gateway resume v1"; the text alone). */
export function legacySignature(secret: string, head: string): string {
  return createHmac('sha256', hkdf(secret, 'adcp-buyer-gateway resume v1')).update(head).digest('base64url');
}

/** A token around any payload, signed as the codec signs for `seller`. */
export function signedToken(secret: string, payload: unknown, seller: URL = TEST_SELLER): string {
  const head = tokenHead(payload);
  return `${head}.${sellerSignature(secret, head, seller)}`;
}

/** A token around any payload, signed as a gateway before the seller url was covered signed it. */
export function legacyToken(secret: string, payload: unknown): string {
  const head = tokenHead(payload);
  return `${head}.${legacySignature(secret, head)}`;
}

/**
 * A `tools/call` stream's resume state (tool `t`, nothing used of a 4 MiB bound, MCP
 * 2025-11-25, started 2026-01-01T00:00:00Z), for the event `upstreamId` of agent `agent`'s
 * request `rpcId`; frozen. The fixture the token-length tests share
 * (test/unit/sse-id-token-log.test.ts,
 * test/regressions/resume-token-refused-after-serializing-huge-host-id.test.ts).
 */
export function toolCallState(upstreamId: string, agent: string, rpcId: string | number): Omit<ResumeState, 'issuedAt'> {
  return Object.freeze({
    upstreamId,
    agent,
    rpcId,
    method: 'tools/call',
    toolName: 't',
    usedBytes: 0,
    limitBytes: 4_194_304,
    protocolVersion: '2025-11-25',
    streamStartedAt: 1_767_225_600_000,
  });
}
