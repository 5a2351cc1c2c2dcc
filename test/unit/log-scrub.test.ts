/**
 * Log scrubbing inside string values (src/observability/log-scrub.ts) and the gateway's fixed
 * texts it leaves whole (log-vocabulary.ts): exact lines for each rule, and every literal `msg`
 * of the sources listed in the vocabulary (read with the TypeScript parser), so a new log
 * call's message is never blanked by a configured value equal to it.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';
import { compileScrubRules, scrubLogLine } from '../../src/observability/log-scrub.js';
import { GATEWAY_MESSAGES, isGatewayText } from '../../src/observability/log-vocabulary.js';
import { DROP_SUMMARY_MSG, FIRST_DROP_MSG } from '../../src/response/sse-drop-log.js';
import { GONE_MSG } from '../../src/config-watch.js';
import { SELLER_202_ANSWER_MSG } from '../../src/response/accepted-answer.js';
import { DISCOVERY_OVER_TARGET_MSG } from '../../src/routing/discovery-warning.js';
import { DROPPED_MSG, REPEATED_FAILURE_MSG } from '../../src/reload.js';
import { REPO } from '../helpers/process.js';

const R = '[redacted]';
const P = 'https://seller.example/mcp?';
const rules = compileScrubRules(
  ['Bearer tok"en-123', 'Bearer tok\\"en-123', 'tok"en-123', 'tok\\"en-123', 'adcp-buyer-gateway', 'level":3', '2026-12-03'],
  [P],
  (v) => isGatewayText(v) || v === 'acme-sales',
);
const scrub = (line: string): string => scrubLogLine(line, rules, R);

describe('scrubLogLine', () => {
  test('a line without any secret or prefix is returned as it is (the same string)', () => {
    const line = '{"level":30,"time":"2026-01-01T00:00:00.000Z","msg":"exchange"}\n';
    assert.equal(scrub(line), line);
  });

  test('inside string values only: names, numbers and JSON syntax are never changed', () => {
    assert.equal(
      scrub('{"level":30,"time":"2026-12-03T10:00:00.000Z","service":"adcp-buyer-gateway","adcp-buyer-gateway":1,"note":"by adcp-buyer-gateway/1.0","a":["adcp-buyer-gateway x"]}\n'),
      `{"level":30,"time":"2026-12-03T10:00:00.000Z","service":"adcp-buyer-gateway","adcp-buyer-gateway":1,"note":"by ${R}/1.0","a":["${R} x"]}\n`,
    );
  });

  test("pino's `time` is never changed; a `time` elsewhere is a value as any other", () => {
    assert.equal(scrub('{"level":30,"time":"2026-12-03T10:00:00.000Z","x":{"time":"2026-12-03"}}'), `{"level":30,"time":"2026-12-03T10:00:00.000Z","x":{"time":"${R}"}}`);
  });

  test('a secret with `"` is found decoded, and JSON-encoded in a value; the value is written back escaped', () => {
    const inner = JSON.stringify({ auth: 'Bearer tok"en-123' });
    assert.equal(scrub(`{"tool":${JSON.stringify('find tok"en-123 now')},"note":${JSON.stringify(inner)}}`), `{"tool":"find ${R} now","note":${JSON.stringify(`{"auth":"${R}"}`)}}`);
  });

  test('a value wholly public (a fixed text, an agent name) is left; one only partly public is not', () => {
    const rules2 = compileScrubRules(['tools/call', 'acme-sales'], [], (v) => isGatewayText(v) || v === 'acme-sales');
    assert.equal(scrubLogLine('{"method":"tools/call","agent":"acme-sales","err":"tools/call to acme-sales failed"}', rules2, R), `{"method":"tools/call","agent":"acme-sales","err":"${R} to ${R} failed"}`);
  });

  test('a URL query is replaced to its end inside a value, a backslash in it included', () => {
    assert.equal(scrub(`{"url":${JSON.stringify(`${P}k=a\\b&x=1`)},"m":"to ${P}k=1 failed"}`), `{"url":"${P}${R}","m":"to ${P}${R} failed"}`);
  });

  test('an escaped quote or backslash before a closing quote: strings end where JSON says', () => {
    const line = `{"a":"x\\\\","b":"tok\\"en-123\\\\","c":"\\"adcp-buyer-gateway\\""}`;
    assert.equal(scrub(line), `{"a":"x\\\\","b":"${R}\\\\","c":"\\"${R}\\""}`);
    JSON.parse(scrub(line));
  });

  test('a line that is not JSON has each secret replaced as text', () => {
    assert.equal(scrub('plain adcp-buyer-gateway "open'), `plain ${R} "open`);
  });
});

/** Every literal message of a log call in src/ (`log.info(fields, 'msg')`, `logInfo(fields, 'msg')`, `logLine(level, fields, 'msg')`). */
function literalMessages(): Map<string, string> {
  const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'logInfo', 'logLine']);
  const found = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path.endsWith('.ts')) visit(path);
    }
  };
  // Only files whose text holds such a call (a level's name, type arguments, `?.`, then `(`) are
  // parsed: ~30 of ~200 (parsing them all was ~1.5 s of CPU); a call the parser finds has that text.
  const MAY_CALL = /\b(?:fatal|error|warn|info|debug|trace|logInfo|logLine)\s*(?:<[^>]*>)?\s*(?:\?\.)?\s*\(/;
  const visit = (path: string): void => {
    const text = readFileSync(path, 'utf8');
    if (!MAY_CALL.test(text)) return;
    const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const each = (node: ts.Node): void => {
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
        const last = node.arguments.at(-1);
        // A log call's message: its last argument, after a fields object (Commander's `error` has an options object last).
        if (LEVELS.has(name) && last !== undefined && (ts.isStringLiteral(last) || ts.isNoSubstitutionTemplateLiteral(last))) found.set(last.text, path);
      }
      ts.forEachChild(node, each);
    };
    each(file);
  };
  walk(join(REPO, 'src'));
  return found;
}

describe('the gateway texts', () => {
  test('every literal log message of the sources is listed, and every listed one is in the sources', () => {
    const literal = literalMessages();
    assert.deepEqual([...literal.keys()].filter((m) => !GATEWAY_MESSAGES.includes(m)), []);
    const constants = [FIRST_DROP_MSG, DROP_SUMMARY_MSG, REPEATED_FAILURE_MSG, DROPPED_MSG, GONE_MSG, SELLER_202_ANSWER_MSG, DISCOVERY_OVER_TARGET_MSG];
    assert.deepEqual(GATEWAY_MESSAGES.filter((m) => !literal.has(m) && !constants.includes(m)), []);
    for (const m of [...GATEWAY_MESSAGES, ...constants]) assert.equal(isGatewayText(m), true, m);
  });

  test('service, MCP methods, kinds, outcomes and reasons are fixed texts; other text is not', () => {
    for (const v of ['adcp-buyer-gateway', 'tools/call', 'notifications/initialized', 'notification', 'rewritten', 'upstream_not_mcp', 'unknown_agent', 'max_sse_event_bytes']) {
      assert.equal(isGatewayText(v), true, v);
    }
    for (const v of ['tools/call x', 'adcp-buyer-gateway/1.0', 'Bearer x']) assert.equal(isGatewayText(v), false, v);
  });
});
