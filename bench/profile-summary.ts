/**
 * Where the gateway's time goes, from a `--cpu-prof` profile: self time by function and by
 * source (our files one by one, dependencies by package, V8/Node internals and GC apart).
 * Where it allocates, from an `--alloc-prof` profile (child-stats.ts): sampled bytes
 * allocated by function and by source, the same way.
 *
 *   node --import tsx bench/profile-summary.ts bench/profiles/CPU.<...>.0.001.cpuprofile [--top 25]
 *   node --import tsx bench/profile-summary.ts bench/profiles/ALLOC.<pid>.heapprofile [--top 25]
 *
 * (one file per gateway process: the bench runs the gateway compiled, under plain node.)
 */
import { readFileSync } from 'node:fs';
import { REPO_DIR } from './children.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}
/** V8's sampling heap profile (HeapProfiler.stopSampling): a call tree whose nodes carry the sampled bytes allocated there. */
interface HeapNode {
  callFrame: ProfileNode['callFrame'];
  selfSize: number;
  children: HeapNode[];
}

function sourceOf(url: string): string {
  if (url === '') return '(native / V8)';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = path.slice(nm + '/node_modules/'.length).split('/');
    return `dep: ${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (path.startsWith('node:')) return `node:${path.slice(5).split('/').slice(0, 2).join('/')}`;
  // The gateway runs from the run's compiled snapshot (compile.ts, `<tmp>/out/src/...js`): show it as src/.
  const snap = /\/adcp-bench-src-[^/]+\/out\/(.*)$/.exec(path);
  if (snap) return snap[1]!;
  return path.startsWith(REPO_DIR) ? path.slice(REPO_DIR.length) : path;
}

function main(): void {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--'));
  const topAt = args.indexOf('--top');
  const top = topAt === -1 ? 25 : Number(args[topAt + 1]);
  if (!file) {
    process.stderr.write('usage: node --import tsx bench/profile-summary.ts <file.cpuprofile | file.heapprofile> [--top N]\n');
    process.exit(2);
  }
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Profile | { head: HeapNode };
  if ('head' in parsed) {
    summarizeAllocations(parsed.head, top);
    return;
  }
  const profile = parsed;
  const byId = new Map(profile.nodes.map((n) => [n.id, n] as const));
  const byFunction = new Map<string, number>();
  const bySource = new Map<string, number>();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += dt;
      return;
    }
    total += dt;
    const src = sourceOf(url);
    add(byFunction, functionLabel(functionName, url && src, lineNumber), dt);
    add(bySource, functionName === '(garbage collector)' ? '(garbage collector)' : src, dt);
  });
  const rows = (m: Map<string, number>): string => table(m, total, top, (us) => (us / 1000).toFixed(0));
  process.stdout.write(
    [
      `Busy ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s.`,
      '',
      '| self ms | share | source |',
      '| --- | --- | --- |',
      rows(bySource),
      '',
      '| self ms | share | function |',
      '| --- | --- | --- |',
      rows(byFunction),
      '',
    ].join('\n'),
  );
}

/** `name source:line` (`source` empty for V8's own frames). */
function functionLabel(name: string, source: string, lineNumber: number): string {
  return `${name || '(anonymous)'} ${source ? `${source}:${lineNumber + 1}` : ''}`.trim();
}

function add(m: Map<string, number>, key: string, amount: number): void {
  m.set(key, (m.get(key) ?? 0) + amount);
}

/** Markdown rows of `m` (key -> amount), largest first, with each amount's share of `total`. */
function table(m: Map<string, number>, total: number, top: number, format: (v: number) => string): string {
  return [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `| ${format(v)} | ${((v / total) * 100).toFixed(1)}% | ${k.replace(/\|/g, '\\|')} |`)
    .join('\n');
}

/** The allocation profile's sampled bytes by function and by source (where they were allocated, not their callers). */
function summarizeAllocations(head: HeapNode, top: number): void {
  const byFunction = new Map<string, number>();
  const bySource = new Map<string, number>();
  let total = 0;
  const stack = [head];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    stack.push(...node.children);
    if (node.selfSize === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    total += node.selfSize;
    const src = sourceOf(url);
    add(byFunction, functionLabel(functionName, url && src, lineNumber), node.selfSize);
    add(bySource, src, node.selfSize);
  }
  const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
  process.stdout.write(
    [
      `Sampled allocations: ${mib(total)} MiB in all (objects the GC collected included).`,
      '',
      '| MiB | share | source |',
      '| --- | --- | --- |',
      table(bySource, total, top, mib),
      '',
      '| MiB | share | function |',
      '| --- | --- | --- |',
      table(byFunction, total, top, mib),
      '',
    ].join('\n'),
  );
}

main();
