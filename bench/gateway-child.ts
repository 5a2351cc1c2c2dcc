/**
 * The gateway under test, in its own process: the real `buildApp` from src/app.ts with the
 * bench's config (YAML in env `BENCH_GATEWAY_YAML`, parsed by the real loader), logs off
 * (the pass-through logs nothing either), after the process memory settings the bin's
 * `serve` applies (src/ops/process-memory.ts).
 *
 * The bench runs it compiled (compile.ts): `node [--cpu-prof --cpu-prof-dir bench/profiles]
 * <tmp>/out/bench/gateway-child.js`, next to the `<tmp>/out/src/` compiled from the run's
 * snapshot of src/, so every gateway process of one run runs the same code even while src/
 * is being edited.
 */
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { serveChild } from './child-stats.js';
import { tuneProcessMemory } from '../src/ops/process-memory.js';

// What the bin's `serve` does first (src/cli.ts): the gateway's process memory settings.
tuneProcessMemory();

const yaml = process.env.BENCH_GATEWAY_YAML;
if (!yaml) throw new Error('BENCH_GATEWAY_YAML is not set');

const config = parseConfig(yaml, { env: {}, source: 'bench gateway config' });
const app = await buildApp(config, { logger: false });
await app.listen({ host: '127.0.0.1', port: 0 });
serveChild((app.server.address() as AddressInfo).port, async () => {
  const closed = app.close();
  app.server.closeAllConnections();
  await closed;
});
