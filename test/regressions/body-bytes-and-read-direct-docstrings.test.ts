/**
 * Regression (read-only review 37, F7, docstrings): two docstrings of the JSON read path said
 * less than the code does.
 *
 * - read-body.ts `BodyBytes`: "a declared length that never arrives costs address space …
 *   not resident memory". True of a fresh buffer; but a length in the pool's range (16 KiB to
 *   32 MiB) is served first by an idle pooled buffer an earlier body filled: resident already
 *   (out of the pool's 32 MiB process-wide bound on idle buffers).
 * - body-source.ts `readDirect`: its list of rejections left out `LoadShedError`, which it
 *   rejects with when its buffer lease is shed while the read waits.
 *
 * Input: a pooled 64 KiB buffer filled and given back (its response closed), then a BodyBytes
 * for a declared 64 KiB body that receives 10 bytes; readDirect over an uncoded body whose
 * lease must wait after the first chunk and is then shed (retry after 7 s); the two docstrings.
 * Expectation: the BodyBytes holds the given-back buffer itself (the same memory, resident
 * before any byte of this body arrived; only the 10 bytes exposed); readDirect rejects with a
 * LoadShedError (`retryAfterS` 7) and destroys the stream; each docstring says so (they did not).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { BodyBytes } from '../../src/response/read-body.js';
import { bodyPool } from '../../src/response/body-pool.js';
import { openBodySource, readDirect, type HeldBytes } from '../../src/response/body-source.js';
import { LoadShedError } from '../../src/admission/agent-guard.js';
import { join } from 'node:path';
import { REPO } from '../helpers/repo.js';

/** The doc comment just before `marker` in `file`. */
function docBefore(file: string, marker: string): string {
  const text = readFileSync(join(REPO, file), 'utf8');
  const at = text.indexOf(marker);
  assert.ok(at > 0, `${marker} in ${file}`);
  return text.slice(text.lastIndexOf('/**', at), at).replace(/\s*\n\s*\*\s?/g, ' ');
}

describe('review 37, F7: BodyBytes and readDirect do what their docstrings say', () => {
  test('BodyBytes: a declared length in the pool range is served by a buffer an earlier body filled (resident already)', () => {
    const size = 64 * 1024;
    const earlier = bodyPool.take(size)!;
    earlier.fill(0xaa);
    const closing = new EventEmitter();
    bodyPool.recycleAfterSend(closing, earlier);
    closing.emit('close');
    const bytes = new BodyBytes(size);
    bytes.push(Buffer.from('0123456789'));
    const body = bytes.body();
    assert.equal(body.buffer, earlier.buffer, 'the given-back buffer itself');
    assert.equal(body.toString(), '0123456789', 'only the bytes copied in are exposed');
    const doc = docBefore('src/response/read-body.ts', 'export class BodyBytes');
    assert.match(doc, /resident already/);
    assert.match(doc, /POOL_IDLE_MAX_BYTES/);
  });

  test('readDirect rejects with LoadShedError when its lease is shed while it waits', async () => {
    const stream = new PassThrough();
    let shed: number | undefined;
    let waits = false;
    const hold: HeldBytes = {
      add: () => {
        waits = true;
      },
      get mustWait() {
        return waits;
      },
      ready: () => {
        shed = 7;
        return Promise.resolve();
      },
      get shedRetryAfterS() {
        return shed;
      },
    };
    const read = readDirect(openBodySource(stream, [], 1000), [], undefined, hold);
    stream.write(Buffer.from('{"a":'));
    await assert.rejects(read, (err: unknown) => err instanceof LoadShedError && err.retryAfterS === 7);
    assert.equal(stream.destroyed, true);
    assert.match(docBefore('src/response/body-source.ts', 'export function readDirect'), /LoadShedError/);
  });
});
