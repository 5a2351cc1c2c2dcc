/**
 * Child script for test/integration/exit-after-log.test.ts:
 *
 *   exit-after-log-child.ts <flushes|never-flushes|throws>
 *
 * Logs two lines through a pino logger on a destination that writes each line to stdout
 * when its `flush` is called back (`flushes`: after a macrotask), never calls back
 * (`never-flushes`), or throws from `flush` (`throws`), then `exitAfterLogFlush(logger, 3, 200)`,
 * and logs a line on stderr if anything runs after it in the same tick.
 */
import pino from 'pino';
import { exitAfterLogFlush } from '../../src/observability/exit-after-log.js';

const mode = process.argv[2];
const queued: string[] = [];
const destination = {
  write(line: string) {
    queued.push(line);
  },
  flush(cb: (err?: Error) => void) {
    if (mode === 'throws') throw new Error('destroyed');
    if (mode === 'never-flushes') return;
    setImmediate(() => {
      process.stdout.write(queued.join(''));
      cb();
    });
  },
};
const logger = pino({ base: null, timestamp: false }, destination);
logger.info('first');
logger.warn('last');
exitAfterLogFlush(logger, 3, 200);
process.stderr.write('returned\n');
