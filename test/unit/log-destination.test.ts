/**
 * The default log destination (src/observability/log-destination.ts): a write error stops
 * writing without throwing, the exit flush never throws, the buffer is bounded, and every
 * logger made by `createLogger` without a destination shares the one stdout destination.
 * The exit itself, with a real pipe whose reader is gone, stuck or alive:
 * test/regressions/exit-hang-stdout-reader-gone.test.ts.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createLogDestination, LOG_BUFFER_MAX_BYTES, stdoutLogDestination, type LogDestination } from '../../src/observability/log-destination.js';
import { createLogger } from '../../src/observability/logger.js';
import { withTimeout } from '../helpers/timeout.js';

const dir = mkdtempSync(join(tmpdir(), 'adcp-log-destination-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
/** A new empty file in `dir`. */
function newFile(): string {
  const path = join(dir, `${++files}.log`);
  writeFileSync(path, '');
  return path;
}

const flushed = (d: LogDestination): Promise<void> =>
  withTimeout(new Promise<void>((resolve, reject) => d.flush((err) => (err ? reject(err) : resolve()))), undefined, 'flush');

describe('a write error', () => {
  test('stops writing: later lines are dropped, nothing throws, the exit flush is a no-op', async () => {
    // A descriptor open for reading only: every write fails with EBADF, which sonic-boom emits as 'error'.
    const fd = openSync(newFile(), 'r');
    const d = createLogDestination(fd);
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown): void => void uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      d.write('first\n');
      d.write('second\n');
      // The error arrives with the first async write's completion.
      await withTimeout(
        new Promise<void>((resolve) => {
          const poll = setInterval(() => d.stopped && (clearInterval(poll), resolve()), 5);
        }),
        undefined,
        'stop after the write error',
      );
      assert.equal(d.stopped, true);
      assert.doesNotThrow(() => d.write('third\n'));
      assert.equal(d.droppedLines, 1);
      assert.doesNotThrow(() => d.flushAtExit());
      await flushed(d);
      assert.deepEqual(uncaught, []);
    } finally {
      // Not closed here: the stopped destination closes it (sonic-boom's destroy closes any
      // fd but 1 and 2, asynchronously), and closing it twice could close a reused number.
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe('the buffer bound', () => {
  test(`a line that would take the buffer past ${LOG_BUFFER_MAX_BYTES} bytes (16 MiB) is dropped; smaller ones are written`, async () => {
    const path = newFile();
    const fd = openSync(path, 'a');
    const d = createLogDestination(fd);
    d.write('before\n');
    d.write(`${'x'.repeat(LOG_BUFFER_MAX_BYTES)}\n`);
    d.write('after\n');
    await flushed(d);
    assert.equal(d.droppedLines, 1);
    assert.equal(readFileSync(path, 'utf8'), 'before\nafter\n');
    assert.equal(d.stopped, false);
    closeSync(fd);
  });

  test('a smaller bound drops what is written while the buffer is full', async () => {
    const path = newFile();
    const fd = openSync(path, 'a');
    const d = createLogDestination(fd, { maxBufferBytes: 100 });
    for (let n = 0; n < 5; n++) d.write(`${String(n).repeat(39)}\n`);
    await flushed(d);
    // 40 bytes a line: the first two fill 80 of the 100 bytes before any write completes.
    assert.equal(readFileSync(path, 'utf8'), `${'0'.repeat(39)}\n${'1'.repeat(39)}\n`);
    assert.equal(d.droppedLines, 3);
    closeSync(fd);
  });
});

describe('the exit flush', () => {
  test('writes what is still buffered, synchronously', async () => {
    const path = newFile();
    const fd = openSync(path, 'a');
    const d = createLogDestination(fd);
    d.write('one\n');
    d.write('two\n');
    d.write('three\n');
    d.flushAtExit();
    // 'one' may still be in flight on the thread pool; the buffered lines are on disk already.
    assert.match(readFileSync(path, 'utf8'), /two\nthree\n/);
    await flushed(d);
    closeSync(fd);
  });
});

describe('the shared stdout destination', () => {
  test('is one per process: loggers without a destination share it, with one exit listener', () => {
    const exitListeners = process.listenerCount('exit');
    const first = stdoutLogDestination();
    const added = process.listenerCount('exit') - exitListeners;
    assert.ok(added <= 1, `${added} exit listeners added`);
    const a = createLogger('info');
    const b = createLogger('silent');
    assert.equal(stdoutLogDestination(), first);
    assert.equal((a as unknown as Record<symbol, unknown>)[pino.symbols.streamSym], first);
    assert.equal((b as unknown as Record<symbol, unknown>)[pino.symbols.streamSym], first);
    assert.equal(process.listenerCount('exit') - exitListeners, added);
  });

  test('an explicit destination is used as given', () => {
    const sink = { write: (_line: string): void => {} };
    const logger = createLogger('info', { destination: sink });
    assert.equal((logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym], sink);
  });
});
