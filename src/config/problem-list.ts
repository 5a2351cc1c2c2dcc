/**
 * How many of a config's problems are shown, and problems whose message is computed only when
 * shown.
 *
 * A config error keeps every problem (`ConfigError.problems`), but its report
 * (`--check-config`, start-up) and the `config reload failed` log line show the first
 * `MAX_SHOWN_PROBLEMS` in file order, then `... and N more problems`. An unknown key's
 * message (its "did you mean", suggest.ts) is computed when first read, so problems that are
 * not shown cost no suggestion. Before, a 1 MiB file of 75,616 unknown keys printed 31 MB
 * (its reload failure line, over the log's buffer, was dropped: the log said nothing) after
 * 18 s of suggestions (a new user's trial, 2026-12-03, F4;
 * test/regressions/config-reload-many-problems-freezes.test.ts).
 */
import type { ConfigProblem } from './load.js';

/** Problems shown in a config error's report and in the reload failure log line: 50. */
export const MAX_SHOWN_PROBLEMS = 50;

/**
 * Characters of a shown problem's path, and of its message, past which the rest is left out:
 * 1,000. Messages are a few hundred characters, but a path or a message names keys as written,
 * and a key can be most of the file (an anchor holding a 100 KB key, aliased 50 times, would
 * make 50 paths of 100 KB each). So 50 problems always fit in a log line (the logger drops
 * lines past 16 MiB: src/observability/log-destination.ts).
 */
export const MAX_SHOWN_PROBLEM_CHARS = 1000;

/**
 * The problems to show, in the order given (the loader sorts them in file order): the first
 * `MAX_SHOWN_PROBLEMS`, each path and message clipped at `MAX_SHOWN_PROBLEM_CHARS`
 * (`…` and the full length follow), and how many more there are. Reads only the shown
 * problems' messages.
 */
export function shownProblems(problems: readonly ConfigProblem[]): { shown: readonly ConfigProblem[]; more: number } {
  const shown = problems.slice(0, MAX_SHOWN_PROBLEMS).map((p) => {
    const path = clip(p.path);
    const message = clip(p.message);
    return path === p.path && message === p.message ? p : { ...p, path, message };
  });
  return { shown, more: Math.max(0, problems.length - MAX_SHOWN_PROBLEMS) };
}

/** `text`, or its first `MAX_SHOWN_PROBLEM_CHARS` characters (a surrogate pair kept whole) and `… (N characters)`. */
function clip(text: string): string {
  if (text.length <= MAX_SHOWN_PROBLEM_CHARS) return text;
  let end = MAX_SHOWN_PROBLEM_CHARS;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${text.length} characters)`;
}

/** The line after the shown problems: `... and 4950 more problems`. */
export function moreProblemsLine(more: number): string {
  return `... and ${more} more problem${more === 1 ? '' : 's'}`;
}

/**
 * Makes `problem.message` computed by `message()` when first read, then kept: an enumerable
 * own property in its place, so the problem reads, compares and serializes (JSON, spread,
 * `assert.deepEqual`) as one with a plain message. Once read or set it is a plain data
 * property again (unless the problem was frozen meanwhile: it stays an accessor, still
 * answering the same text); until then `util.inspect` shows it as `[Getter/Setter]`.
 *
 * @returns `problem`.
 */
export function deferMessage(problem: ConfigProblem, message: () => string): ConfigProblem {
  let value: string | undefined;
  const settle = (target: object, text: string): string => {
    value = text;
    Reflect.defineProperty(target, 'message', { value: text, writable: true, enumerable: true, configurable: true });
    return text;
  };
  Object.defineProperty(problem, 'message', {
    get(this: object): string {
      return settle(this, value ?? message());
    },
    set(this: object, text: string): void {
      settle(this, text);
    },
    enumerable: true,
    configurable: true,
  });
  return problem;
}
