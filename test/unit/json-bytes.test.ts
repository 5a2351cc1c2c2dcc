/**
 * The shared walk of a JSON text's bytes (src/mcp/json-bytes.ts skipJsonSpace, jsonValueEnd,
 * firstJsonMember / jsonMemberValue / nextJsonMember), which the peek's wide objects (request/message-members.ts), the repeated-name
 * check (request/repeated-request-names.ts) and the tool result's ranges
 * (mcp/tool-result-ranges.ts) read with (before, a copy each: a re-read after trial 54).
 *
 * Checked: whitespace (JSON's four bytes, and bytes that are not JSON whitespace), strings with
 * escapes (`\"`, runs of backslashes, brackets inside), nesting deeper than any call stack, the
 * end of the buffer, and what each answers on invalid input (never a throw or a loop, as the
 * docstrings say); then a differential check against `JSON.parse` on 400 seeded random objects:
 * every member the walk visits, its key and value parsed from the ranges it gives, rebuilt as
 * `JSON.parse` keeps them (the last of repeated keys), is the parsed object; nested objects too.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closingQuote, firstJsonMember, jsonMemberValue, jsonValueEnd, nextJsonMember, skipJsonSpace } from '../../src/mcp/json-bytes.js';
import { rng } from '../helpers/json-fuzz.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

/** A member as the walk gives it: its key [keyStart, keyEnd) and its value's first byte. */
interface Member {
  readonly keyStart: number;
  readonly keyEnd: number;
  readonly valueStart: number;
}

/**
 * The walk over the object at `open` in `bytes`, as its docstring's loop takes it: `read`
 * gives the offset past each member's value (jsonValueEnd unless the caller reads it itself).
 * Returns where it ended: ~key of the last step, or bytes.length at an unterminated key.
 */
function walk(bytes: Buffer, open: number, read: (m: Member) => number = (m) => jsonValueEnd(bytes, m.valueStart)): number {
  let key = firstJsonMember(bytes, open);
  for (let n = 0; key >= 0; n++) {
    assert.ok(n < 10_000, 'the walk loops');
    const close = closingQuote(bytes, key);
    if (close < 0) return bytes.length;
    key = nextJsonMember(bytes, read({ keyStart: key, keyEnd: close + 1, valueStart: jsonMemberValue(bytes, close + 1) }));
  }
  return ~key;
}

/** Each member the walk visits as [key text, value text], and its end. */
function walkOf(text: string, open = text.indexOf('{')): { members: [string, string][]; end: number } {
  const bytes = b(text);
  const members: [string, string][] = [];
  const end = walk(bytes, open, (m) => {
    const valueEnd = jsonValueEnd(bytes, m.valueStart);
    members.push([bytes.toString('utf8', m.keyStart, m.keyEnd), bytes.toString('utf8', m.valueStart, valueEnd)]);
    return valueEnd;
  });
  return { members, end };
}

describe('skipJsonSpace', () => {
  test('skips space, tab, LF and CR in any mix, and nothing else', () => {
    assert.equal(skipJsonSpace(b(' \t\r\n x'), 0), 5);
    assert.equal(skipJsonSpace(b('x'), 0), 0);
    for (const other of ['\f', '\v', '\u00a0', '\u2028', '\u0000', '\u0085']) assert.equal(skipJsonSpace(b(` ${other} `), 0), 1, JSON.stringify(other));
  });
  test('at the end of the buffer: its length; past it: the offset given', () => {
    assert.equal(skipJsonSpace(b('x  \n'), 1), 4);
    assert.equal(skipJsonSpace(b(''), 0), 0);
    assert.equal(skipJsonSpace(b('ab'), 7), 7);
  });
});

describe('jsonValueEnd', () => {
  const end = (text: string, start = 0): number => jsonValueEnd(b(text), start);
  test('strings: past the closing quote, escapes of every kind read', () => {
    assert.equal(end('"abc",1'), 5);
    assert.equal(end('"a\\"b",1'), 6);
    assert.equal(end('"a\\\\",1'), 5);
    assert.equal(end('"a\\\\\\"b\\\\",1'), 10);
    assert.equal(end('"\\u0022"x'), 8);
    assert.equal(end('"}]{[",1'), 6);
    assert.equal(end('"caf\u00e9 \ud83d\ude00"'), b('"caf\u00e9 \ud83d\ude00"').length);
  });
  test('objects and arrays: past the bracket that closes them, brackets in strings not counted', () => {
    assert.equal(end('{"a":[1,{"b":"}"}],"c":"]"} ,'), 27);
    assert.equal(end('[ ] ,'), 3);
    assert.equal(end('{}'), 2);
    assert.equal(end('x[1,[2]],3', 1), 8);
  });
  test('nesting deeper than a call stack, without recursion', () => {
    const depth = 200_000;
    const text = `${'['.repeat(depth)}"]"${']'.repeat(depth)},1`;
    assert.equal(end(text), text.length - 2);
  });
  test('numbers and literals: up to whitespace, a control byte, `,`, `}`, `]` or the end', () => {
    for (const [text, at] of [
      ['-12.5e+3,', 8],
      ['true}', 4],
      ['null]', 4],
      ['false ', 5],
      ['1\t', 1],
      ['1\n', 1],
      ['1\r', 1],
      ['1\u0001', 1],
      ['123', 3],
    ] as const) {
      assert.equal(end(text), at, JSON.stringify(text));
    }
  });
  test('invalid input: never a throw or a loop, an answer within [start, length]', () => {
    for (const [text, at, start] of [
      ['"abc', 4, 0], // an unterminated string
      ['"ab\\"', 5, 0], // its last quote escaped
      ['{"a":"b', 7, 0], // an unterminated string inside an object
      ['[1,[2', 5, 0], // unclosed brackets
      ['[1}', 3, 0], // brackets matched by count, not kind
      ['', 0, 0], // at the end
      ['1', 5, 5], // past the end
      ['}', 0, 0], // a closing bracket: a scalar of no bytes
    ] as const) {
      assert.equal(end(text, start), at, JSON.stringify(text));
    }
  });
});

describe('firstJsonMember, jsonMemberValue, nextJsonMember', () => {
  test('members in the order written, repeats and escaped keys each visited; `end` at the closing brace', () => {
    const text = '{ "a" : 1 ,\n"a":"x\\"}",\t"\\u0061":{"b":[1,"]"]}\r}';
    assert.deepEqual(walkOf(text), {
      members: [
        ['"a"', '1'],
        ['"a"', '"x\\"}"'],
        ['"\\u0061"', '{"b":[1,"]"]}'],
      ],
      end: text.length - 1,
    });
  });
  test('an empty object, with and without whitespace', () => {
    assert.deepEqual(walkOf('{}'), { members: [], end: 1 });
    assert.deepEqual(walkOf('{ \n\t\r }'), { members: [], end: 6 });
  });
  test('an object inside a text: `open` is its brace, `end` its own closing brace', () => {
    const text = '[1,{"k":{"n":2}},3]';
    assert.deepEqual(walkOf(text, 3), { members: [['"k"', '{"n":2}']], end: 15 });
    assert.deepEqual(walkOf(text, 8), { members: [['"n"', '2']], end: 14 });
  });
  test("the caller's own end of a value: the walk goes on from there", () => {
    const bytes = b('{"a":[1,2],"b":3}');
    const seen: number[][] = [];
    const end = walk(bytes, 0, (m) => {
      seen.push([m.keyStart, m.keyEnd, m.valueStart]);
      return m.keyStart === 1 ? 10 : jsonValueEnd(bytes, m.valueStart);
    });
    assert.deepEqual(seen, [
      [1, 4, 5],
      [11, 14, 15],
    ]);
    assert.equal(end, 16);
  });
  test('invalid input: the walk ends where it cannot go on, never a throw or a loop', () => {
    for (const [text, members, end] of [
      ['{"a":1,}', [['"a"', '1']], 7], // a trailing comma: ends at the member that does not start with `"`
      ['{"a":1', [['"a"', '1']], 6], // no closing brace: the end
      ['{"a":1 "b":2}', [['"a"', '1']], 7], // no comma: at the byte there
      ['{"a', [], 3], // an unterminated key
      ['{a:1}', [], 1], // a key that is no string
      ['{', [], 1], // nothing after the brace
      ['{"a":"b', [['"a"', '"b']], 7], // an unterminated string value
      ['{"a" 1,"b":2}', [['"a"', ''], ['"b"', '2']], 12], // no colon: the value read one byte past where it should be
    ] as const) {
      assert.deepEqual(walkOf(text), { members, end }, text);
    }
  });
});

// ---------------------------------------------------------------------------------------
// Differential: the walk against JSON.parse on seeded random objects

const CASES = 400;
const KEYS = ['a', 'id', 'text', '', '__proto__', 'caf\u00e9', '\ud83d\ude00', 'q"uote', 'back\\slash', '}', '0', '10'];
const WS = ['', '', '', ' ', '\t', '\n', '\r', '\r\n  '];

function randomObject(seed: number): string {
  const r = rng(seed);
  const int = (n: number): number => Math.floor(r() * n);
  const pick = <T>(a: readonly T[]): T => a[int(a.length)]!;
  const ws = (): string => pick(WS);
  /** A JSON string of `s`, characters written plain or as escapes at random. */
  const string = (s: string): string => {
    let out = '"';
    for (const ch of s) {
      const cp = ch.codePointAt(0)!;
      if (ch === '"' || ch === '\\') out += r() < 0.5 ? `\\${ch}` : `\\u00${cp.toString(16)}`;
      else if (cp < 0x20) out += JSON.stringify(ch).slice(1, -1);
      else if (r() < 0.1 && ch.length === 1) out += `\\u${cp.toString(16).padStart(4, '0')}`;
      else if (ch === '/' && r() < 0.5) out += '\\/';
      else out += ch;
    }
    return `${out}"`;
  };
  const value = (depth: number): string => {
    const kind = depth > 4 ? int(3) : int(6);
    if (kind === 0) return pick(['0', '-0', '12.5e+3', '-1E-2', '123456789012345678901', 'true', 'false', 'null']);
    if (kind <= 2) return string(pick(['', 'x', 'a"b\\c', '\\', '\\\\', '"', '}]{[', 'line\nbreak\ttab', '\u00e9\u4e2d\ud83d\ude00', '/path/']) + pick(['', '\\', '"']));
    if (kind === 3) return `[${ws()}${Array.from({ length: int(4) }, () => value(depth + 1)).join(`${ws()},${ws()}`)}${ws()}]`;
    return object(depth + 1);
  };
  const object = (depth: number): string =>
    `{${ws()}${Array.from({ length: int(depth === 0 ? 12 : 5) }, () => `${string(pick(KEYS))}${ws()}:${ws()}${value(depth)}`).join(`${ws()},${ws()}`)}${ws()}}`;
  return `${ws()}${object(0)}${ws()}`;
}

/** Checks the walk of the object at `open` in `bytes` against `JSON.parse` of it, and of each object value inside it (`checked` counts the objects). */
function checkObject(bytes: Buffer, open: number, label: string, checked: { objects: number; members: number }): void {
  const close = jsonValueEnd(bytes, open);
  const expected = JSON.parse(bytes.toString('utf8', open, close)) as unknown;
  const rebuilt: Record<string, unknown> = {};
  const end = walk(bytes, open, (m) => {
    checked.members++;
    const key = JSON.parse(bytes.toString('utf8', m.keyStart, m.keyEnd)) as unknown;
    assert.equal(typeof key, 'string', `${label}: a key's range`);
    // The value's range holds exactly one JSON value, no whitespace around it.
    const valueEnd = jsonValueEnd(bytes, m.valueStart);
    assert.ok(valueEnd > m.valueStart && bytes[valueEnd - 1]! > 0x20 && bytes[m.valueStart]! > 0x20, `${label}: a value's range`);
    const value = JSON.parse(bytes.toString('utf8', m.valueStart, valueEnd)) as unknown;
    // Own data properties, `__proto__` too, the last of repeated keys winning (JSON.parse).
    Object.defineProperty(rebuilt, key as string, { value, enumerable: true, writable: true, configurable: true });
    if (bytes[m.valueStart] === 0x7b) checkObject(bytes, m.valueStart, label, checked);
    return valueEnd;
  });
  assert.equal(end, close - 1, `${label}: end`);
  assert.deepStrictEqual(rebuilt, expected, label);
  checked.objects++;
}

test(`differential: the walk against JSON.parse on ${CASES} seeded random objects (escapes, whitespace, repeated and escaped keys, nesting)`, () => {
  const checked = { objects: 0, members: 0 };
  for (let seed = 1; seed <= CASES; seed++) {
    const text = randomObject(seed);
    const bytes = b(text);
    const open = skipJsonSpace(bytes, 0);
    assert.equal(bytes[open], 0x7b);
    // The whole text is one value: the walk's end of it is where only whitespace follows.
    assert.equal(skipJsonSpace(bytes, jsonValueEnd(bytes, open)), bytes.length, `seed ${seed}`);
    checkObject(bytes, open, `seed ${seed}: ${text}`, checked);
  }
  // The cases are not trivial: nested objects and many members were walked.
  assert.ok(checked.objects > CASES * 2 && checked.members > CASES * 5, JSON.stringify(checked));
});
