/**
 * Regression (a hostile user's trial 12, L4, Low): an unquoted `${VAR}` inside a YAML flow
 * mapping or list gave yaml's own flow-collection messages, with no YAML path and nothing about
 * the variable. In flow context `{` and `}` are YAML syntax, so `${SELLER_URL}` there is the
 * text `$` followed by a mapping, never a string; users copy `${VAR}` from the docs into a
 * one-line mapping. Before, `agents: { seller: { url: ${SELLER_URL} } }` gave:
 * ```
 * FILE: 3 problems
 *   line 1, column 27: YAML: Unexpected flow-map-start at node end
 *   line 1, column 28: YAML: Unexpected scalar at node end
 *   line 1, column 42: YAML: Unexpected flow-map-end token in YAML stream: "}"
 * ```
 * `headers: {Authorization: Bearer ${TOKEN}}` the same three at line 4, and `url: [${X}]`
 * `line 3, column 11: YAML: Missing , or : between flow sequence items`.
 * Now (config/yaml-flow-env.ts): one problem per such value, at its YAML path and its `${`,
 * naming the variable and the fix; the file's other syntax errors are still listed, without
 * yaml's cascade; a value under `headers` or `resume` is not echoed. Block style and a quoted
 * flow value still load.
 *
 * Input: config files checked with the CLI's `--check-config` (in process: helpers/check-config.ts), and texts parsed by the
 * real loader (`parseConfig`).
 * Expected: exit 2, nothing on stdout, exactly the stderr below; the valid forms exit 0.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/load.js';
import { assertCheckConfigProblems, checkConfigRun } from '../helpers/check-config.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';

const OPTIONS = { timeout: PROCESS_TEST_TIMEOUT_MS };
const WHY = '(unquoted, YAML reads its braces as a mapping)';
const SELLER = 'http://127.0.0.1:3001/mcp';

const CASES: ReadonlyArray<readonly [label: string, file: string, text: string, problems: readonly string[]]> = [
  [
    'agents: { seller: { url: ${SELLER_URL} } }',
    'one-line.yaml',
    'agents: { seller: { url: ${SELLER_URL} } }\n',
    [`  agents.seller.url (line 1, column 26): \`\${SELLER_URL}\` inside a flow mapping or list ({...} or [...]) must be quoted: write "\${SELLER_URL}" ${WHY}`],
  ],
  [
    'headers: {Authorization: Bearer ${TOKEN}} (a header value: not echoed)',
    'header.yaml',
    `agents:\n  seller:\n    url: ${SELLER}\n    headers: {Authorization: Bearer \${TOKEN}}\n`,
    [
      `  agents.seller.headers.Authorization (line 4, column 37): \`\${TOKEN}\` inside a flow mapping or list ({...} or [...]) must be quoted: put the whole value in double quotes, as "...\${TOKEN}..." ${WHY}`,
    ],
  ],
  [
    'url: [${X}]',
    'list.yaml',
    'agents:\n  seller:\n    url: [${X}]\n',
    [`  agents.seller.url[0] (line 3, column 11): \`\${X}\` inside a flow mapping or list ({...} or [...]) must be quoted: write "\${X}" ${WHY}`],
  ],
  [
    'two values, the second lost in the cascade of the first; a longer value written back whole',
    'two.yaml',
    'agents: {a: {url: http://${HOST}/mcp, headers: {x-key: ${KEY}}}}\nallowed_hosts: [${GW_A}${GW_B}, localhost]\n',
    [
      `  agents.a.url (line 1, column 26): \`\${HOST}\` inside a flow mapping or list ({...} or [...]) must be quoted: write "http://\${HOST}/mcp" ${WHY}`,
      `  agents.a.headers.x-key (line 1, column 56): \`\${KEY}\` inside a flow mapping or list ({...} or [...]) must be quoted: write "\${KEY}" ${WHY}`,
      `  allowed_hosts[0] (line 2, column 17): \`\${GW_A}\` and \`\${GW_B}\` inside a flow mapping or list ({...} or [...]) must be quoted: write "\${GW_A}\${GW_B}" ${WHY}`,
    ],
  ],
  [
    "another syntax error is still reported, without yaml's cascade of the reference",
    'other-error.yaml',
    'agents:\n  a: {url: ${A}, max_json_depth: [1}\n',
    [
      `  agents.a.url (line 2, column 12): \`\${A}\` inside a flow mapping or list ({...} or [...]) must be quoted: write "\${A}" ${WHY}`,
      '  line 2, column 36: YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
      '  line 2, column 37: YAML: Flow map in block collection must be sufficiently indented and end with a }',
    ],
  ],
];

let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-yaml-flow-env-'));
  for (const [, file, text] of CASES) await writeFile(join(dir, file), text);
  await writeFile(join(dir, 'block.yaml'), 'agents:\n  seller:\n    url: ${SELLER_URL}\n');
  await writeFile(join(dir, 'quoted.yaml'), 'agents: { seller: { url: "${SELLER_URL}" } }\n');
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--check-config: an unquoted ${VAR} in a flow mapping or list, named at its path with the fix', { concurrency: true }, () => {
  for (const [label, file, , problems] of CASES) {
    test(`${label}: exit 2, exactly these problems`, OPTIONS, async () => {
      await assertCheckConfigProblems(join(dir, file), problems);
    });
  }

  for (const file of ['block.yaml', 'quoted.yaml']) {
    test(`${file}: still valid`, OPTIONS, async () => {
      const run = await checkConfigRun(join(dir, file), { SELLER_URL: SELLER });
      assert.equal(run.code, 0, run.stderr);
      assert.ok(run.stdout.startsWith(`${join(dir, file)}: valid\n`), run.stdout);
    });
  }
});

function problemsOf(text: string): string[] {
  try {
    parseConfig(text, { env: {} });
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems.map((p) => `${p.path} (${p.line}:${p.column}): ${p.message}`);
  }
  return assert.fail('parsed');
}

describe('the loader', () => {
  test('block style and quoted flow values expand; the quoted one in a list too', () => {
    const env = { SELLER_URL: SELLER, TOKEN: 'tok-123', GW: 'gw.internal' };
    for (const text of [
      'agents:\n  seller:\n    url: ${SELLER_URL}\n    headers:\n      authorization: Bearer ${TOKEN}\nallowed_hosts:\n  - ${GW}\n',
      'agents: { seller: { url: "${SELLER_URL}", headers: { authorization: "Bearer ${TOKEN}" } } }\nallowed_hosts: ["${GW}"]\n',
    ]) {
      const config = parseConfig(text, { env });
      const seller = config.agents.get('seller');
      assert.equal(seller?.url.href, SELLER);
      assert.equal(seller?.headers.authorization, 'Bearer tok-123');
      assert.deepEqual(config.allowed_hosts, ['gw.internal']);
    }
  });

  test('resume.secret: the value is not echoed', () => {
    assert.deepEqual(problemsOf(`agents:\n  a: {url: ${SELLER}}\nresume: {secret: abc\${S}}\n`), [
      `resume.secret (3:21): \`\${S}\` inside a flow mapping or list ({...} or [...]) must be quoted: put the whole value in double quotes, as "...\${S}..." ${WHY}`,
    ]);
  });

  test('$${X} (a literal ${X}) is written back as written', () => {
    assert.deepEqual(problemsOf('agents:\n  a: {url: $${X}}\n'), [
      `agents.a.url (2:12): \`\${X}\` inside a flow mapping or list ({...} or [...]) must be quoted: write "$\${X}" ${WHY}`,
    ]);
  });

  test('a flow mapping over several lines: the value is described, not written back', () => {
    assert.deepEqual(problemsOf('agents: {\n  a: {\n    url: http://x/\n      ${X}/mcp\n  }\n}\n'), [
      `agents.a.url (4:7): \`\${X}\` inside a flow mapping or list ({...} or [...]) must be quoted: put the whole value in double quotes, as "...\${X}..." ${WHY}`,
    ]);
  });

  test('yaml errors elsewhere, with no reference in flow context, stay as they were', () => {
    assert.deepEqual(problemsOf('agents:\n  a: {url: http://x/mcp, max_json_depth: [1}\n'), [
      ' (2:44): YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
      ' (2:45): YAML: Flow map in block collection must be sufficiently indented and end with a }',
    ]);
  });
});
