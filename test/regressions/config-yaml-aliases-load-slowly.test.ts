/**
 * Regression: config loading slowed down with the square of the number of YAML alias uses.
 *
 * Reported failure (a new user's trial, 2026-12-03, Finding 2): `--check-config` of a valid
 * config with N tools sharing one limits anchor (`t0: &lim {...}`, then `tN: *lim`) took
 * 0.76 s for 1,000 tools, 1.95 s for 2,000, 6.3 s for 4,000 (71 KB); a 2.5 KB file using one
 * 400-item anchor 100 times took 4.9 s, and a live reload of it blocked the event loop
 * (`/healthz` answered after 2.4 s); a 9.5 KB file was refused "more than 200000 values" only
 * after 28 s; a 54 KB file (5,000 uses, 50,000 values, under the cap) ran over a minute. The
 * `yaml` package itself parses and converts that file in ~0.5 s: the loader resolved each
 * alias with yaml's `Alias.resolve(doc)`, which walks the whole document on every call.
 * Now each alias's anchor is found in one walk of the document (src/config/yaml-aliases.ts).
 *
 * Input: configs like the trial's (thousands of alias uses, within and over the 200,000-value
 * cap), loaded with the real loader (`parseConfig`).
 * Expected: the same config, or the same problems, as before, at the same paths and positions;
 * and no whole-document walk per alias: `Alias.resolve`, counted through yaml's own class,
 * is called at most once (it was called once per alias use: 3,999 walks of a 4,000-tool file). No
 * timing is asserted (the project's rule); the measured times are in the commit message.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { Alias, isAlias, parseDocument, visit } from 'yaml';
import { ConfigError, parseConfig, type ConfigProblem } from '../../src/config/load.js';

const AGENT = 'agents:\n  a:\n    url: http://127.0.0.1:1/mcp\n';

/** The trial's valid config: `tools` t0..t{n-1}, t0 anchoring 4 limits that the others alias (t9e-tools-alias.sh). */
const sharedLimits = (n: number): string =>
  `${AGENT}    tools:\n      t0: &lim { max_response_bytes: 1000000, max_json_depth: 20, max_json_nodes: 5000, response_deadline_ms: 5000 }\n${Array.from(
    { length: n - 1 },
    (_, i) => `      t${i + 1}: *lim\n`,
  ).join('')}`;

/** The trial's fan-in (t9b-laughs-scale.sh): `l1` lists `*l0` w times; `r0`..`r{r-1}` each alias `l1` (about w*r values). */
const fanIn = (w: number, r: number): string =>
  `${['l0: &l0 "x"', `l1: &l1 [${Array(w).fill('*l0').join(',')}]`, ...Array.from({ length: r }, (_, i) => `r${i}: *l1`)].join('\n')}\n${AGENT}`;

function problemsOf(text: string): ConfigProblem[] {
  try {
    parseConfig(text);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
  assert.fail('expected a ConfigError');
}

/**
 * Calls of yaml's `Alias.prototype.resolve` (each walks the whole document when given no
 * context). One walk is linear work; a second call means one walk per alias, and throws at
 * once (so the case fails fast instead of running for minutes, as it did before the fix).
 */
let resolveCalls = 0;
const originalResolve = Alias.prototype.resolve;

describe('config YAML aliases: one walk of the document, not one per alias', () => {
  beforeEach(() => {
    resolveCalls = 0;
    Alias.prototype.resolve = function counted(this: Alias, ...args: Parameters<Alias['resolve']>) {
      if (++resolveCalls > 1) throw new Error('yaml Alias.resolve called again: one whole-document walk per alias');
      return originalResolve.apply(this, args);
    };
  });
  afterEach(() => {
    Alias.prototype.resolve = originalResolve;
  });

  test('a valid config of 4,000 tools sharing one limits anchor loads, each tool with the 4 limits', () => {
    const config = parseConfig(sharedLimits(4000));
    const tools = config.agents.get('a')?.tools ?? {};
    assert.equal(Object.keys(tools).length, 4000);
    const limits = { max_response_bytes: 1000000, max_json_depth: 20, max_json_nodes: 5000, response_deadline_ms: 5000 };
    assert.deepEqual({ ...tools['t0'] }, limits);
    assert.deepEqual({ ...tools['t3999'] }, limits);
    assert.ok(resolveCalls <= 1, 'whole-document walks to resolve aliases (was one per alias: 3,999)');
  });

  test('the 2.5 KB reload file (one 400-item anchor used 100 times): its unknown keys, no walk per alias', () => {
    const problems = problemsOf(fanIn(400, 100));
    assert.deepEqual(
      problems.map((p) => `${p.path} ${p.line}:${p.column}`),
      ['l0 1:1', 'l1 2:1', ...Array.from({ length: 100 }, (_, i) => `r${i} ${i + 3}:1`)],
    );
    assert.ok(problems.every((p) => p.message.startsWith(`unknown key \`${p.path}\``)), problems[0]?.message);
    assert.ok(resolveCalls <= 1, 'whole-document walks to resolve aliases (was one per alias: 500)');
  });

  test('5,000 uses of a 10-item anchor (50,000 values, under the cap): every unknown key, no walk per alias', () => {
    const problems = problemsOf(fanIn(10, 5000));
    assert.equal(problems.length, 5002);
    assert.ok(problems.every((p) => p.message.startsWith(`unknown key \`${p.path}\``)));
    assert.ok(resolveCalls <= 1, 'whole-document walks to resolve aliases (was one per alias: 5,010)');
  });

  test('800 uses of a 400-item anchor are refused at the 200,001st value (the anchored "x" it reached), with the same message and place', () => {
    assert.deepEqual(problemsOf(fanIn(400, 800)), [
      { path: 'r248[149]', line: 1, column: 9, message: 'the document expands to more than 200000 values (aliases?)' },
    ]);
    assert.ok(resolveCalls <= 1, 'whole-document walks to resolve aliases');
  });

  test('20,000 uses of a 10-item anchor (229 KB) are refused at the 200,001st value', () => {
    assert.deepEqual(problemsOf(fanIn(10, 20000)), [
      { path: 'r9089[8]', line: 1, column: 9, message: 'the document expands to more than 200000 values (aliases?)' },
    ]);
    assert.ok(resolveCalls <= 1, 'whole-document walks to resolve aliases');
  });

  test('each alias points where yaml resolves it: redefined anchors, anchored keys, an alias as a key, cycles, unset', async () => {
    const { aliasTargets } = await import('../../src/config/yaml-aliases.js');
    const text = ['a: &x 1', 'b: *x', 'c: &x [ *x, &y { k: *x, *y : 2 } ]', 'd: *x', '&x e: *x', '? &z [*x, *z]', ': *z', 'f: *nope', ''].join('\n');
    const doc = parseDocument(text, { uniqueKeys: false });
    assert.deepEqual(doc.errors, []);
    const targets = aliasTargets(doc);
    const aliases: Alias[] = [];
    visit(doc, { Alias: (_key, node) => void aliases.push(node) });
    assert.equal(aliases.length, 10);
    for (const alias of aliases) {
      assert.ok(isAlias(alias));
      assert.equal(targets.get(alias), originalResolve.call(alias, doc), `*${alias.source} at ${alias.range?.[0]}`);
    }
    assert.equal(targets.has(aliases[9] as Alias), false, '*nope is unresolved');
  });
});
