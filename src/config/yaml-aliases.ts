/**
 * Where each alias of a YAML document points, found in one walk of the document.
 *
 * yaml's own `Alias.resolve(doc)` finds "the last instance of the `source` anchor before this
 * node" by walking the whole document on every call, so resolving every alias of a file took
 * time in (aliases x nodes): a valid config of 4,000 tools sharing one `&lim` anchor took 6.3 s
 * to check, a 2.5 KB file with 100 uses of a 400-item anchor 4.9 s (a live reload of it
 * blocked the event loop for 2.4 s), a 54 KB file with 5,000 uses over a minute (a new user's
 * trial, 2026-12-03, Finding 2). This walk visits each node once, in yaml's own `visit` order
 * (pre-order; a pair's key before its value), and keeps the last node seen with each anchor,
 * so each alias gets the node `Alias.resolve` would return, for the whole document at once.
 *
 * Source of the rule: test/regressions/config-yaml-aliases-load-slowly.test.ts.
 */
import { isAlias, isCollection, isPair, isScalar, type Alias, type Document, type Node as YamlNode } from 'yaml';

/**
 * Walks `doc` once and returns, for each alias in it, the node it refers to: the last node
 * before it (in document order) carrying its anchor name. An alias whose anchor is not set
 * before it is absent from the map (unresolved). An alias inside the collection it names maps
 * to that collection (the caller refuses the cycle).
 *
 * Cost: one visit per node of the document, whatever the number of aliases; iterative, so the
 * nesting depth does not touch the call stack.
 *
 * @param doc a composed document (yaml `parseDocument`, or yaml-document.ts `parseConfigYaml`).
 * @returns alias node -> anchored node (a scalar, mapping or list of `doc`).
 */
export function aliasTargets(doc: Document): Map<Alias, YamlNode> {
  const targets = new Map<Alias, YamlNode>();
  const anchored = new Map<string, YamlNode>();
  // Children pushed in reverse, so popped in document order.
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const item = stack.pop();
    if (isPair(item)) {
      stack.push(item.value, item.key);
      continue;
    }
    if (isAlias(item)) {
      const target = anchored.get(item.source);
      if (target !== undefined) targets.set(item, target);
      continue;
    }
    if (!isScalar(item) && !isCollection(item)) continue;
    // Set before the children are visited, as yaml's pre-order walk does.
    if (typeof item.anchor === 'string') anchored.set(item.anchor, item);
    if (isCollection(item)) for (let i = item.items.length - 1; i >= 0; i--) stack.push(item.items[i]);
  }
  return targets;
}
