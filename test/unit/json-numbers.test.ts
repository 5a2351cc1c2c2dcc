// hasLossyNumber (src/mcp/json-numbers.ts), and its use by normalizeToolResult and
// rewriteResponse: a rewrite re-serializes through JavaScript doubles, so nothing holding a
// number that can't round-trip is deduped, lifted or re-serialized
// (test/regressions/big-number-precision.test.ts has the reported failure end to end).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exchange } from '../../src/exchange.js';
import { exactDecimal, hasLossyNumber, sameJsonNumber } from '../../src/mcp/json-numbers.js';
import { normalizeToolResult } from '../../src/mcp/normalize.js';
import { rewriteResponse } from '../../src/response/rewrite.js';
import { rng } from '../helpers/json-fuzz.js';

/** Checks string and bytes input agree (also a Uint8Array that is a view at an offset) and returns the answer. */
function lossy(text: string): boolean {
  const fromString = hasLossyNumber(text);
  const utf8 = Buffer.from(text, 'utf8');
  assert.equal(hasLossyNumber(utf8), fromString, `Buffer disagrees on ${text.slice(0, 80)}`);
  const backing = new Uint8Array(utf8.length + 7);
  backing.set(utf8, 3);
  backing[0] = 0x31; // digits around the view must not be read
  backing[utf8.length + 3] = 0x31;
  assert.equal(hasLossyNumber(backing.subarray(3, 3 + utf8.length)), fromString, `Uint8Array view disagrees on ${text.slice(0, 80)}`);
  return fromString;
}

/**
 * The oracle: does `JSON.stringify(JSON.parse(token))` have exactly the token's decimal value?
 * Compared with BigInt arithmetic on the canonical (digits, exponent) form.
 */
function roundTripsExactly(token: string): boolean {
  const out = JSON.stringify(JSON.parse(token));
  if (out === 'null') return false;
  return exact(out) === exact(token);
}
function exact(literal: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  assert.ok(m, literal);
  const all = (m[2]! + (m[3] ?? '')).replace(/^0+/, '');
  const digits = all.replace(/0+$/, '');
  if (digits === '') return '0';
  const exponent = BigInt(m[4] ?? '0') - BigInt((m[3] ?? '').length) + BigInt(all.length - digits.length);
  return `${m[1]}${digits}e${exponent}`;
}

describe('hasLossyNumber: the reported values', () => {
  for (const token of ['9007199254740993', '12345678901234567890', '1e400', '-1e400', '1e-400', '0.1000000000000000055511151231257827']) {
    test(`${token} is lossy, bare and inside a message`, () => {
      assert.equal(roundTripsExactly(token), false);
      assert.equal(lossy(token), true);
      assert.equal(lossy(`{"jsonrpc":"2.0","id":7,"result":{"structuredContent":{"media_buy_id":${token}}}}`), true);
      assert.equal(lossy(`[1, 2,\n\t${token} ]`), true);
    });
  }
  test('the shortest forms the gateway would write are lossless', () => {
    for (const token of ['9007199254740992', '12345678901234567000', '0.30000000000000004', '0.1']) {
      assert.equal(lossy(token), false, token);
      assert.equal(roundTripsExactly(token), true, token);
    }
  });
});

describe('hasLossyNumber: ordinary numbers are lossless', () => {
  const ordinary = [
    '0', '-0', '7', '-7', '42', '999999999999999', '-999999999999999', '100000000000000000000',
    '0.5', '-0.5', '12.25', '3.14159', '-273.15', '1.50', '1.0', '-0.0', '0.000001', '123456789012345.6',
    '1e5', '1E5', '1e+5', '1e-5', '-2.5E-3', '6.02214076e23', '1.602176634e-19', '1e308', '1e-307', '0e-999', '0.0e400',
    '1e23', '1.7976931348623157e308', '2.2250738585072014e-308', '5e-324', '1e-320',
    // Other writers' spellings of a shortest form (no `+`, capital E): same value when re-emitted.
    '3.4458332855285927e43', '1.2345678901234568E+16', '1.7976931348623157E308',
  ];
  for (const token of ordinary) {
    test(token, () => {
      assert.equal(lossy(token), false);
      assert.equal(roundTripsExactly(token), true, 'oracle agrees');
    });
  }
  test('a realistic message', () => {
    const msg = JSON.stringify({
      jsonrpc: '2.0',
      id: 12,
      result: { structuredContent: { products: [{ id: 'p1', cpm: 12.5, impressions: 1_000_000, ctr: 0.0042, delta: -3, pi: Math.PI, third: 1 / 3 }], total: 1 } },
    });
    assert.equal(lossy(msg), false);
    assert.equal(lossy(JSON.stringify(JSON.parse(msg), null, 2)), false);
  });
});

describe('hasLossyNumber: edges', () => {
  test('integers must stay integers: 1e21 and above written in full are lossy (emitted as 1e+21)', () => {
    assert.equal(lossy('1000000000000000000000'), true);
    assert.equal(lossy('100000000000000000000000'), true);
    assert.equal(lossy('1'.repeat(22)), true);
  });
  test('overflow and underflow at the edges of the double range', () => {
    assert.equal(lossy('1.79769313486232e308'), true, 'rounds to Infinity');
    assert.equal(lossy('2.4703282292062327e-324'), true, 'underflows to 0');
    assert.equal(lossy('1.23456789012345e-310'), true, 'subnormal: fewer bits than 15 digits need');
    assert.equal(lossy('4.9406564584124654e-324'), true, 'the smallest subnormal, written long: re-emitted as 5e-324');
    assert.equal(lossy('1e' + '9'.repeat(400)), true);
    assert.equal(lossy('1e-' + '9'.repeat(400)), true);
    assert.equal(lossy('0e' + '9'.repeat(400)), false, 'zero stays zero');
  });
  test('leading zeros cannot cancel a huge exponent in the fast path', () => {
    const zeros = '0'.repeat(199_999);
    assert.equal(lossy(`0.${zeros}1e2000400`), true, 'value 1e1800400: Infinity');
    assert.equal(lossy(`0.${zeros}1e200005`), false, 'value 1e5');
    assert.equal(lossy(`1${'0'.repeat(100_000)}.0e-100000`), false, 'value 1');
  });
  test('more than 17 significant digits is lossy, trailing zeros are not significant', () => {
    assert.equal(lossy('1.000000000000000001'), true);
    assert.equal(lossy('1.00000000000000000000000000'), false);
    assert.equal(lossy('0.30000000000000004000'), false);
    assert.equal(lossy(`1${'2'.repeat(100_000)}`), true);
  });
  test('an empty input, literals and structure only', () => {
    assert.equal(lossy(''), false);
    assert.equal(lossy('{"a":true,"b":false,"c":null,"d":[],"e":{}}'), false);
  });
});

describe('hasLossyNumber: numbers inside strings are not looked at', () => {
  const big = '9007199254740993';
  for (const text of [
    `"${big}"`,
    `{"id":"${big}"}`,
    `{"${big}":1}`,
    `{"a":"x\\"${big}"}`,
    `{"a":"\\\\","b":"${big}\\\\"}`,
    `{"a":"é ${big} ü"}`,
    JSON.stringify({ content: [{ type: 'text', text: JSON.stringify({ media_buy_id: 'PLACEHOLDER' }).replace('"PLACEHOLDER"', big) }] }),
  ]) {
    test(text, () => assert.equal(lossy(text), false));
  }
  test('but a number right after a string with escapes is seen', () => {
    assert.equal(lossy(`{"a":"x\\"","b":${big}}`), true);
    assert.equal(lossy(`{"a":"\\\\","b":${big}}`), true);
    assert.equal(lossy(`{"a":"é","b":${big}}`), true);
  });
  test('an unterminated string ends the scan', () => {
    assert.equal(lossy(`{"a":1,"b":"${big}`), false);
  });
});

describe('hasLossyNumber agrees with the exact oracle (seeded)', () => {
  test('random tokens: never says lossless when the value changes', () => {
    let seed = 20250618;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const digits = (k: number, lead: boolean): string => {
      let s = '';
      for (let i = 0; i < k; i++) s += String(i === 0 && lead ? 1 + rnd(9) : rnd(10));
      return s;
    };
    let lossyCount = 0;
    for (let it = 0; it < 20_000; it++) {
      let t = rnd(4) === 0 ? '-' : '';
      t += rnd(5) === 0 ? '0' : digits(1 + rnd(24), true);
      if (rnd(2)) t += '.' + (rnd(3) === 0 ? '0'.repeat(rnd(10)) : '') + digits(1 + rnd(22), false);
      if (rnd(2)) t += (rnd(2) ? 'e' : 'E') + ['', '+', '-'][rnd(3)] + String(rnd(4) === 0 ? 290 + rnd(40) : rnd(30));
      const said = lossy(t);
      const truth = roundTripsExactly(t);
      if (!said) assert.equal(truth, true, `${t} said lossless but becomes ${JSON.stringify(JSON.parse(t))}`);
      else if (/[.eE]/.test(t)) assert.equal(truth, false, `${t} said lossy but round-trips`);
      if (said) lossyCount++;
    }
    assert.ok(lossyCount > 1000, 'the sample has lossy tokens');
  });

  test('random doubles in several notations', () => {
    const view = new DataView(new ArrayBuffer(8));
    let seed = 7;
    const next32 = (): number => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return seed;
    };
    for (let it = 0; it < 5_000; it++) {
      view.setUint32(0, next32());
      view.setUint32(4, next32());
      const x = view.getFloat64(0);
      if (!Number.isFinite(x)) continue;
      for (const t of [String(x), x.toExponential(), x.toExponential().replace('e+', 'e'), x.toExponential(20), x.toExponential(it % 15)]) {
        if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(t)) continue;
        const said = lossy(t);
        if (!said) assert.equal(roundTripsExactly(t), true, t);
        else assert.equal(roundTripsExactly(t), false, `${t} said lossy but round-trips`);
      }
    }
  });
});

// --- normalizeToolResult -------------------------------------------------------------------

const LIMITS = { maxTextBytes: 4_194_304, maxDepth: 64, maxNodes: 100_000 };
const text = (t: string) => ({ type: 'text', text: t });

describe('normalizeToolResult with lossy numbers in text', () => {
  test('a lossy JSON-only text is not lifted', () => {
    const result = { content: [text('{"media_buy_id":9007199254740993}')] };
    const out = normalizeToolResult(result, LIMITS);
    assert.equal(out.changed, false);
    assert.equal(out.result, result);
  });

  test('a lossy first text is not lifted, and no later text is lifted in its place', () => {
    const result = { content: [text('{"media_buy_id":9007199254740993}'), text('{"media_buy_id":1}')] };
    assert.equal(normalizeToolResult(result, LIMITS).changed, false);
  });

  test('lossy numbers inside the text\'s strings do not matter: lifted', () => {
    const result = { content: [text('{"media_buy_id":"9007199254740993","n":1.5}')] };
    const out = normalizeToolResult(result, LIMITS);
    assert.equal(out.action, 'lifted');
    assert.deepEqual((out.result as { structuredContent: unknown }).structuredContent, { media_buy_id: '9007199254740993', n: 1.5 });
  });

  test('when lifting, a later deep-equal but lossy text is kept', () => {
    const result = { content: [text('{"n":0.1}'), text('{"n":0.1000000000000000055511151231257827}')] };
    const out = normalizeToolResult(result, LIMITS);
    assert.equal(out.action, 'lifted');
    assert.equal(out.replacedItems, 1);
    const content = (out.result as { content: { text: string }[] }).content;
    assert.equal(content[1], result.content[1], 'the precise text is the same item');
  });

  test('a lossy copy of structuredContent is not deduped', () => {
    const structured = JSON.parse('{"media_buy_id":9007199254740993}') as Record<string, unknown>;
    const result = { content: [text('{"media_buy_id":9007199254740993}')], structuredContent: structured };
    const out = normalizeToolResult(result, LIMITS);
    assert.equal(out.changed, false);
    assert.equal(out.result, result);
  });

  test('a text that differs from structuredContent only by precision is kept', () => {
    const structured = { n: 12345678901234567000 };
    const precise = '{"n":12345678901234567890}';
    assert.deepEqual(JSON.parse(precise), structured, 'deep-equal once parsed: the trap');
    const result = { content: [text(precise)], structuredContent: structured };
    assert.equal(normalizeToolResult(result, LIMITS).changed, false);
  });

  test('only the lossy copy is kept; an exact copy next to it is still deduped', () => {
    // A message long enough that its summary is shorter than the exact copy (a shorter copy is kept anyway).
    const message = 'A rate of one tenth, as the seller computed it for this buy.';
    const structured = { n: 0.1, message };
    const result = { content: [text(`{"n":0.1000000000000000055511151231257827,"message":"${message}"}`), text(`{"n":0.1,"message":"${message}"}`)], structuredContent: structured };
    const out = normalizeToolResult(result, LIMITS);
    assert.equal(out.action, 'deduped');
    assert.equal(out.replacedItems, 1);
    const content = (out.result as { content: { text: string }[] }).content;
    assert.equal(content[0], result.content[0]);
    assert.match(content[1]!.text, /^Result in structuredContent \(82 bytes\)/);
  });

  test('lossless numbers still dedupe and lift', () => {
    const payload = '{"media_buy_id":9007199254740992,"budget":1500.75,"rate":1e-7}';
    const structured = JSON.parse(payload) as Record<string, unknown>;
    assert.equal(normalizeToolResult({ content: [text(payload)], structuredContent: structured }, LIMITS).action, 'deduped');
    assert.equal(normalizeToolResult({ content: [text(payload)] }, LIMITS).action, 'lifted');
  });
});

// --- rewriteResponse ---------------------------------------------------------------------

function exchange(): Exchange {
  return {
    rpc: { kind: 'request', id: 7, method: 'tools/call', toolName: undefined },
    protocolVersion: '2025-06-18',
    normalize: true,
    limits: { max_response_bytes: 1 << 20, max_json_depth: 64, max_json_nodes: 100_000 },
  } as unknown as Exchange;
}

/** A value that makes a copy longer than its summary (a shorter copy is kept as written: normalize.ts summaryShortens). */
const LONG = 'A message long enough that its summary is shorter than this copy.';

describe('rewriteResponse checks the raw message', () => {
  const lossyRaw = '{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\\"media_buy_id\\":9007199254740993}"}],"structuredContent":{"media_buy_id":9007199254740993}}}';

  test('a lossy number in structuredContent: unchanged, for string and bytes raw', () => {
    for (const raw of [lossyRaw, Buffer.from(lossyRaw)]) {
      const message = JSON.parse(lossyRaw) as unknown;
      const out = rewriteResponse(exchange(), message, raw);
      assert.equal(out.changed, false);
      assert.equal(out.message, message);
      assert.equal(out.action, 'none');
    }
  });

  test('a lossy number elsewhere in the message (_meta) also stops the rewrite', () => {
    const raw = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\\"a\\":1,\\"message\\":\\"${LONG}\\"}"}],"structuredContent":{"a":1,"message":"${LONG}"},"_meta":{"trace":18446744073709551615}}}`;
    assert.equal(rewriteResponse(exchange(), JSON.parse(raw), raw).changed, false);
    // Without the raw text the parsed message cannot tell: the rewrite happens.
    assert.equal(rewriteResponse(exchange(), JSON.parse(raw)).changed, true);
  });

  test('a lossless raw message is rewritten as before', () => {
    const raw = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\\"media_buy_id\\":9007199254740992,\\"message\\":\\"${LONG}\\"}"}],"structuredContent":{"media_buy_id":9007199254740992,"message":"${LONG}"}}}`;
    const out = rewriteResponse(exchange(), JSON.parse(raw), Buffer.from(raw));
    assert.equal(out.changed, true);
    assert.equal(out.action, 'deduped');
  });

  test('raw is only scanned once normalization found a change', () => {
    const untouchable = {
      get length(): number {
        throw new Error('raw scanned');
      },
    } as unknown as Uint8Array;
    const message = { jsonrpc: '2.0', id: 7, result: { content: [text('plain words')], structuredContent: { a: 1 } } };
    assert.equal(rewriteResponse(exchange(), message, untouchable).changed, false);
    const dup = { jsonrpc: '2.0', id: 7, result: { content: [text(JSON.stringify({ a: 1, message: LONG }))], structuredContent: { a: 1, message: LONG } } };
    assert.throws(() => rewriteResponse(exchange(), dup, untouchable), /raw scanned/);
  });
});

/**
 * exactDecimal's reference: the canonical text as it was computed before hostile trial 56 F1's
 * fix, with `BigInt` of the exponent (exact, but quadratic in the exponent's digits). The fix
 * (json-numbers.ts addToInteger: linear string arithmetic) must give the same text for every input.
 */
function exactDecimalByBigInt(text: string): string {
  const negative = text.charCodeAt(0) === 0x2d;
  let e = text.indexOf('e');
  if (e === -1) e = text.indexOf('E');
  const mantissa = text.slice(negative ? 1 : 0, e === -1 ? text.length : e);
  const exponentText = e === -1 ? '0' : text.slice(e + 1);
  const dot = mantissa.indexOf('.');
  const digits = dot === -1 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  if (!/^[+-]?\d+$/.test(exponentText) || !/^\d+$/.test(digits)) return `?${text}`;
  const intDigits = dot === -1 ? mantissa.length : dot;
  let first = 0;
  while (first < digits.length && digits[first] === '0') first++;
  if (first === digits.length) return '0';
  let last = digits.length;
  while (digits[last - 1] === '0') last--;
  return `${negative ? '-' : ''}${digits.slice(first, last)}e${BigInt(exponentText) + BigInt(intDigits - last)}`;
}

describe('exactDecimal: the same canonical text as the BigInt reference (hostile trial 56 F1: linear, not quadratic)', () => {
  /** The seeded generator of the JSON fuzz tests (test/helpers/json-fuzz.ts): the same cases every run. */
  const seeded = rng;
  const random = seeded(56);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const digitRun = (n: number) => Array.from({ length: n }, () => String(int(10))).join('');
  const zeros = (n: number) => '0'.repeat(n);

  /** Exponent magnitudes: small, around the 15/16-digit split and 2^53, huge with carries and borrows in the low 15 digits. */
  function exponentDigits(): string {
    switch (int(9)) {
      case 0: return String(int(400));
      case 1: return String(10 ** 15 + int(200) - 100);
      case 2: return String(2 ** 53 + int(2000) - 1000);
      case 3: return String(10 ** 16 + int(200) - 100);
      case 4: return '9'.repeat(1 + int(40));
      case 5: return `1${zeros(15 + int(30))}`;
      case 6: return `${1 + int(9)}${digitRun(int(30))}${pick(['0', '9'])}`.padEnd(16 + int(20), pick(['0', '9']));
      case 7: return `${1 + int(9)}${digitRun(15 + int(200))}`;
      default: return `${digitRun(int(5))}${'9'.repeat(int(20))}${zeros(int(20))}`;
    }
  }

  function spelling(): string {
    const sign = pick(['', '', '-']);
    const leading = pick(['', '', '0', '00']);
    const intPart = pick(['0', digitRun(1 + int(25)), `${1 + int(9)}${zeros(int(25))}`, '1']);
    const fraction = pick(['', '', `.${digitRun(1 + int(25))}`, `.${zeros(int(10))}${digitRun(1 + int(5))}`, '.0', `.${zeros(1 + int(20))}`]);
    const hasExponent = random() < 0.85;
    const exponent = hasExponent ? `${pick(['e', 'E'])}${pick(['', '+', '-'])}${pick(['', '', zeros(1 + int(20))])}${exponentDigits()}` : '';
    return `${sign}${leading}${intPart}${fraction}${exponent}`;
  }

  test('20,000 seeded spellings: identical texts; sameJsonNumber agrees on pairs', () => {
    const texts: string[] = [];
    for (let k = 0; k < 20_000; k++) {
      const text = spelling();
      texts.push(text);
      assert.equal(exactDecimal(text), exactDecimalByBigInt(text), text);
    }
    for (let k = 0; k + 1 < texts.length; k += 2) {
      const a = texts[k]!;
      const b = texts[k + 1]!;
      assert.equal(sameJsonNumber(a, b), exactDecimalByBigInt(a) === exactDecimalByBigInt(b), `${a} vs ${b}`);
    }
  });

  test('edges: -0, signs and zeros of the exponent, carries and borrows past 15 digits, not-a-number texts', () => {
    const fixed = [
      '0', '-0', '0.0', '-0.000e-5', '0e999999999999999999999', '1', '-1', '1.0', '10', '1e0', '1E+0', '1e-0', '1e00000', '1e-00000',
      '100e-2', '0.001', '1.5e-1', '123.456e3', '1e+21', '-1.2345678901234568E+16', '9007199254740993', '9.007199254740993e15',
      `1e${2 ** 53}`, `1e${2 ** 53 + 1}`, `1e-${2 ** 53 - 1}`, '1e999999999999999', '10e999999999999999', '100e999999999999999',
      '0.1e1000000000000000', '0.01e1000000000000000', '0.1e-999999999999999', '10e-1000000000000000', '1.5e-1000000000000000',
      '0.001e10000000000000000', '1000e9999999999999999', `1e${'9'.repeat(50)}`, `10e${'9'.repeat(50)}`, `1.1e-${'9'.repeat(50)}`,
      `0.000001e${'0'.repeat(30)}1${zeros(30)}`, `1e-${'0'.repeat(30)}1${zeros(30)}`, `-5e+${'0'.repeat(5)}${'9'.repeat(16)}`,
      `12.34e1${zeros(15)}`, `1234000e-1${zeros(15)}`, `-0.5e-1${zeros(14)}`, `5e1${zeros(14)}`,
      '', '-', 'e5', '1e', '1e+', '1e-', '1e+-5', '1.2.3', 'abc', '1e5.5', '1e٣', '١', '.5', '5.', '-.5e3', '+1', '1e 5', 'NaN', 'Infinity',
    ];
    for (const text of fixed) assert.equal(exactDecimal(text), exactDecimalByBigInt(text), JSON.stringify(text));
  });
});
