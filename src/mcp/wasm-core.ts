/**
 * Instantiates one of the gateway's WebAssembly cores (the JSON scan, src/mcp/json-scan.ts; the
 * SSE event planner, src/response/sse-raw-plan.ts) from its generated base64 module
 * (scripts/build-wasm.ts). The cores import nothing; each is instantiated once, at load.
 */

/** The part of the WebAssembly JS API used here (the global exists in every Node; lib ES2023 and @types/node 20 do not declare it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

/** The exports of the module in `base64`, typed as `T` (the caller's description of them). */
export function instantiateWasmCore<T>(base64: string): T {
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  return new wasm.Instance(new wasm.Module(Buffer.from(base64, 'base64')), {}).exports as T;
}

/** The cores count in int32: a bound at or above this is no bound (pass this instead). */
export const WASM_INT32_MAX = 0x7fffffff;
