/**
 * `${VAR}` expansion for string values of the config file.
 *
 * Syntax:
 * - `${NAME}` is replaced by the environment variable NAME (`[A-Za-z_][A-Za-z0-9_]*`). An
 *   unset variable is a problem; a variable set to the empty string expands to "", unless the
 *   caller refuses empty values (`refuseEmpty`, the loader's choice for an agent `url` and
 *   its header values), when it is a problem too.
 * - `$${` is a literal `${` (so `$${NAME}` yields the text `${NAME}`).
 * - Any other `$` is literal (`$HOME`, `a$b`, `$$`).
 * - `${` that is not a well-formed reference (no closing `}`, empty or invalid name) is a problem.
 *
 * Expansion is a single pass: text that comes from a variable is never expanded again.
 * Results are returned, never logged; problems name the variable, never its value.
 */

/** One problem found while expanding a string. `index` is the 0-based offset of the `${` in the original string. */
export type EnvProblem =
  | { readonly kind: 'missing'; readonly name: string; readonly index: number }
  | { readonly kind: 'empty'; readonly name: string; readonly index: number }
  | { readonly kind: 'malformed'; readonly index: number };

/** The outcome of `expandEnv`. `expanded` is true when at least one `${NAME}` was substituted. */
export type ExpandResult =
  | { readonly ok: true; readonly value: string; readonly expanded: boolean }
  | { readonly ok: false; readonly problems: readonly EnvProblem[]; readonly expanded: boolean };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Options of `expandEnv`. */
export interface ExpandOptions {
  /** A variable set to the empty string is a problem (`kind: 'empty'`) rather than "". Default false. */
  readonly refuseEmpty?: boolean;
}

/**
 * Expands `${NAME}` references in `input` from `env`.
 *
 * @param input a string value from the config file.
 * @param env variables to read (own string properties only; `process.env` by default).
 * @param opts `refuseEmpty`: a variable set to "" is a problem.
 * @returns `{ ok: true, value, expanded }`, or `{ ok: false, problems }` listing every unset
 *   variable, refused empty one and malformed reference (in order of appearance). Never throws.
 */
export function expandEnv(input: string, env: NodeJS.ProcessEnv = process.env, opts: ExpandOptions = {}): ExpandResult {
  // Fast path: nothing to expand.
  if (!input.includes('${')) return { ok: true, value: input, expanded: false };

  let out = '';
  let expanded = false;
  const problems: EnvProblem[] = [];
  let i = 0;
  while (i < input.length) {
    const dollar = input.indexOf('$', i);
    if (dollar === -1) {
      out += input.slice(i);
      break;
    }
    out += input.slice(i, dollar);
    if (input.startsWith('$${', dollar)) {
      out += '${';
      i = dollar + 3;
      continue;
    }
    if (input[dollar + 1] !== '{') {
      out += '$';
      i = dollar + 1;
      continue;
    }
    const close = input.indexOf('}', dollar + 2);
    const name = close === -1 ? '' : input.slice(dollar + 2, close);
    if (close === -1 || !NAME.test(name)) {
      problems.push({ kind: 'malformed', index: dollar });
      // Skip past the broken reference (or to the end) and keep scanning for more problems.
      i = close === -1 ? input.length : close + 1;
      continue;
    }
    const value = Object.hasOwn(env, name) ? env[name] : undefined;
    if (typeof value !== 'string') {
      problems.push({ kind: 'missing', name, index: dollar });
    } else if (value === '' && opts.refuseEmpty === true) {
      problems.push({ kind: 'empty', name, index: dollar });
    } else {
      out += value;
      expanded = true;
    }
    i = close + 1;
  }
  if (problems.length > 0) return { ok: false, problems, expanded };
  return { ok: true, value: out, expanded };
}
