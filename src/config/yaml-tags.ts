/**
 * The YAML tags a config file may carry: those of YAML 1.2's core schema (YAML 1.2.2 §10.3:
 * `!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!map`, `!!seq`) and the non-specific `!`.
 * A value with any other explicit tag is refused by the loader at its YAML path, the tag named
 * (load.ts TreeBuilder): yaml resolves its "known" tags in any schema (`!!binary` to bytes,
 * `!!timestamp` to a Date, `!!set` to a mapping of nulls, `!!omap` and `!!pairs` to lists of
 * pairs, `!!merge`) and leaves any other (`!foo`, `!!bogus`) unresolved with a warning.
 *
 * Why (a hostile trial): `!!set` was reported as "got a mapping" (`listen: !!set {}` passed
 * as an empty mapping), `!!omap` as "got a list" beside `unsupported YAML node`, and `!foo` as
 * `YAML: Unresolved tag: !foo` with no path, where `!!binary` and `!!timestamp` were named
 * (test/regressions/config-yaml-messages-for-programmers.test.ts).
 *
 * A core tag on a value it does not fit (`!!int 64.0`, `!!bool yes`, `!!int [1]`) is refused
 * at its YAML path too, with the tag and what was written (`coreTagMisfit`), and `!!float`
 * reads every YAML 1.2 float (`readCoreFloats`). yaml left such a value unresolved, with a
 * warning that the loader reported as `YAML: Unresolved tag: tag:yaml.org,2002:int`, no path,
 * stopping validation there; and its `!!float` takes only texts with a `.` or an exponent, so
 * `!!float 64`, a YAML 1.2 float, was one of them (a new user's trial, 2026-12-03, F7:
 * test/regressions/config-yaml-float-tag-unresolved-no-path.test.ts).
 */
import { isMap, isScalar, isSeq, visit, type Document, type Node, type YAMLError } from 'yaml';

const CORE_PREFIX = 'tag:yaml.org,2002:';

const FLOAT_TAG = `${CORE_PREFIX}float`;

const CORE_TAGS: ReadonlySet<string> = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((name) => `${CORE_PREFIX}${name}`));

/** What the values of yaml's known tags outside the core schema are, for "got ...". */
const KNOWN_TAG_VALUES: Readonly<Record<string, string>> = {
  binary: 'binary data',
  timestamp: 'a timestamp',
  set: 'a set',
  omap: 'an ordered mapping',
  pairs: 'a list of pairs',
  merge: 'a merge key',
};

/** The longest tag a problem shows; a longer one is cut, with `…`. */
const SHOWN_TAG_CHARS = 40;

/** The longest tagged text a problem shows; a longer one is cut, with `…`. */
const SHOWN_TEXT_CHARS = 40;

/** What the core scalar tags read, for "..., which is not ...". */
const CORE_SCALAR_VALUES: Readonly<Record<string, string>> = {
  int: 'a YAML integer',
  float: 'a YAML float',
  bool: 'a YAML boolean (true or false)',
  null: 'a YAML null',
  map: 'a mapping',
  seq: 'a list',
};

/**
 * A YAML 1.2 core schema float (YAML 1.2.2 §10.3.2, `tag:yaml.org,2002:float`, its
 * `.inf`/`.nan` forms apart): `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`.
 * An integer's digits are one (`64`, `-7`).
 */
const CORE_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;

/**
 * Whether a node with the resolved tag `tag` (yaml's `node.tag`: undefined when none was
 * written) is read as its value: no tag, the non-specific `!`, or a core schema tag.
 */
export function isReadTag(tag: string | undefined): boolean {
  return tag === undefined || tag === '!' || CORE_TAGS.has(tag);
}

/**
 * What a value with the resolved tag `tag` is, for a problem's "got ...": `binary data
 * (!!binary)`, `a set (!!set)`, `a value tagged !foo`, `a value tagged !<tag:example.com,2000:x>`.
 * A tag is shown as it is written with YAML's default handles (`!!` for the core prefix),
 * cut at 40 characters.
 */
export function describeTagged(tag: string): string {
  const core = tag.startsWith(CORE_PREFIX) ? tag.slice(CORE_PREFIX.length) : undefined;
  const written = core !== undefined ? `!!${core}` : tag.startsWith('!') ? tag : `!<${tag}>`;
  const shown = written.length > SHOWN_TAG_CHARS ? `${written.slice(0, SHOWN_TAG_CHARS)}…` : written;
  const known = core === undefined ? undefined : KNOWN_TAG_VALUES[core];
  return known !== undefined ? `${known} (${shown})` : `a value tagged ${shown}`;
}

/**
 * Whether `warning` (one of `doc.warnings`) is yaml's about a tag the loader refuses itself,
 * at the tagged value's YAML path: `Unresolved tag: !foo`, a known tag on another kind of
 * node (`!!set [a]`: `BAD_COLLECTION_TYPE`), or a core tag on a value it does not fit
 * (`Unresolved tag: tag:yaml.org,2002:int` for `!!int 64.0`: `coreTagMisfit`). The tag is
 * read where the warning points (yaml reports it at the tag's text) and resolved with the
 * document's own `%TAG` handles; a tag that does not resolve (an undeclared handle) is yaml's
 * to report.
 */
export function isRefusedTagWarning(warning: YAMLError, text: string, doc: Document): boolean {
  if (warning.code !== 'TAG_RESOLVE_FAILED' && warning.code !== 'BAD_COLLECTION_TYPE') return false;
  const tag = doc.directives?.tagName(text.slice(warning.pos[0], warning.pos[1]), () => {});
  return typeof tag === 'string' && tag !== '!';
}

/**
 * Why `node`, with a core tag, is not what its tag says, as a problem's "got ...": or
 * undefined when it is (or has no core tag). yaml leaves such a node as it found it (a
 * string, or an untagged mapping or list), so the check is on what it holds:
 *
 * - a scalar: `!!int 64.0, which is not a YAML integer`, `!!bool yes, which is not a YAML
 *   boolean (true or false)`, `!!map x, which is not a mapping`; the text as written (quoted
 *   when it was, cut at 40 characters), or `a value tagged !!int, which is not ...` when
 *   `secret` (a header value: values there are never echoed);
 * - a mapping or list with another tag: `a list tagged !!int`, `a mapping tagged !!seq`.
 *
 * `!!str` fits every scalar; `!!float` every YAML 1.2 float once `readCoreFloats` has run.
 */
export function coreTagMisfit(node: Node, secret: boolean): string | undefined {
  const tag = node.tag;
  if (tag === undefined || !CORE_TAGS.has(tag)) return undefined; // no tag, or not a core tag (isReadTag)
  const name = tag.slice(CORE_PREFIX.length);
  if (!isScalar(node)) {
    const kind = isMap(node) ? 'a mapping' : isSeq(node) ? 'a list' : 'a value';
    if ((name === 'map' && isMap(node)) || (name === 'seq' && isSeq(node))) return undefined;
    return `${kind} tagged !!${name}`;
  }
  const value = node.value;
  const fits =
    name === 'str' ||
    ((name === 'int' || name === 'float') && typeof value === 'number') ||
    (name === 'bool' && typeof value === 'boolean') ||
    (name === 'null' && value === null);
  if (fits) return undefined;
  const expected = CORE_SCALAR_VALUES[name] ?? 'what its tag says';
  if (secret) return `a value tagged !!${name}, which is not ${expected}`;
  const source = typeof node.source === 'string' ? node.source : String(value);
  const cut = source.length > SHOWN_TEXT_CHARS ? `${source.slice(0, SHOWN_TEXT_CHARS)}…` : source;
  const plain = node.type === undefined || node.type === 'PLAIN';
  if (plain && source === '') return `!!${name} with an empty value, which is not ${expected}`;
  return `!!${name} ${plain ? cut : JSON.stringify(cut)}, which is not ${expected}`;
}

/**
 * Reads each `!!float` scalar yaml left unresolved whose text is a YAML 1.2 float, in place:
 * `!!float 64` (and `!!float "64"`: a tag decides, not quotes) becomes the number 64, which an
 * integer setting takes as any float with an integral value (docs/configuration.md). yaml's
 * core `!!float` only takes a text with a `.` or an exponent; YAML 1.2.2 §10.3.2 takes any
 * decimal. Its warning is dropped with the others (`isRefusedTagWarning`).
 *
 * Cost: one walk of the document's nodes (aliases are not followed), a regular expression
 * match for each `!!float` scalar it left a string.
 */
export function readCoreFloats(doc: Document): void {
  visit(doc, {
    Scalar(_key, node) {
      if (node.tag !== FLOAT_TAG || typeof node.value !== 'string' || typeof node.source !== 'string') return;
      if (CORE_FLOAT.test(node.source)) node.value = Number(node.source);
    },
  });
}

