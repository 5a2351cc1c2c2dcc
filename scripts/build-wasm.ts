/**
 * `npm run build:wasm`: compiles the WebAssembly cores (AssemblyScript, {@link WASM_CORES}:
 * the JSON scan core assembly/json-scan.ts, the SSE raw-event planner assembly/sse-plan.ts)
 * and writes each, base64-encoded, into its TypeScript module (src/mcp/json-scan-wasm.ts,
 * src/response/sse-plan-wasm.ts), which the gateway instantiates. The generated files are
 * committed, so installing, building (tsc) and running the gateway need no WebAssembly
 * toolchain; the AssemblyScript compiler is a devDependency.
 *
 * `--check`: compiles and exits 1 (naming the fix) when a committed file differs from what
 * its source compiles to. test/unit/json-scan-wasm-build.test.ts runs the same check, which
 * is why package.json pins the compiler exactly (`assemblyscript` 0.28.20): another version
 * may emit other bytes for the same source.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { isEntryPoint } from '../src/entry-point.js';
import { repoRoot } from './repo-root.js';

const ROOT = repoRoot(import.meta.url, 1);
/** One WebAssembly core: its source, the generated module, the constant and what it is (its docstring). */
export interface WasmCore {
  readonly source: string;
  readonly module: string;
  readonly constant: string;
  readonly what: string;
}

/** Every core `npm run build:wasm` compiles. */
export const WASM_CORES: readonly WasmCore[] = [
  { source: 'assembly/json-scan.ts', module: join(ROOT, 'src/mcp/json-scan-wasm.ts'), constant: 'JSON_SCAN_WASM_BASE64', what: 'The JSON scan core' },
  { source: 'assembly/sse-plan.ts', module: join(ROOT, 'src/response/sse-plan-wasm.ts'), constant: 'SSE_PLAN_WASM_BASE64', what: 'The SSE raw-event planner' },
];

/**
 * The compiler flags: optimized (-O3), no runtime or allocator (the core uses fixed static
 * areas), no imports (`abort` dropped), SIMD on (Node >= 16.4 has it by default).
 */
const ASC_FLAGS = ['-O3', '--runtime', 'stub', '--use', 'abort=', '--enable', 'simd', '--noAssert'];

/**
 * Compiles the core at `source` (relative to the repository); resolves to the .wasm bytes,
 * rejects with the compiler's diagnostics.
 *
 * The compiler runs in a child process of plain node ({@link COMPILE_SCRIPT}), not in this
 * one: under tsx (the tests, `npm run build:wasm`) importing it took ~25 s of CPU, tsx
 * rewriting and source-mapping binaryen's 13.5 MB one-line module, where plain node takes
 * ~1.5 s (test/unit/json-scan-wasm-build.test.ts: 30.0 -> 9.4 s of wall time, 35 -> 13 s of CPU).
 */
export async function compileWasm(source: string): Promise<Uint8Array> {
  const outFile = source.replace(/^.*\//, '').replace(/\.ts$/, '.wasm');
  const args = ['--input-type=module', '--eval', COMPILE_SCRIPT, '--', source, outFile, ...ASC_FLAGS];
  try {
    const { stdout } = await runFile(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: COMPILE_TIMEOUT_MS, env: { ...process.env, NODE_OPTIONS: '' } });
    return new Uint8Array(Buffer.from(stdout, 'base64'));
  } catch (err) {
    const failed = err as { stderr?: string; message?: string };
    throw new Error(`asc failed to compile ${source}: ${(failed.stderr ?? '').trim() || failed.message}`);
  }
}

const runFile = promisify(execFile);
/** A compile takes ~1.5 s; a hung compiler is killed after this. */
const COMPILE_TIMEOUT_MS = 120_000;

/**
 * The child's program (an ES module run by plain node in the repository, argv: source, output
 * file name, compiler flags): compiles with AssemblyScript's API, reading sources from the
 * repository, and writes the binary base64 on stdout; diagnostics on stderr and exit 1 on failure.
 * `--noColors`: asc colours its diagnostics when stderr is a TTY or `CI` is set in the environment
 * (a CI run failed on `\x1B[91mERROR`, stop 43); the message is plain text either way.
 */
const COMPILE_SCRIPT = `
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import asc from 'assemblyscript/asc';
const [source, outFile, ...flags] = process.argv.slice(1);
let binary;
let diagnostics = '';
const { error } = await asc.main([source, ...flags, '--noColors', '--outFile', outFile], {
  readFile: (name, baseDir) => { try { return readFileSync(join(baseDir, name), 'utf8'); } catch { return null; } },
  writeFile: (name, contents) => { if (name.endsWith('.wasm') && typeof contents !== 'string') binary = contents; },
  listFiles: () => [],
  stdout: { write: () => true },
  stderr: { write: (s) => ((diagnostics += s), true) },
});
if (error || binary === undefined) {
  process.stderr.write((error ? error.message : 'no output') + '\\n' + diagnostics);
  process.exit(1);
}
process.stdout.write(Buffer.from(binary).toString('base64'));
`;

/** The TypeScript module that carries `bytes`, compiled from `core`. */
export function wasmModuleText(bytes: Uint8Array, core: WasmCore): string {
  const sha = createHash('sha256').update(bytes).digest('hex');
  const base64 = Buffer.from(bytes).toString('base64');
  return [
    `// GENERATED by \`npm run build:wasm\` (scripts/build-wasm.ts) from ${core.source}: do not edit.`,
    `// ${bytes.length} bytes of WebAssembly, sha256 ${sha}.`,
    '',
    `/** ${core.what} (${core.source}), compiled, base64. */`,
    `export const ${core.constant} =\n  '${base64}';`,
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } } });
  if (values.help) {
    process.stdout.write(`Usage: npm run build:wasm [-- --check]\n  Compiles ${WASM_CORES.map((c) => c.source).join(', ')} into their src/ modules; --check only compares.\n`);
    return;
  }
  for (const core of WASM_CORES) {
    const text = wasmModuleText(await compileWasm(core.source), core);
    if (values.check) {
      const current = readFileSync(core.module, 'utf8');
      if (current !== text) {
        process.stderr.write(`${core.module} is not what ${core.source} compiles to: run \`npm run build:wasm\`\n`);
        process.exitCode = 1;
      } else process.stdout.write(`${core.module} is up to date\n`);
      continue;
    }
    writeFileSync(core.module, text);
    process.stdout.write(`wrote ${core.module}\n`);
  }
}

if (isEntryPoint(import.meta.url)) await main();
