/**
 * Child script for test/regressions/exit-hang-stdout-reader-gone.test.ts:
 *
 *   log-then-exit.ts <count> <now|after-flush> [<pad bytes>]
 *
 * Makes the gateway's logger as `serve` does (`createLogger('info')`, no destination: the
 * shared stdout destination), writes `count` info lines `{"n":<n>,"msg":"line <n>"}` (with a
 * `pad` field of that many `x` when given), then calls `process.exit(0)`: `now`, in the same
 * tick, so every line but the first (whose async write is in flight) is still buffered for
 * the exit flush; `after-flush`, once the logger has written everything out.
 */
import { createLogger } from '../../src/observability/logger.js';

const count = Number(process.argv[2]);
const when = process.argv[3];
const pad = process.argv[4] === undefined ? {} : { pad: 'x'.repeat(Number(process.argv[4])) };
if (!Number.isSafeInteger(count) || count < 1 || (when !== 'now' && when !== 'after-flush')) {
  process.stderr.write('usage: log-then-exit.ts <count> <now|after-flush> [<pad bytes>]\n');
  process.exit(2);
}
const logger = createLogger('info');
for (let n = 1; n <= count; n++) logger.info({ n, ...pad }, `line ${n}`);
if (when === 'now') process.exit(0);
logger.flush(() => process.exit(0));
