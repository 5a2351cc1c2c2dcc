/**
 * An unquoted `${NAME}` inside a YAML flow mapping or list (`{...}` or `[...]`), named as such.
 *
 * In flow context `{` and `}` are YAML syntax, so a plain `${SELLER_URL}` there is the text `$`
 * followed by a mapping `{SELLER_URL}`, never a string. Users copying `${VAR}` from the docs into
 * a one-line mapping (`agents: { seller: { url: ${SELLER_URL} } }`,
 * `headers: {Authorization: Bearer ${TOKEN}}`, `allowed_hosts: [${GW_HOST}]`) got only yaml's
 * own messages, with no path and nothing about the variable: `YAML: Unexpected flow-map-start
 * at node end`, `YAML: Unexpected scalar at node end`, `YAML: Unexpected flow-map-end token in
 * YAML stream: "}"` (the last one at the end of the line), or `YAML: Missing , or : between flow
 * sequence items` (a hostile user's trial 12, L4;
 * test/regressions/yaml-flow-map-env-reference-cryptic-error.test.ts).
 *
 * How one is found, from yaml's own parse (no parser of ours):
 * 1. yaml reports an error at the `{` of such a reference: an error whose position (`pos[0]`)
 *    is a `{` right after a `$`, with `{...}` closed on the same line, no space or flow
 *    indicator inside, is a candidate.
 * 2. The text is parsed again, once, with each candidate's braces replaced by parentheses
 *    (`$(NAME)`: same length, so every offset, line and column stays; parentheses are plain
 *    text in YAML).
 * 3. Each candidate must then sit in a plain (unquoted) string inside a flow mapping or list of
 *    that document, which gives the YAML path of its value; else nothing is reported here and
 *    the loader keeps yaml's messages. The masked document's remaining errors are the file's
 *    other syntax errors (the cascade of the references gone), at their own positions. (Every
 *    such `${` gets a yaml error at its `{`, in a cascade too: 6,634 random flow snippets
 *    holding some showed none that only the second parse revealed.)
 *
 * Cost: nothing unless the file has a yaml error at such a `{`; then one more parse of the file
 * (the first document no longer held: load.ts) and one walk of its nodes (aliases not followed).
 * `--check-config` of a 900 KB flow list of 300,000 items ending in `${X}` took 6.1 s before
 * (yaml's parse), 10.5 s with the second parse; a file of a few references, milliseconds.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, Scalar, type Document, type DocumentOptions, type ParseOptions, type SchemaOptions } from 'yaml';
import { parseConfigYaml, type ParsedConfigYaml } from './yaml-document.js';

/** The longest value a message writes back in quotes; a longer one (or one over several lines) is described instead. */
const SHOWN_VALUE_CHARS = 120;

/** `{...}` of a reference, read at a `{` that yaml reported an error at: closed on the line, no space or flow indicator inside. */
const BRACES = /\{[^\s{}[\],]*\}/y;

/** One plain value (or key) of a flow mapping or list holding unquoted `${...}` references. */
export interface UnquotedFlowReference {
  /** 0-based offset of the value's first such `${`. */
  readonly offset: number;
  /** YAML path of the value (of the mapping, for a key; of the list item, for an item). */
  readonly path: ReadonlyArray<string | number>;
  /** The references as written, in order: `['${SELLER_URL}']`; `$${X}` (a literal `${X}`) as `${X}`. */
  readonly references: readonly string[];
  /** The value's text as written (with its references), for the fix. */
  readonly written: string;
}

/** What `unquotedFlowReferences` found: the references, and the file parsed with them masked. */
export interface UnquotedFlowReferences {
  readonly references: readonly UnquotedFlowReference[];
  /** The file's text parsed with the references' braces masked: its `doc.errors` and problems are the file's other ones. */
  readonly parsed: Extract<ParsedConfigYaml, { ok: true }>;
}

/**
 * Where yaml's errors in `doc` (the file `text` as parsed by `parseConfigYaml`) show a
 * candidate: `{` offset -> length of its `{...}`; empty when none. The loader keeps only this
 * (and its problems as yaml put them), not `doc`, while `unquotedFlowReferences` parses again:
 * two documents of a 1 MiB file are never held at once.
 */
export function flowReferenceCandidates(text: string, doc: Document.Parsed): ReadonlyMap<number, number> {
  const braces = new Map<number, number>();
  if (doc.errors.length === 0) return braces;
  for (const error of doc.errors) {
    const at = error.pos[0];
    if (braces.has(at) || text[at] !== '{' || text[at - 1] !== '$') continue;
    BRACES.lastIndex = at;
    const match = BRACES.exec(text);
    if (match !== null) braces.set(at, match[0].length);
  }
  return braces;
}

/**
 * The unquoted `${...}` references inside flow mappings and lists of `text`, from its
 * candidates (`flowReferenceCandidates`), or undefined when there are none or one of them
 * can't be confirmed (the loader then reports yaml's own messages).
 *
 * @param text the file's text.
 * @param braces the candidates.
 * @param options yaml's options, as given to `parseConfigYaml` for `text`.
 */
export function unquotedFlowReferences(
  text: string,
  braces: ReadonlyMap<number, number>,
  options: ParseOptions & DocumentOptions & SchemaOptions,
): UnquotedFlowReferences | undefined {
  if (braces.size === 0) return undefined;
  const parsed = parseConfigYaml(masked(text, braces), new LineCounter(), options);
  if (!parsed.ok) return undefined;
  const references = confirmed(text, parsed.doc, braces);
  return references === undefined ? undefined : { references, parsed };
}

/**
 * The message of `reference`: `` `${SELLER_URL}` inside a flow mapping or list ({...} or [...])
 * must be quoted: write "${SELLER_URL}" (unquoted, YAML reads its braces as a mapping) ``. The
 * fix writes the value as written, in double quotes (JSON's escapes are YAML's), unless
 * `secret` (a value under `headers` or `resume`: never echoed, load.ts `isSecretPath`) or the
 * value is longer than `SHOWN_VALUE_CHARS` or on several lines: then only the first reference
 * is shown, `put the whole value in double quotes, as "...${TOKEN}..."`. A value that is just
 * one reference is always written back (it holds nothing but the reference).
 */
export function unquotedFlowReferenceMessage(reference: UnquotedFlowReference, secret: boolean): string {
  const names = reference.references.map((r) => `\`${r}\``);
  const listed = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
  const alone = reference.references.length === 1 && reference.written === reference.references[0];
  const shown = alone || (!secret && reference.written.length <= SHOWN_VALUE_CHARS && !/[\r\n]/.test(reference.written));
  const fix = shown ? `write ${JSON.stringify(reference.written)}` : `put the whole value in double quotes, as "...${reference.references[0]}..."`;
  return `${listed} inside a flow mapping or list ({...} or [...]) must be quoted: ${fix} (unquoted, YAML reads its braces as a mapping)`;
}

/** `text` with the braces of each candidate replaced by parentheses (same length). */
function masked(text: string, braces: ReadonlyMap<number, number>): string {
  let out = '';
  let from = 0;
  for (const [at, length] of [...braces].sort((a, b) => a[0] - b[0])) {
    out += `${text.slice(from, at)}(${text.slice(at + 1, at + length - 1)})`;
    from = at + length;
  }
  return out + text.slice(from);
}

/**
 * The values holding the candidates, from the masked document: each candidate must be in a
 * plain scalar inside a flow mapping or list, else undefined.
 */
function confirmed(text: string, doc: Document.Parsed, braces: ReadonlyMap<number, number>): UnquotedFlowReference[] | undefined {
  const found: UnquotedFlowReference[] = [];
  let placed = 0;
  // [node, its path, inside a flow collection]; children pushed in reverse, so popped in document order.
  const stack: Array<[unknown, Array<string | number>, boolean]> = [[doc.contents, [], false]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [node, path, inFlow] = top;
    if (isAlias(node)) continue;
    if (isScalar(node)) {
      const reference = inFlow ? referenceIn(text, node, path, braces) : undefined;
      if (reference !== undefined) {
        found.push(reference);
        placed += reference.references.length;
      }
      continue;
    }
    if (isSeq(node)) {
      const flow = inFlow || node.flow === true;
      for (let i = node.items.length - 1; i >= 0; i--) stack.push([node.items[i], [...path, i], flow]);
      continue;
    }
    if (isMap(node)) {
      const flow = inFlow || node.flow === true;
      for (let i = node.items.length - 1; i >= 0; i--) {
        const pair = node.items[i];
        if (!isPair(pair)) continue;
        stack.push([pair.value, [...path, keyText(pair.key, text)], flow]);
        stack.push([pair.key, path, flow]);
      }
    }
  }
  return placed === braces.size ? found : undefined;
}

/**
 * A mapping key as a path segment: a string key as it reads, any other scalar as written
 * (`123`), else `?`. A plain key on one line is read from `text` (the file before masking),
 * so a key that is itself a reference shows as `${X}`, not as its masked `$(X)`.
 */
function keyText(key: unknown, text: string): string {
  if (!isScalar(key)) return '?';
  if (typeof key.value !== 'string') return key.source ?? String(key.value);
  const written = key.type === Scalar.PLAIN && key.range != null ? text.slice(key.range[0], key.range[1]) : undefined;
  return written !== undefined && !/[\r\n]/.test(written) ? written : key.value;
}

/** The reference of `node`, a scalar inside a flow collection at `path`, when it is a plain string holding candidates. */
function referenceIn(
  text: string,
  node: Scalar,
  path: Array<string | number>,
  braces: ReadonlyMap<number, number>,
): UnquotedFlowReference | undefined {
  if (node.type !== Scalar.PLAIN || typeof node.value !== 'string' || node.range === undefined || node.range === null) return undefined;
  const [start, end] = node.range;
  // The scalar's own text only: a search of the file from each scalar would cost (scalars x file).
  const written = text.slice(start, end);
  const references: string[] = [];
  let offset: number | undefined;
  for (let at = written.indexOf('${'); at !== -1; at = written.indexOf('${', at + 2)) {
    const length = braces.get(start + at + 1);
    if (length === undefined) continue;
    offset ??= start + (written[at - 1] === '$' ? at - 1 : at);
    references.push(`$${written.slice(at + 1, at + 1 + length)}`);
  }
  if (offset === undefined) return undefined;
  return { offset, path, references, written };
}
