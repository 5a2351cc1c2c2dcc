/**
 * Whether the module at `moduleUrl` (its `import.meta.url`) is the script Node was started
 * with (`process.argv[1]`), not a module another one imported: the command line of
 * src/main.ts, bench/scan.ts and scripts/build-wasm.ts runs only then.
 *
 * Compared as real paths: the URL percent-encodes a space (a checkout under "My Projects"),
 * and Node runs the real file of a symlinked script (a global install's bin link, a
 * symlinked checkout), so a plain string comparison of the two said "imported" and the
 * command did nothing, exit code 0 (found in review of bench/scan.ts, 2026-12-02).
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function isEntryPoint(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
