/**
 * Logging: pino, JSON lines. Secrets never reach a log: request/response header values that
 * carry credentials or session ids are redacted wherever they appear, and the exchange line
 * is built from known fields only (never from raw headers or bodies).
 */
import pino, { type Logger, type LoggerOptions } from 'pino';
import type { Exchange } from '../exchange.js';

/** Paths pino redacts in every log object. */
export const REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["mcp-session-id"]',
  'req.headers["last-event-id"]',
  'res.headers["set-cookie"]',
  'res.headers["mcp-session-id"]',
  'headers.authorization',
  'headers.cookie',
  'headers["mcp-session-id"]',
];

export function loggerOptions(level: LoggerOptions['level']): LoggerOptions {
  return {
    level,
    base: { service: 'adcp-buyer-gateway' },
    redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
}

export function createLogger(level: LoggerOptions['level']): Logger {
  return pino(loggerOptions(level));
}

/**
 * The one log line per exchange: agent, method, tool, request id, statuses, bytes (from
 * seller raw and decoded, to host, saved by dedupe), outcome, reason, duration in ms.
 */
export function exchangeLogFields(exchange: Exchange, hostStatus: number): Record<string, unknown> {
  return {
    agent: exchange.agent.name,
    method: exchange.rpc.method,
    tool: exchange.rpc.toolName,
    rpc_id: exchange.rpc.id,
    upstream_status: exchange.upstreamStatus,
    status: hostStatus,
    bytes_from_seller: exchange.bytesFromSeller,
    bytes_decoded: exchange.bytesDecoded,
    bytes_to_host: exchange.bytesToHost,
    bytes_saved: exchange.bytesSaved,
    actions: exchange.actions.length ? exchange.actions : undefined,
    outcome: exchange.outcome,
    reason: exchange.reason,
    duration_ms: Number(process.hrtime.bigint() - exchange.startedAt) / 1e6,
  };
}
