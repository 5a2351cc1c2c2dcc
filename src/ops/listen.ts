/**
 * Starts serving: the gateway on `listen`, then the ops endpoints on `ops_listen` when the
 * config has one (`buildApp` never listens; this is what `cli.ts` calls).
 */
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from '../config/types.js';

export interface ListeningAddresses {
  /** The gateway's address, e.g. `http://127.0.0.1:8787`. */
  readonly address: string;
  /** The ops endpoints' address when `ops_listen` is set, else undefined (they are on `address`). */
  readonly opsAddress: string | undefined;
}

/**
 * Listens on `config.listen`, then on `config.ops_listen` with the ops app of `app` (when
 * set). If the ops listener fails, the gateway is closed again and the error is thrown, so a
 * failed start never leaves a half-started process behind. `app.close()` closes both.
 */
export async function listenAll(app: FastifyInstance, config: GatewayConfig): Promise<ListeningAddresses> {
  const address = await app.listen({ host: config.listen.host, port: config.listen.port });
  const ops = app.gateway.opsApp;
  if (ops === undefined || config.ops_listen === undefined) return { address, opsAddress: undefined };
  try {
    const opsAddress = await ops.listen({ host: config.ops_listen.host, port: config.ops_listen.port });
    return { address, opsAddress };
  } catch (err) {
    await app.close();
    throw err;
  }
}
