/**
 * The committed WebAssembly (src/mcp/json-scan-wasm.ts) is what assembly/json-scan.ts
 * compiles to (scripts/build-wasm.ts), so the source read in review is the code that runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { compileJsonScanWasm, wasmModuleText, WASM_MODULE } from '../../scripts/build-wasm.js';

test('src/mcp/json-scan-wasm.ts is what assembly/json-scan.ts compiles to (else: npm run build:wasm)', async () => {
  const expected = wasmModuleText(await compileJsonScanWasm());
  assert.equal(readFileSync(WASM_MODULE, 'utf8'), expected, 'stale: run `npm run build:wasm`');
});
