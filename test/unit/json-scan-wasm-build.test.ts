/**
 * The committed WebAssembly modules (src/mcp/json-scan-wasm.ts, src/response/sse-plan-wasm.ts)
 * are what their AssemblyScript sources compile to (scripts/build-wasm.ts), so the source
 * read in review is the code that runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { compileJsonScanWasm, compileWasm, wasmModuleText, WASM_CORES, WASM_MODULE } from '../../scripts/build-wasm.js';

test('src/mcp/json-scan-wasm.ts is what assembly/json-scan.ts compiles to (else: npm run build:wasm)', async () => {
  const expected = wasmModuleText(await compileJsonScanWasm());
  assert.equal(readFileSync(WASM_MODULE, 'utf8'), expected, 'stale: run `npm run build:wasm`');
});

test('every other WebAssembly module is what its source compiles to (else: npm run build:wasm)', async () => {
  assert.ok(WASM_CORES.length >= 2);
  for (const core of WASM_CORES.slice(1)) {
    const expected = wasmModuleText(await compileWasm(core.source), core);
    assert.equal(readFileSync(core.module, 'utf8'), expected, `${core.module} stale: run \`npm run build:wasm\``);
  }
});
