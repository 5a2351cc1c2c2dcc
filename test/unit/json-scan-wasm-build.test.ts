/**
 * The committed WebAssembly modules (src/mcp/json-scan-wasm.ts, src/response/sse-plan-wasm.ts)
 * are what their AssemblyScript sources compile to (scripts/build-wasm.ts), so the source
 * read in review is the code that runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { compileWasm, wasmModuleText, WASM_CORES } from '../../scripts/build-wasm.js';

test('the cores are the JSON scan and the SSE raw-event planner', () => {
  assert.deepEqual(WASM_CORES.map((c) => c.source), ['assembly/json-scan.ts', 'assembly/sse-plan.ts']);
});

// The compiles (each its own asc process, several seconds of CPU) start at once; the tests
// await their own. One failing compile, under CI=true, checks both the diagnostics' text and
// that they are plain: two such compiles took ~10 s of the file's 40 s alone.
const compiled = new Map(WASM_CORES.map((core) => [core.source, compileWasm(core.source)] as const));
/** A source that does not compile, under CI=true (the child's environment is copied when compileWasm spawns it, synchronously). */
const missing = ((): Promise<Uint8Array> => {
  const before = process.env.CI;
  process.env.CI = 'true';
  try {
    return compileWasm('assembly/no-such-core.ts');
  } finally {
    if (before === undefined) delete process.env.CI;
    else process.env.CI = before;
  }
})();
for (const p of [...compiled.values(), missing]) p.catch(() => {}); // Awaited by its test; not an unhandled rejection before.

for (const core of WASM_CORES) {
  test(`${core.source} compiles to the committed module (else: npm run build:wasm)`, async () => {
    const expected = wasmModuleText(await compiled.get(core.source)!, core);
    assert.equal(readFileSync(core.module, 'utf8'), expected, `${core.module} stale: run \`npm run build:wasm\``);
  });
}

test("a source that does not compile rejects with the compiler's diagnostics, plain text when CI is set (stop 43: a CI run failed on asc colouring its ERROR)", async () => {
  await assert.rejects(missing, (err: Error) => {
    assert.ok(!err.message.includes('\u001b['), err.message);
    assert.match(err.message, /^asc failed to compile assembly\/no-such-core\.ts: 1 parse error\(s\)\nERROR TS6054: File 'assembly\/no-such-core\.ts' not found\./);
    return true;
  });
});
