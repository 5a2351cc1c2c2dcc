/**
 * plainInfoWriter (observability/logger.ts): the exchange and refusal lines skip pino's path
 * redaction (~40 µs a line, issue 5) and must come out exactly as `logger.info` writes them,
 * value scrubbing included; a line redaction could change goes through the logger itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { addLogSecrets, createLogger, plainInfoWriter, plainLineWriter, REDACTED } from '../../src/observability/logger.js';

function capture(level: string): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, logger: createLogger(level, { destination }) };
}

/** The line without its `time` (the two writes happen at different instants). */
function withoutTime(line: string): string {
  return line.replace(/"time":"[^"]*",/, '');
}

const EXCHANGE = {
  agent: 'seller-a',
  http_method: 'POST',
  method: 'tools/call',
  rpc_kind: 'request',
  tool: 'get_"products"\\x',
  rpc_id: 7,
  status: 200,
  upstream_status: null,
  bytes_from_seller: 1024,
  bytes_decoded: 1024,
  bytes_to_host: 630,
  bytes_saved: 394,
  outcome: 'rewritten',
  reason: null,
  duration_ms: 1.234,
};

test('writes the same bytes as logger.info, scrubbing included', () => {
  const { lines, logger } = capture('info');
  addLogSecrets(logger, () => ['seller-token-secret-1']);
  const write = plainInfoWriter(logger);
  const fields = { ...EXCHANGE, tool: 'tool seller-token-secret-1 \u0001 é 😀', long: 'x'.repeat(150) };
  logger.info(fields, 'exchange');
  write(fields, 'exchange');
  assert.equal(lines.length, 2);
  assert.equal(withoutTime(lines[1]!), withoutTime(lines[0]!));
  assert.ok(lines[1]!.includes(`tool ${REDACTED}`));
});

test('a line redaction could change is written by the logger itself, exactly as before', () => {
  const { lines, logger } = capture('info');
  const write = plainInfoWriter(logger);
  for (const fields of [
    { ...EXCHANGE, tool: 'lone \ud800 surrogate' },
    { ...EXCHANGE, secret: 'resume-secret-value-123' },
    { ...EXCHANGE, extra: { headers: { authorization: 'Bearer abcdefgh12345' } } },
  ]) {
    lines.length = 0;
    logger.info(fields, 'exchange');
    write(fields, 'exchange');
    assert.equal(lines.length, 2);
    assert.equal(withoutTime(lines[1]!), withoutTime(lines[0]!));
  }
  assert.ok(lines[1]!.includes(`"authorization":"${REDACTED}"`));
});

test('nothing is written unless info is enabled, read per line (a reload changes the level)', () => {
  const { lines, logger } = capture('warn');
  const write = plainInfoWriter(logger);
  write(EXCHANGE, 'exchange');
  assert.equal(lines.length, 0);
  logger.level = 'info';
  write(EXCHANGE, 'exchange');
  assert.equal(lines.length, 1);
  logger.level = 'error';
  write(EXCHANGE, 'exchange');
  assert.equal(lines.length, 1);
  logger.level = 'trace';
  write(EXCHANGE, 'exchange');
  assert.equal(lines.length, 2);
  assert.equal(JSON.parse(lines[1]!).level, 30);
});

test('plainLineWriter at warn: written at 40 when warn is enabled, the same bytes as logger.warn (a failed exchange: hostile trial 53, F2)', () => {
  const { lines, logger } = capture('warn');
  const write = plainLineWriter(logger);
  const failed = { ...EXCHANGE, outcome: 'local_error', reason: 'upstream_unreachable' };
  write('info', EXCHANGE, 'exchange');
  assert.equal(lines.length, 0);
  write('warn', failed, 'exchange');
  logger.warn(failed, 'exchange');
  assert.equal(lines.length, 2);
  assert.equal(JSON.parse(lines[0]!).level, 40);
  assert.equal(withoutTime(lines[0]!), withoutTime(lines[1]!));
  logger.level = 'error';
  write('warn', failed, 'exchange');
  assert.equal(lines.length, 2);
});
