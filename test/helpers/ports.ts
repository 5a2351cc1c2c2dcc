/** Ports a test needs in a known state: taken by another listener, or free and refusing. */
import net, { type AddressInfo } from 'node:net';

/** Runs `fn` with a 127.0.0.1 port that another listener holds until `fn` settles. */
export async function withTakenPort<T>(fn: (port: number) => Promise<T>): Promise<T> {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  try {
    return await fn((blocker.address() as AddressInfo).port);
  } finally {
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
  }
}

/** A 127.0.0.1 port nothing listens on (just released): a connection to it is refused. */
export async function closedPort(): Promise<number> {
  return withTakenPort(async (port) => port);
}
