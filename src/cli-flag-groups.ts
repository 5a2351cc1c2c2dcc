/**
 * Short flag groups (`-Vh`, `-hV`) read one way whatever their order: the help flag's letter
 * is split off as commander splits a boolean option's.
 *
 * commander reads a group letter by letter while each letter is an option of the command
 * (`-Vc file` is `-V -c file`, `-Vcfile` is `-V --config file`), and the rest as one unknown
 * option. Its help flag is not among the options (it looks for `-h` alone among the unknown
 * arguments), so `-Vh` was `-V -h`, the help, and `-hV` was `error: unknown option '-hV'`,
 * exit 2 (a hostile new user's trial 20, L1:
 * test/regressions/version-flag-on-invalid-line.test.ts). Now `-hV` is `-h -V` too, the help.
 *
 * Only groups that hold the help letter, where commander would read it, are rewritten;
 * anything else is left for commander to read (or refuse) as it does: `-xV` stays
 * `unknown option '-xV'`. An argument that is an option's value (`-c -hV`, `--config -hV`,
 * `-Vc -hV`: a file named `-hV`) and anything after `--` are left as they are.
 */

/** The short flags of a CLI, as commander reads them in a group. */
export interface ShortFlags {
  /** The help flag (`-h`). */
  help: string;
  /** Boolean short flags (`-V`). */
  booleans: ReadonlySet<string>;
  /** Short flags that take a value, in the group's rest or the next argument (`-c`). */
  withValue: ReadonlySet<string>;
  /** Long flags that take a value in the next argument, unless written `--flag=value` (`--config`, `--timeout-ms`). */
  longWithValue: ReadonlySet<string>;
}

/**
 * `group` (one argument, `-` and two or more letters) as commander reads it once the help
 * letter is split off: `-hV` -> `-h -V`, `-Vhx` -> `-V -h -x`, `-Vcfile` -> `-Vcfile` (no help
 * letter read). Returns the arguments and whether the last one waits for its value (`-Vc`).
 */
function splitGroup(group: string, flags: ShortFlags): { args: string[]; valueNext: boolean } {
  if (!/^-[^-]./.test(group)) return { args: [group], valueNext: flags.withValue.has(group) || flags.longWithValue.has(group) };
  const args: string[] = [];
  let rest = group.slice(1);
  let helpRead = false;
  while (rest.length > 0) {
    const flag = `-${rest[0]}`;
    if (flag === flags.help || flags.booleans.has(flag)) {
      helpRead ||= flag === flags.help;
      args.push(flag);
      rest = rest.slice(1);
      continue;
    }
    args.push(`-${rest}`);
    break;
  }
  const last = args[args.length - 1];
  const valueNext = last !== undefined && flags.withValue.has(last);
  return helpRead ? { args, valueNext } : { args: [group], valueNext };
}

/** `args` (the command line, without node and the script) with every short flag group that holds the help letter split (see the module comment). */
export function splitHelpInFlagGroups(args: readonly string[], flags: ShortFlags): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    const { args: read, valueNext } = splitGroup(arg, flags);
    out.push(...read);
    if (valueNext && i + 1 < args.length) out.push(args[++i] as string);
  }
  return out;
}
