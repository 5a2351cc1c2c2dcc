/**
 * The setup most end-to-end and regression suites share: a seller, then a gateway in front of
 * it, started in `before` and closed in `after` (hosts and clients first, then the gateway,
 * then the seller). Call it inside a `describe` (or at the top level of a test file): it
 * registers those two hooks where it is called. A suite that needs more setup registers its
 * own `before` after this call; node:test runs hooks in the order they were registered.
 */
import { after, before } from 'node:test';

export interface Closable {
  close(): Promise<unknown>;
}

export interface SellerAndGateway<S, G> {
  /** The seller; only once `before` has run. */
  readonly seller: S;
  /** The gateway in front of it; only once `before` has run. */
  readonly gateway: G;
  /**
   * Closes these (SDK clients, hosts) in `after`, before the gateway and the seller; a close
   * that fails does not fail the suite.
   */
  closeAfter(...closables: Array<Closable | undefined>): void;
}

export function useSellerAndGateway<S extends Closable, G extends Closable>(
  startSeller: () => Promise<S>,
  startGateway: (seller: S) => Promise<G>,
): SellerAndGateway<S, G> {
  let seller: S | undefined;
  let gateway: G | undefined;
  const closables: Array<Closable | undefined> = [];

  before(async () => {
    seller = await startSeller();
    gateway = await startGateway(seller);
  });
  after(async () => {
    await Promise.allSettled(closables.map((c) => c?.close()));
    await gateway?.close();
    await seller?.close();
  });

  return {
    get seller(): S {
      if (seller === undefined) throw new Error('the seller is not started yet (use it in a test or a later hook)');
      return seller;
    },
    get gateway(): G {
      if (gateway === undefined) throw new Error('the gateway is not started yet (use it in a test or a later hook)');
      return gateway;
    },
    closeAfter(...more) {
      closables.push(...more);
    },
  };
}
