/**
 * Ends a host's connection with a TCP reset (RST), for the answers that must never look
 * complete and cannot reach the host whole (ARCHITECTURE §3, "Neither possible: reset the
 * connection"; docs/errors.md): `host_not_reading`, and a pipeline failure after the answer
 * started.
 *
 * Why a reset and not a plain close (`destroy()`): a plain close leaves what the kernel has
 * already accepted for the host queued in front of the FIN. From a host that does not read,
 * that is the socket buffers' worth (measured on loopback here: a host paused before the
 * first byte, sent 16 MiB, read 4,157,952 bytes after a plain close, 128,000 after a reset),
 * held by the gateway's kernel until the host reads it or TCP gives up on the connection, so
 * a crowd of hosts that stop reading kept megabytes each after the gateway had let go of
 * them. A reset discards that queue at once (SO_LINGER 0: Node's `socket.resetAndDestroy`).
 * Reported failure: carried from an earlier review ("raw.destroy() is no TCP reset");
 * test/regressions/host-never-reads-the-answer.test.ts.
 *
 * A response not on a connection (queued behind another on a pipelined one: `socket` null)
 * or on one that is not TCP (a pipe) is destroyed plainly. Either way the response emits
 * 'close' once its socket is closed, as after `destroy()`.
 */
import type { ServerResponse } from 'node:http';

export function resetHostConnection(raw: ServerResponse): void {
  const socket = raw.socket;
  if (socket !== null && !socket.destroyed) {
    try {
      socket.resetAndDestroy();
      return;
    } catch {
      // Not a TCP handle (ERR_INVALID_HANDLE_TYPE): closed plainly below.
    }
  }
  raw.destroy();
}
