/**
 * Regression (hostile trial 46, item 3, noise): the `--check-config` note for a clamped
 * `max_sse_event_bytes` (added for trial 45 L8) fired when nothing was misconfigured:
 * `defaults.max_sse_event_bytes: 4194304` (config/gateway.yaml's commented line, uncommented)
 * and a tool `list_products: { max_response_bytes: 1048576 }` drew `note: acme/list_products:
 * max_sse_event_bytes 4194304 is above max_response_bytes 1048576: ...`, once per lower row,
 * naming the tool though the value was set in `defaults`. Now the note is only for an event
 * limit set on that same row (an agent's or a tool's own `max_sse_event_bytes` above that row's
 * `max_response_bytes`); the table still shows "(configured N)" where the limit is clamped.
 *
 * Input: the trial's defaults and agent `acme`; agent `own`, which sets its own event limit
 * above its response limit, with tool `t` lowering the response limit only and tool `u` setting
 * an event limit above its own.
 * Expected: exit 0; the notes `own` and `own/u` only; the cells `acme` 4194304,
 * `acme/list_products` `1048576 (configured 4194304)`, `own/t` `50000 (configured 200000)`.
 *
 * Review 31, finding 5 (Low): with only a row's own value noted, `defaults: {max_response_bytes:
 * 100000, max_sse_event_bytes: 999999}` drew no note at all (trial 45 L8's silent clamp, at the
 * defaults level). Now `defaults` is noted once (`note: defaults: ...`), the rows inheriting
 * both still not; a row repeating the value is noted as before.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const CONFIG = [
  'defaults:',
  '  max_sse_event_bytes: 4194304',
  'agents:',
  '  acme:',
  '    url: http://127.0.0.1:3001/mcp',
  '    max_response_bytes: 8388608',
  '    tools:',
  '      list_products: { max_response_bytes: 1048576 }',
  '  own:',
  '    url: http://127.0.0.1:3001/mcp',
  '    max_response_bytes: 100000',
  '    max_sse_event_bytes: 200000',
  '    tools:',
  '      t: { max_response_bytes: 50000 }',
  '      u: { max_response_bytes: 50000, max_sse_event_bytes: 60000 }',
  '',
].join('\n');

/** The `max_sse_event_bytes` cell of each row of the limits table in `stdout`, by the column offsets of the dashed rule under the header. */
function eventCells(stdout: string): Record<string, string | undefined> {
  const lines = stdout.split('\n');
  const header = lines.findIndex((line) => line.startsWith('agent/tool'));
  const starts = [...lines[header + 1]!.matchAll(/-+/g)].map((m) => m.index ?? 0);
  const split = (line: string): string[] => starts.map((at, i) => line.slice(at, starts[i + 1]).trim());
  const columns = split(lines[header]!);
  const cells = new Map<string, string | undefined>();
  for (const line of lines.slice(header + 2)) {
    if (line === '') break;
    const row = split(line);
    cells.set(row[0]!, row[columns.indexOf('max_sse_event_bytes')]);
  }
  return Object.fromEntries(cells);
}

/** The `note:` lines about `max_sse_event_bytes` in `stdout`. */
const eventNotes = (stdout: string): string[] => stdout.split('\n').filter((line) => line.startsWith('note: ') && line.includes('max_sse_event_bytes'));

test('check-config-notes-inherited-sse-event-limit: only an event limit set on the row itself is noted', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'check-config-sse-inherited-'));
  try {
    const file = join(dir, 'n1.yaml');
    await writeFile(file, CONFIG);
    const { code, stdout, stderr } = await checkConfigRun(file);
    assert.deepEqual({ code, stderr }, { code: 0, stderr: '' });
    assert.deepEqual(
      eventNotes(stdout),
      [
        'note: own: max_sse_event_bytes 200000 is above max_response_bytes 100000: an event limit is never above the response limit in force',
        'note: own/u: max_sse_event_bytes 60000 is above max_response_bytes 50000: an event limit is never above the response limit in force',
      ],
    );
    assert.deepEqual(eventCells(stdout), {
      acme: '4194304',
      'acme/list_products': '1048576 (configured 4194304)',
      own: '100000 (configured 200000)',
      'own/t': '50000 (configured 200000)',
      'own/u': '50000 (configured 60000)',
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('check-config-notes-inherited-sse-event-limit: an event limit `defaults` sets above its own response limit is noted once, as defaults (was: no note)', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'check-config-sse-defaults-'));
  try {
    const file = join(dir, 'n2.yaml');
    await writeFile(
      file,
      [
        'defaults:',
        '  max_response_bytes: 100000',
        '  max_sse_event_bytes: 999999',
        'agents:',
        '  a:',
        '    url: http://127.0.0.1:9/mcp',
        '    tools:',
        '      t: { max_response_bytes: 50000 }',
        '  b:',
        '    url: http://127.0.0.1:9/mcp',
        '    max_sse_event_bytes: 999999',
        '  c:',
        '    url: http://127.0.0.1:9/mcp',
        '    max_response_bytes: 2000000',
        '',
      ].join('\n'),
    );
    const { code, stdout, stderr } = await checkConfigRun(file);
    assert.deepEqual({ code, stderr }, { code: 0, stderr: '' });
    assert.deepEqual(eventNotes(stdout), [
      'note: defaults: max_sse_event_bytes 999999 is above max_response_bytes 100000: an event limit is never above the response limit in force',
      'note: b: max_sse_event_bytes 999999 is above max_response_bytes 100000: an event limit is never above the response limit in force',
    ]);
    assert.deepEqual(eventCells(stdout), { a: '100000 (configured 999999)', 'a/t': '50000 (configured 999999)', b: '100000 (configured 999999)', c: '999999' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
