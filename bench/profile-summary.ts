/**
 * Where the gateway's time goes, from a `--cpu-prof` profile: self time by function and by
 * source (our files one by one, dependencies by package, V8/Node internals and GC apart).
 *
 *   node --import tsx bench/profile-summary.ts bench/profiles/CPU.<...>.0.001.cpuprofile [--top 25]
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
    process.stderr.write('usage: node --import tsx bench/profile-summary.ts <file.cpuprofile> [--top N]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
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
    const fn = `${functionName || '(anonymous)'} ${url ? `${sourceOf(url)}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + dt);
    const src = functionName === '(garbage collector)' ? '(garbage collector)' : sourceOf(url);
    bySource.set(src, (bySource.get(src) ?? 0) + dt);
  });
  const rows = (m: Map<string, number>): string =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `| ${(us / 1000).toFixed(0)} | ${((us / total) * 100).toFixed(1)}% | ${k.replace(/\|/g, '\\|')} |`)
      .join('\n');
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

main();
