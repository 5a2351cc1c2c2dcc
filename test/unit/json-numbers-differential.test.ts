/**
 * Differential tests of the follow-up of hostile trial 56 (json-numbers.ts; huge numbers held
 * the event loop: test/regressions/huge-number-lossy-check-stalls-gateway.test.ts and
 * test/regressions/cancel-huge-number-id-canonicalized.test.ts):
 * - `hasLossyNumber`, rewritten (a loop per part of a number token; rule 3 reads a long token
 *   spelled short, and decides NaN, Infinity and 0 without converting), against the version
 *   before it, kept in test/helpers/lossy-number-before.ts: the same answer on seeded random
 *   number spellings, valid or not, alone and inside texts, as a string, a Buffer and a
 *   Uint8Array view;
 * - `exactDecimalLengthRange` against `exactDecimal(text).length`, and `requestIdMatcher`
 *   (which now decides by those lengths first) against `isRequestId`, which it must equal.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { exactDecimal, exactDecimalLengthRange, hasLossyNumber } from '../../src/mcp/json-numbers.js';
import { isRequestId, requestIdMatcher } from '../../src/response/json-value-at.js';
import { hasLossyNumberBefore } from '../helpers/lossy-number-before.js';
import { rng } from '../helpers/json-fuzz.js';
import { hostRpc } from '../helpers/written-request-ids.js';

const random = rng(5656);
const int = (n: number) => Math.floor(random() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
const digitRun = (n: number, lead = false) => Array.from({ length: n }, (_, k) => String(k === 0 && lead ? 1 + int(9) : int(10))).join('');
const zeros = (n: number) => '0'.repeat(n);
/** Mostly short, sometimes long (past the 25 characters of any double's text), once in a while very long. */
const runLength = () => pick([0, 1, 1, 2, 3, 5, 10, 20, 40, 400, int(30)]);

/** Tokens at the edges of the rules: -0, 2^53 +- 1, 15/16/17/21/22 digits, the double range's ends, subnormals, NaN exponents. */
const EDGES = [
  '0', '-0', '-0.0', '0e-999', '-0e99999', '0.000', '00', '-00.0e5',
  '9007199254740991', '9007199254740992', '9007199254740993', '9007199254740994', '-9007199254740993',
  '999999999999999', '1000000000000000', '9999999999999999', '12345678901234567', '123456789012345678',
  '100000000000000000000', '999999999999999999999', '1000000000000000000000', '123456789012345678901', '12345678901234567000',
  '1e308', '1e309', '-1e309', '1.7976931348623157e308', '1.7976931348623158e308', '1.7976931348623159e308', '17976931348623157e292',
  '1e-307', '1e-308', '2.2250738585072014e-308', '2.225073858507201e-308', '1e-320', '1e-323', '1e-324', '1e-325',
  '5e-324', '4.9406564584124654e-324', '3e-324', '2.4703282292062328e-324', '2.4703282292062327e-324', '2e-324', '2.5e-324',
  '0.1', '0.30000000000000004', '0.1000000000000000055511151231257827', '1.2345678901234568E+16', '3.4458332855285927e43',
  `0.${zeros(330)}5`, `0.${zeros(323)}5`, `5${zeros(300)}`, `1${zeros(309)}.0`, `17976931348623157${zeros(292)}.0`,
  `1e-${zeros(4000)}5`, `1e${zeros(4000)}308`, `1e${zeros(4000)}309`, `0.${zeros(400)}123e400`, `1234567890123456.${zeros(60)}`,
  '1e', '1e+', '1e-', '1e+-5', '1e5-3', '1e5+', '1.2.3', '-', '--5', '-.5', '1.', '-.', '-e5', '1.5e', '12345678901234567e', '1e4e4',
  `12345678901234567e-${zeros(40)}`, `1.2345678901234567e3-`, `9.${'9'.repeat(16)}e308`, `2.4703282292062327e-324${zeros(3)}`,
];

/** A random number token: valid JSON mostly, some of what a scan may meet in an invalid text. */
function token(): string {
  const sign = pick(['', '', '', '-', '-', '--', '+']);
  const intPart = pick(['0', '0', digitRun(1 + int(25), true), `${1 + int(9)}${zeros(runLength())}`, zeros(1 + int(3)), '', digitRun(runLength(), true)]);
  const fraction = pick(['', '', `.${digitRun(1 + int(20))}`, `.${zeros(runLength())}${digitRun(1 + int(18))}`, `.${digitRun(1 + int(17))}${zeros(runLength())}`, '.', `.${zeros(runLength())}`]);
  const exponentDigits = pick([String(int(30)), String(290 + int(45)), `${zeros(runLength())}${int(340)}`, digitRun(1 + int(25)), '', String(2 ** 53 + int(3) - 1)]);
  const exponent = random() < 0.5 ? '' : `${pick(['e', 'E'])}${pick(['', '', '+', '-', '-', '+-', '-+'])}${exponentDigits}${pick(['', '', '', '', '-1', '+', 'e1', '.5'])}`;
  return `${sign}${intPart}${fraction}${exponent}`;
}

/**
 * A token aimed at rule 3 (the exact check): 1-17 significant digits with the decimal exponent
 * of the first near the double range's ends or anywhere in it, spelled with the digits shifted
 * among zeros and an exponent that makes up for it (so often long with a small value).
 */
function ruleThreeToken(): string {
  const significant = pick([1, 2, 15, 16, 16, 17, 17, 1 + int(17)]);
  const digits = significant === 1 ? String(1 + int(9)) : `${1 + int(9)}${digitRun(significant - 2)}${1 + int(9)}`;
  const e = pick([308, 309, 307, -307, -308, -323, -324, -325, -326, 22, 16, 0, -7, int(640) - 330]);
  const leadingZeros = pick([0, 0, 1, 5, 40, 400]); // the digits start after `0.` and this many zeros
  const trailingZeros = pick([0, 0, 3, 40]);
  const mantissa = random() < 0.5 ? `${digits[0]}.${digits.slice(1)}${zeros(trailingZeros)}` : `0.${zeros(leadingZeros)}${digits}${zeros(trailingZeros)}`;
  // 10^(exponent) scales the mantissa's first digit to 10^e.
  const shift = mantissa.startsWith('0.') ? e + leadingZeros + 1 : e;
  const exponent = `${shift < 0 ? '-' : pick(['', '+'])}${pick(['', '', zeros(1 + int(40))])}${Math.abs(shift)}`;
  return `${pick(['', '-'])}${mantissa.replace(/\.$/, '')}${pick(['e', 'E'])}${exponent}`;
}

/** The token alone, or inside a text: other numbers around it, in strings, after invalid bytes. */
function inText(t: string): string {
  switch (int(7)) {
    case 0: return t;
    case 1: return `[${t}]`;
    case 2: return `{"a":${t},"b":"${t}","c":[1, 2.5,\n\t${token()} ]}`;
    case 3: return `${token()} ${t} ${token()}`;
    case 4: return `{"s":"\\"${t}\\\\","n":${t}}`;
    case 5: return `"${t}`; // an unterminated string: nothing after its quote is read
    default: return `${t}${pick(['.', 'e', '-', '+', ',', 'x', ''])}${token()}`;
  }
}

/** The new scan and the one before on `text` as a string, a Buffer and a Uint8Array view at an offset (digits around it). */
function assertSame(text: string): boolean {
  const before = hasLossyNumberBefore(text);
  assert.equal(hasLossyNumber(text), before, `string: ${text.slice(0, 120)}`);
  const utf8 = Buffer.from(text, 'utf8');
  assert.equal(hasLossyNumber(utf8), before, `Buffer: ${text.slice(0, 120)}`);
  const backing = new Uint8Array(utf8.length + 6);
  backing.set(utf8, 3);
  backing.fill(0x31, 0, 3);
  backing.fill(0x35, utf8.length + 3);
  assert.equal(hasLossyNumber(backing.subarray(3, 3 + utf8.length)), before, `Uint8Array view: ${text.slice(0, 120)}`);
  return before;
}

describe('hasLossyNumber: the same answers as the version before (seeded)', () => {
  test('edge tokens, alone and inside texts', () => {
    for (const t of EDGES) {
      assertSame(t);
      assertSame(`{"x":[${t}, -${t}],"y":"${t}"}`);
    }
  });

  test('10,000 random tokens and 10,000 aimed at rule 3, alone and inside texts: identical; both answers common', () => {
    const answers = { true: 0, false: 0, longTrue: 0, longFalse: 0 };
    for (let k = 0; k < 10_000; k++) {
      for (const t of [token(), ruleThreeToken()]) {
        const lossy = assertSame(t);
        answers[lossy ? 'true' : 'false']++;
        if (t.length > 25) answers[lossy ? 'longTrue' : 'longFalse']++;
        assertSame(inText(t));
      }
    }
    for (const [key, count] of Object.entries(answers)) assert.ok(count > 500, `${key}: ${count}`);
  });

  test('texts of megabytes: a 1 MB number of each kind, and many small numbers', () => {
    const big = 1 << 20;
    for (const t of [`9${'9'.repeat(big)}`, `1.${zeros(big)}1`, `1e-${'9'.repeat(big)}`, `1e${'9'.repeat(big)}`, `0.${zeros(big)}1`, `1${zeros(big)}e-${big}`, `12345678901234567${zeros(big)}e-${big + 16}`, `1.${zeros(big)}`]) {
      assertSame(t);
      assertSame(`{"n":${t}}`);
    }
    const items = Array.from({ length: 20_000 }, (_, i) => ({ id: i, price: (i * 1.37) % 1000, ratio: i / 7, big: 2 ** 53 + i, tiny: i * 1e-310 }));
    assertSame(JSON.stringify({ items }));
  });
});

describe('exactDecimalLengthRange: the length of exactDecimal, from the bytes', () => {
  /** Exponent digits: short, around 15/16 digits, long with carries and borrows (as json-numbers.test.ts spells them). */
  const exponentDigits = () =>
    pick([String(int(400)), String(10 ** 15 + int(200) - 100), String(10 ** 16 + int(200) - 100), '9'.repeat(1 + int(40)), `1${zeros(15 + int(30))}`, digitRun(1 + int(60)), `${zeros(1 + int(20))}${int(99)}`]);
  const spelling = () =>
    `${pick(['', '', '-'])}${pick(['', '0', '00'])}${pick(['0', digitRun(1 + int(25)), `${1 + int(9)}${zeros(int(25))}`, '1', ''])}` +
    `${pick(['', '', `.${digitRun(1 + int(25))}`, `.${zeros(int(30))}${digitRun(1 + int(5))}`, '.0', '.'])}` +
    (random() < 0.8 ? `${pick(['e', 'E'])}${pick(['', '+', '-'])}${exponentDigits()}` : '');
  const INVALID = ['-', '1e', '1e+', '1e+-5', '1.2.3', '1e5.5', '5.', '-.5e3', '1e 5', '1E5e3', '1e5E3', '--1', '-e', '0x10', '7e', '7.0.0', '70e-1-', '7 '];

  test('20,000 seeded spellings: the length within the range; exact unless the exponent is over 15 digits', () => {
    let numbers = 0;
    for (let k = 0; k < 20_000; k++) {
      const text = spelling();
      const canonical = exactDecimal(text);
      if (canonical.startsWith('?')) continue; // not a number: the range means nothing (its doc)
      numbers++;
      const bytes = Buffer.from(`e1.-${text}5e-1`, 'latin1'); // read at an offset: nothing outside the range
      const [min, max] = exactDecimalLengthRange(bytes, 4, 4 + text.length);
      const length = canonical.length;
      assert.ok(min <= length && length <= max, `${text}: ${length} not in [${min}, ${max}]`);
      const exponent = /[eE][+-]?0*(\d+)$/.exec(text)?.[1] ?? '';
      if (exponent.length <= 15) assert.equal(max, min, text);
      else assert.ok(max - min <= 2, text);
    }
    assert.ok(numbers > 15_000, `numbers among the spellings: ${numbers}`);
  });

  test('requestIdMatcher is isRequestId: seeded written ids against requests with and without idText', () => {
    // Written ids: numbers, and texts no scan would pass (the matcher must still be isRequestId on them).
    const written = () => pick([spelling(), spelling(), String(int(20)), '"7"', `${int(5)}e${int(3)}`, `${int(5)}.0`, '7', '-0', '1e-400', `1e${'9'.repeat(30)}`, `10e${'9'.repeat(29)}8`, pick(INVALID)]);
    const requests = () => pick(['7', '7.0', '70e-1', '1', '0', '-0', '0.0', '9007199254740993', '12345678901234567890', '1e-400', '10e-401', '"7"', `1e-${'9'.repeat(30)}`, spelling()]);
    let matched = 0;
    for (let k = 0; k < 5_000; k++) {
      const id = written();
      const bytes = Buffer.from(` ${id} `);
      const range = [1, 1 + id.length] as const;
      const isId = requestIdMatcher(bytes, range);
      for (let r = 0; r < 4; r++) {
        const text = requests();
        // A request the peek takes: valid JSON, not read as infinite.
        if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$|^"7"$/.test(text) || JSON.parse(text) === Infinity || JSON.parse(text) === -Infinity) continue;
        const rpc = hostRpc(text, 'tools/call');
        const expected = isRequestId(bytes, range, rpc);
        assert.equal(isId(rpc), expected, `${id} vs request ${text}`);
        if (expected) matched++;
      }
    }
    assert.ok(matched > 100, `matches in the sample: ${matched}`);
  });
});
