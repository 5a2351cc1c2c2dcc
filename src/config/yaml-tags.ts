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
 */
import type { Document, YAMLError } from 'yaml';

const CORE_PREFIX = 'tag:yaml.org,2002:';

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
 * at the tagged value's YAML path: `Unresolved tag: !foo`, or a known tag on another kind of
 * node (`!!set [a]`: `BAD_COLLECTION_TYPE`). The tag is read where the warning points (yaml
 * reports it at the tag's text) and resolved with the document's own `%TAG` handles. A
 * warning about a core tag (`!!float 3`: `3` is no YAML float) is not one of these.
 */
export function isRefusedTagWarning(warning: YAMLError, text: string, doc: Document): boolean {
  if (warning.code !== 'TAG_RESOLVE_FAILED' && warning.code !== 'BAD_COLLECTION_TYPE') return false;
  const tag = doc.directives?.tagName(text.slice(warning.pos[0], warning.pos[1]), () => {});
  return typeof tag === 'string' && !isReadTag(tag);
}
