/**
 * A config file's text -> its one YAML document, through yaml's own layers (`Parser` -> CST
 * tokens -> `Composer`: https://eemeli.org/yaml/#parsing-yaml, the steps of yaml's
 * `parseDocument`), with two checks written for an operator, not a programmer:
 *
 * - Nesting: a mapping or list more than `MAX_CONFIG_NESTING` levels deep is refused on the
 *   CST, before the composer runs. The composer is recursive: a file nested ~1,000 deep ran
 *   out of stack, reported as `YAML: Maximum call stack size exceeded` at a column that
 *   varied from run to run (a new user's trial, 2026-12-03, F10). yaml's CST parser keeps its
 *   own stack (no recursion), and this walk does too.
 * - One document: a second document (after `---` or `...`) is a problem at the place it
 *   starts, not yaml's advice to call `YAML.parseAllDocuments()` (same trial).
 *
 * Source of the rule for both: test/regressions/config-yaml-messages-for-programmers.test.ts.
 *
 * And the document is read as YAML 1.2 (core schema), whatever it asks for:
 *
 * - A `%YAML` directive naming another version is a problem at its line, and the document is
 *   composed as if it were not there. yaml follows the directive: under `%YAML 1.1` it read
 *   `020` as 16, `1:30` as 90, `4_194_304` and `0b101` as numbers and `on` as true, and
 *   `--check-config` and live reload took them (a new user's trial, 2026-12-03, F3:
 *   test/regressions/config-yaml-1-1-directive-changes-numbers.test.ts). The document so read
 *   is sound, so such a problem does not stop validation: it is returned apart
 *   (`versionProblems`), and the loader lists it with the rest of the file's problems
 *   (a carried defect: the refusal hid them;
 *   test/regressions/config-yaml-directive-hides-other-problems.test.ts).
 * - `!!float` reads every YAML 1.2 float (yaml-tags.ts `readCoreFloats`: `!!float 64` is 64).
 */
import { Composer, CST, Parser, type Document, type DocumentOptions, type LineCounter, type ParseOptions, type SchemaOptions } from 'yaml';
import { readCoreFloats } from './yaml-tags.js';

/**
 * Deepest nesting of mappings and lists a config file may have: 64 levels (the top-level
 * mapping is level 1). The gateway's own settings go 5 deep (`agents.<name>.tools.<tool>.<key>`),
 * so the bound only ever stops a mistake or a hostile file, and keeps the composer (and the
 * loader's tree builder, which counts aliases in: load.ts) far from the stack's end.
 */
export const MAX_CONFIG_NESTING = 64;

/** The message of a mapping or list nested deeper than `MAX_CONFIG_NESTING`. */
export const TOO_DEEP = `the config is nested too deeply: more than ${MAX_CONFIG_NESTING} levels of mappings and lists`;

/** The one YAML version a config file is read as (docs/configuration.md). */
export const CONFIG_YAML_VERSION = '1.2';

/** The longest version a problem shows from a `%YAML` directive; a longer one is cut, with `…`. */
const SHOWN_VERSION_CHARS = 20;

/**
 * The message of a `%YAML` directive naming `version` (as written), not 1.2. What YAML 1.1
 * would change is named, since that is the version such a directive asks for in practice.
 */
export function otherYamlVersionMessage(version: string): string {
  const shown = version.length > SHOWN_VERSION_CHARS ? `${version.slice(0, SHOWN_VERSION_CHARS)}…` : version;
  const differences = version === '1.1' ? ' (where 020 is 16, 1:30 is 90 and on is true)' : '';
  return `the config is read as YAML ${CONFIG_YAML_VERSION} (core schema), not as the YAML ${shown} this directive asks for${differences}: remove it, or write %YAML ${CONFIG_YAML_VERSION}`;
}

/** A problem found here: `offset` is the 0-based character offset it is reported at. */
export interface YamlTextProblem {
  offset: number;
  message: string;
}

export type ParsedConfigYaml =
  | {
      readonly ok: true;
      readonly doc: Document.Parsed;
      /** Problems that stop validation (a second document): the tree past them is not the file's. */
      readonly problems: readonly YamlTextProblem[];
      /** The `%YAML` directives of another version: `doc` is read as YAML 1.2 all the same, so validation goes on. */
      readonly versionProblems: readonly YamlTextProblem[];
    }
  | { readonly ok: false; readonly problems: readonly YamlTextProblem[] };

/**
 * Parses `text` as the one YAML document of a config file.
 *
 * @param text the file's text.
 * @param lines where yaml records line starts (for line and column of every problem).
 * @param options yaml's document options, as for `parseDocument`.
 * @returns `ok: false` with one problem when the text nests deeper than `MAX_CONFIG_NESTING`
 *   (at the first such mapping or list; nothing is composed); else the first document, read
 *   as YAML 1.2, with a problem (`versionProblems`) at each `%YAML` directive of another
 *   version before it and one (`problems`) at the start of a second document when there is
 *   one (yaml's own syntax errors stay in `doc.errors` and `doc.warnings`).
 */
export function parseConfigYaml(text: string, lines: LineCounter, options: ParseOptions & DocumentOptions & SchemaOptions): ParsedConfigYaml {
  const parsed = Array.from(new Parser(lines.addNewLine).parse(text));
  const deep = firstTooDeep(parsed);
  if (deep !== undefined) return { ok: false, problems: [{ offset: deep, message: TOO_DEEP }] };
  const problems: YamlTextProblem[] = [];
  const versionProblems: YamlTextProblem[] = [];
  const tokens = withoutOtherYamlVersions(parsed, versionProblems);
  let doc: Document.Parsed | undefined;
  // As parseDocument: the composer always yields at least one document (forceDoc), and stops
  // being read at the second.
  for (const next of new Composer(options).compose(tokens, true, text.length)) {
    if (doc === undefined) {
      doc = next;
      continue;
    }
    problems.push({ offset: next.range[0], message: 'the config file must hold one YAML document, and a second one starts here' });
    break;
  }
  readCoreFloats(doc as Document.Parsed);
  return { ok: true, doc: doc as Document.Parsed, problems, versionProblems };
}

/**
 * `tokens` without the `%YAML` directives of the first document that name a version other
 * than 1.2, each reported in `problems` at its offset: the composer then reads the document
 * as YAML 1.2. A `%YAML` directive without exactly one version is left to yaml (its own error).
 * Directives after the first document are left too: a second document is refused anyway.
 */
function withoutOtherYamlVersions(tokens: readonly CST.Token[], problems: YamlTextProblem[]): CST.Token[] {
  const kept: CST.Token[] = [];
  let inPrelude = true;
  for (const token of tokens) {
    if (token.type === 'document') inPrelude = false;
    if (inPrelude && token.type === 'directive') {
      const [name, version, ...rest] = token.source.trim().split(/[ \t]+/);
      if (name === '%YAML' && version !== undefined && rest.length === 0 && version !== CONFIG_YAML_VERSION) {
        problems.push({ offset: token.offset, message: otherYamlVersionMessage(version) });
        continue;
      }
    }
    kept.push(token);
  }
  return kept;
}

/**
 * The offset of the first mapping or list (in text order) more than `MAX_CONFIG_NESTING`
 * levels deep in the CST, or undefined. Iterative: the CST of a 1 MiB file may nest ~500,000 deep.
 */
function firstTooDeep(tokens: readonly CST.Token[]): number | undefined {
  // [token, its level if it is a collection]; children pushed in reverse, so popped in text order.
  const stack: Array<[CST.Token, number]> = [];
  for (let i = tokens.length - 1; i >= 0; i--) stack.push([tokens[i] as CST.Token, 1]);
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [token, level] = top;
    if (token.type === 'document') {
      if (token.value !== undefined) stack.push([token.value, level]);
      continue;
    }
    if (!CST.isCollection(token)) continue;
    if (level > MAX_CONFIG_NESTING) return token.offset;
    for (let i = token.items.length - 1; i >= 0; i--) {
      const item = token.items[i] as CST.CollectionItem;
      if (item.value !== undefined) stack.push([item.value, level + 1]);
      if (item.key !== undefined && item.key !== null) stack.push([item.key, level + 1]);
    }
  }
  return undefined;
}
