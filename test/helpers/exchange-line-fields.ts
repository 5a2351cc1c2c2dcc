/**
 * The exchange log line's fields, in the order the logger writes them (README, Logs;
 * src/observability/logger.ts exchangeLogFields), when no optional field applies: the one
 * list the log tests compare with (test/unit/exchange-log-fields.test.ts, log-redaction.test.ts).
 */
export const EXCHANGE_LINE_FIELDS: readonly string[] = [
  'agent',
  'http_method',
  'method',
  'rpc_kind',
  'tool',
  'rpc_id',
  'status',
  'upstream_status',
  'bytes_from_seller',
  'bytes_decoded',
  'bytes_to_host',
  'bytes_saved',
  'outcome',
  'reason',
  'duration_ms',
];
