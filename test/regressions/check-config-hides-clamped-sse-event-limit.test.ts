/**
 * Regression (a hostile new operator's trial 45, L8, Low): `--check-config` hid a
 * `max_sse_event_bytes` clamped by the response limit. Agent `a` with `max_response_bytes:
 * 1000`, `max_sse_event_bytes: 999999999` and tool `t` with `max_sse_event_bytes: 2000`: both
 * rows showed 1000 with no "(configured N)" and no note, while `max_call_response_bytes`, the
 * other setting the table shows clamped, gets both (docs/configuration.md: a set event limit
 * is "never above that response limit").
 *
 * Input: the trial's c1.yaml, and an agent whose event limit is below its response limit
 * (control), checked with the CLI's `--check-config` (in process: helpers/check-config.ts).
 * Expected: exit 0; the `max_sse_event_bytes` cells `1000 (configured 999999999)` and
 * `1000 (configured 2000)`, one note per row saying why; the control's cell as is, no note.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const C1 = [
  'agents:',
  '  a:',
  '    url: http://127.0.0.1:3001/mcp',
  '    max_response_bytes: 1000',
  '    max_sse_event_bytes: 999999999',
  '    max_call_response_bytes: 5000',
  '    tools:',
  '      t: {max_sse_event_bytes: 2000}',
  '  below:',
  '    url: http://127.0.0.1:3001/mcp',
  '    max_response_bytes: 1000',
  '    max_sse_event_bytes: 500',
  '',
].join('\n');

test("--check-config shows a clamped max_sse_event_bytes as '(configured N)', with a note (was: hidden)", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'check-config-sse-clamp-'));
  try {
    const file = join(dir, 'c1.yaml');
    await writeFile(file, C1);
    const { code, stdout, stderr } = await checkConfigRun(file);
    assert.deepEqual({ code, stderr }, { code: 0, stderr: '' });
    assert.deepEqual(
      stdout.split('\n').filter((line) => line.startsWith('note: ') || line.startsWith('WARNING: ')),
      [
        'note: a: max_sse_event_bytes 999999999 is above max_response_bytes 1000: an event limit is never above the response limit in force',
        'note: a/t: max_sse_event_bytes 2000 is above max_response_bytes 1000: an event limit is never above the response limit in force',
      ],
    );
    // Cells by the column offsets of the dashed rule under the header (the url cell of a tool row is empty).
    const lines = stdout.split('\n');
    const header = lines.findIndex((line) => line.startsWith('agent/tool'));
    const starts = [...lines[header + 1]!.matchAll(/-+/g)].map((m) => m.index ?? 0);
    const split = (line: string): string[] => starts.map((at, i) => line.slice(at, starts[i + 1]).trim());
    const columns = split(lines[header]!);
    const rows = new Map<string, Record<string, string>>();
    for (const line of lines.slice(header + 2)) {
      if (line === '') break;
      const cells = split(line);
      rows.set(cells[0]!, Object.fromEntries(columns.map((c, i) => [c, cells[i]!])));
    }
    const cells = (row: string): [string | undefined, string | undefined] => [rows.get(row)?.max_sse_event_bytes, rows.get(row)?.max_call_response_bytes];
    assert.deepEqual(cells('a'), ['1000 (configured 999999999)', '5000']);
    assert.deepEqual(cells('a/t'), ['1000 (configured 2000)', '5000']);
    assert.deepEqual(cells('below'), ['500', '1000']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
