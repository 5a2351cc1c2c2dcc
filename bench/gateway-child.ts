/**
 * The gateway under test, in its own process: the real `buildApp` from src/app.ts with the
 * bench's config (YAML in env `BENCH_GATEWAY_YAML`, parsed by the real loader), logs off
 * (the pass-through logs nothing either). Started by the bench with
 * `node --import tsx [--cpu-prof --cpu-prof-dir bench/profiles] bench/gateway-child.ts`.
 *
 * `BENCH_SRC_DIR` points at the snapshot of src/ the bench took when it started (run.ts), so
 * every gateway process of one run runs the same code even while src/ is being edited;
 * without it, the repository's src/ is used.
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { serveChild } from './child-stats.js';

type AppModule = typeof import('../src/app.js');
type LoadModule = typeof import('../src/config/load.js');

const yaml = process.env.BENCH_GATEWAY_YAML;
if (!yaml) throw new Error('BENCH_GATEWAY_YAML is not set');
const srcDir = process.env.BENCH_SRC_DIR;
const from = (file: string): string => (srcDir ? pathToFileURL(join(srcDir, file)).href : new URL(`../src/${file}`, import.meta.url).href);

const { buildApp } = (await import(from('app.ts'))) as AppModule;
const { parseConfig } = (await import(from('config/load.ts'))) as LoadModule;

const config = parseConfig(yaml, { env: {}, source: 'bench gateway config' });
const app = await buildApp(config, { logger: false });
await app.listen({ host: '127.0.0.1', port: 0 });
serveChild((app.server.address() as AddressInfo).port, async () => {
  const closed = app.close();
  app.server.closeAllConnections();
  await closed;
});
