/**
 * The `adcp-buyer-gateway` command (run by the bin, src/main.ts): parse the command line,
 * load the config, then check it (`--check-config`), serve, or probe an agent (`probe <agent>`).
 *
 *   adcp-buyer-gateway [--config <file>] [--check-config]
 *   adcp-buyer-gateway probe <agent> [--config <file>] [--json]
 *   adcp-buyer-gateway help [command]
 *
 * Serving: SIGHUP (and a change of the file on disk) reloads the config (src/reload.ts);
 * SIGUSR1, SIGUSR2 and the other stop-signals.ts IGNORED_SIGNALS are logged and ignored (SIGUSR1
 * opens no inspector); SIGTERM/SIGINT/SIGQUIT shut down gracefully: not ready, stop accepting, let in-flight requests finish
 * (their SSE streams too: ended shortly before the grace ends if still open, plainly when resumable, else with
 * `gateway_shutdown`), end the SSE streams answering no request once no request is in flight (src/shutdown-streams.ts),
 * exit 0 -- or exit 1 after `shutdown_grace_ms`.
 *
 * Exit codes (`EXIT_CODES`): 0 ok, 1 runtime failure, 2 invalid config or command line;
 * `probe` has its own (`PROBE_EXIT`): 0 within target, 1 over target or an error, 2 usage.
 *
 * Stop signals (src/stop-signals.ts, installed by the bin before this module loads): held
 * until the command is known; `--check-config` and `probe` give them their default action;
 * serving, a signal during startup stops the process at once (`stopped during startup`, exit
 * 0), one while it binds its ports waits for the graceful shutdown, installed once it listens.
 * So that a stop during startup is prompt and `--check-config`, `--help` and `probe`'s usage
 * errors are quick, the gateway itself (Fastify, undici, the pipeline) is loaded only by the
 * command that runs it (`serve`, `probe`), after the config is loaded; the config's loader
 * (zod, yaml) only by a command that reads the config, and `--check-config`'s tables by it
 * alone. `--version`, `--help` and a usage error load none of them, nor the logger (pino) or
 * the metrics (prom-client): test/regressions/cli-version-loads-metrics-stack.test.ts. Only
 * types are imported statically from those modules.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { BOUNDS, CONFIG_PATH_ENV, DEFAULT_CONFIG_PATH, MIN_RESUME_SECRET_LENGTH, RESUME_SECRET_ENV } from './config/defaults.js';
import type { OwnListener } from './config/load.js';
import type { GatewayConfig } from './config/types.js';
import { exitAfterLogFlush, logFlushed } from './observability/exit-after-log.js';
import { listedNames } from './observability/listed-names.js';
import { DEFAULT_PROBE_TIMEOUT_MS, PROBE_EXIT } from './probe/options.js';
import { VERSION } from './version.js';
import { keepExitCodeOnClosedOutput } from './ops/closed-output.js';
import { onHangupSignal, onIgnoredSignal, onStopSignal, restoreStopSignals } from './stop-signals.js';
import { StartupStop } from './startup-stop.js';
import { tuneProcessMemory } from './ops/process-memory.js';
import type { endStreamsForShutdown, ShutdownStreams } from './shutdown-streams.js';

/** Process exit codes. */
export const EXIT_CODES = Object.freeze({
  /** Success: `--check-config` found the config valid, or the server stopped cleanly on SIGTERM/SIGINT/SIGQUIT. */
  OK: 0,
  /** Runtime failure: the server could not start (port in use, ...), failed to close, or `shutdown_grace_ms` ran out. */
  FAILURE: 1,
  /** The config is invalid or unreadable, or the command line is wrong. */
  CONFIG: 2,
});

/** Where the CLI reads its environment and writes its text (swappable for tests). */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout(text: string): void;
  stderr(text: string): void;
}

const processIo: CliIo = {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/**
 * Why an empty config path is refused: a script's `--config "$CFG"` with `CFG` unset would
 * otherwise use whatever `config/gateway.yaml` the working directory holds (a new user's
 * trial, 2026-12-03: test/regressions/empty-config-path-falls-back-to-default.test.ts).
 */
const EMPTY_CONFIG_PATH = 'expected a file path, got an empty value (an unset variable?)';

/** `--config`'s argument parser: the path as given; an empty one is a usage error (commander: exit 2). */
function parseConfigPath(value: string): string {
  if (value === '') throw new InvalidArgumentError(EMPTY_CONFIG_PATH);
  return value;
}

/**
 * The config file to use: `--config` (never empty: `parseConfigPath`), else
 * `$ADCP_GATEWAY_CONFIG`, else `config/gateway.yaml` (docs/configuration.md, "Which file": the
 * first one given is used). Relative paths are relative to the current directory.
 * An `ADCP_GATEWAY_CONFIG` set to the empty string is given, and names no file: reported on
 * `command` as a usage error (commander's `error`: the message on stderr, exit 2).
 */
export function configPathFrom(flag: string | undefined, env: NodeJS.ProcessEnv, command: Command): string {
  if (flag !== undefined) return flag;
  const fromEnv = env[CONFIG_PATH_ENV];
  if (fromEnv === undefined) return DEFAULT_CONFIG_PATH;
  if (fromEnv === '') {
    command.error(`error: the environment variable ${CONFIG_PATH_ENV} is empty: expected a file path (an unset variable?); unset it to use ${DEFAULT_CONFIG_PATH}`, {
      exitCode: EXIT_CODES.CONFIG,
      code: 'adcp.emptyConfigEnv',
    });
  }
  return fromEnv;
}

/**
 * Loads the config; on a `ConfigError` writes its report to stderr and returns undefined
 * (the caller exits with `EXIT_CODES.CONFIG`). Other errors propagate. The loader (config/load.ts,
 * with zod and yaml) is imported here, by the command that reads the config (see the module comment).
 */
export async function loadConfigOrReport(path: string, io: CliIo): Promise<GatewayConfig | undefined> {
  const { ConfigError, loadConfigFile } = await import('./config/load.js');
  try {
    return await loadConfigFile(path, { env: io.env });
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr(`${err.format()}\n`);
      return undefined;
    }
    throw err;
  }
}

const HELP_AFTER = `
A sidecar HTTP gateway between AdCP buyer MCP hosts and seller MCP servers. Point the
host's MCP client at http://<listen.host>:<listen.port>/agents/<agent>/mcp; the gateway
forwards to that agent's url, bounds every response as it streams (bytes, SSE events,
deadlines, JSON depth and size), and normalizes tool results into structuredContent.

Config file (the first one given is used):
  1. --config <file>
  2. $${CONFIG_PATH_ENV}
  3. ${DEFAULT_CONFIG_PATH} (relative to the current directory)
An empty --config or ${CONFIG_PATH_ENV} is given too, and is an error (exit 2);
so is a second --config (or a second --timeout-ms of probe), and --check-config
with probe.

Environment:
  ${CONFIG_PATH_ENV}         the config file, when --config is not given
  ${RESUME_SECRET_ENV}  SSE resume-token secret (>= ${MIN_RESUME_SECRET_LENGTH} characters) when
                              the file has no resume.secret (set but empty is an error);
                              without either, a random per-process secret is used
                              (resumption won't survive a restart)
  any \${VAR} that the config file references (e.g. seller tokens in headers)

Signals (serving):
  SIGHUP           reload the config file (a change of the file on disk does too, checked
                   100 ms after the last change, at most 1 s after the first, unless
                   --no-watch-config: write a new file and rename it over the config, so
                   no half-written file is read); a valid file applies to new requests,
                   an invalid one is logged and the running config stays; listen,
                   ops_listen and resume, a max_request_bytes above the start-up maximum,
                   and a changed \${VAR} value (read from the environment at start), need a
                   restart
  SIGTERM, SIGINT, SIGQUIT
                   graceful shutdown: stop accepting, let in-flight requests finish (a
                   call's SSE stream too; still open 1 s before the grace ends (for a
                   grace under 2 s: half-way), it ends: plainly when its client can
                   resume with its last event id, else answered gateway_shutdown), end
                   the SSE streams answering no request once no request is in flight,
                   exit; after shutdown_grace_ms (default 10 s) exit 1 anyway; a second
                   signal exits 1 now;
                   during startup, before it listens: exit 0 at once (stopped during startup)
  SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGIO, SIGPWR, SIGSTKFLT
                   ignored, with one warning line each (signal ignored; SIGUSR1: none
                   under node --disable-sigusr1, where Node drops it); SIGUSR1 does not
                   open Node's inspector (Node >= 22.14: run node --disable-sigusr1 too,
                   or set NODE_OPTIONS=--disable-sigusr1)

Exit codes:
  0  --check-config: the config is valid; serving: stopped cleanly by SIGTERM, SIGINT
     or SIGQUIT (during startup too)
  1  runtime failure (e.g. the port is in use), or shutdown_grace_ms ran out
  2  invalid or unreadable config file, or a bad command line
  (probe: see adcp-buyer-gateway probe --help)

Examples:
  adcp-buyer-gateway --check-config
  adcp-buyer-gateway --config /etc/adcp-buyer-gateway/gateway.yaml
  adcp-buyer-gateway probe acme --config /etc/adcp-buyer-gateway/gateway.yaml

Every config key, unit and default: docs/configuration.md
`;

interface RootOptions {
  config?: string;
  checkConfig?: boolean;
  /** `--no-watch-config` sets false (commander's negatable option: true unless given). */
  watchConfig?: boolean;
}

interface ProbeCliOptions extends RootOptions {
  json?: boolean;
  timeoutMs?: number;
  verbose?: boolean;
}

const PROBE_HELP = `
Builds the gateway from the config in this process and listens on 127.0.0.1 on a free
port (never on listen.port, so it runs beside a live gateway). Through the gateway's own
pipeline it calls initialize, tools/list (following nextCursor, at most 1000 pages, each
cursor a string of at most 65,536 bytes; a larger, repeated or non-string cursor stops
the listing with an error)
and, when the seller lists it, get_adcp_capabilities, then prints each surface's bytes
(what a host on the gateway receives: every byte of an answer, an SSE answer's events
before the response included, noted after the result) against the AdCP discovery size
targets ("Managing response size"):
  tools/list, per page                           131,072 bytes (128 KiB)
  get_adcp_capabilities                           65,536 bytes (64 KiB)
  media_buy.portfolio.publisher_domains            8,192 bytes
  signals.data_provider_domains                    8,192 bytes
  both counterparty-asserted fields together      16,384 bytes

Exit codes:
  0  every surface within its target
  1  a surface over its target, or an error (e.g. RESPONSE_TOO_LARGE from the gateway)
  2  bad command line, invalid config, or an agent the config does not have
`;

/** The help flag's short form (every command's: commander's default, and the program's own). */
const HELP_SHORT = '-h';

/** The options that take a value, as declared (and named in a usage error: `once`). */
const CONFIG_FLAGS = '-c, --config <file>';
const TIMEOUT_FLAGS = '--timeout-ms <ms>';

/** `--timeout-ms`'s range: the config's own for any `*_ms` key (config/defaults.ts BOUNDS.ms: 1 ms .. 24 h). */
const PROBE_TIMEOUT_MS = BOUNDS.ms;

/** Why a `--timeout-ms` value is refused (commander prefixes the option and the value). */
const TIMEOUT_RANGE = `expected an integer number of milliseconds >= ${PROBE_TIMEOUT_MS.min} and <= ${PROBE_TIMEOUT_MS.max} (24 h)`;

/**
 * `--timeout-ms`'s argument parser: decimal digits naming an integer in {@link PROBE_TIMEOUT_MS},
 * else a usage error (commander: the option, the value and {@link TIMEOUT_RANGE} on stderr,
 * exit 2). The upper bound is the config's `*_ms` bound, well under what a Node timer holds
 * (2^31 - 1 ms): past that, 2^31 .. 2^32 - 1 became a 1 ms timer (a healthy seller reported
 * `no answer within 2147483648 ms`, exit 1) and 2^32 and up an internal error, exit 1 (a hostile
 * trial, F6: test/regressions/probe-timeout-ms-overflows-node-timer.test.ts).
 */
function parseTimeout(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < PROBE_TIMEOUT_MS.min || n > PROBE_TIMEOUT_MS.max) throw new InvalidArgumentError(TIMEOUT_RANGE);
  return n;
}

/**
 * Why `--check-config` beside `probe` is refused (commander's `error`: on stderr, exit 2),
 * before any file is read: the two are different commands, and one of them would be dropped
 * without a word. commander gives the program's `--check-config` to the subcommand's
 * `optsWithGlobals` wherever it is written (`--check-config probe a`, `probe a
 * --check-config`), and the live probe ran, exit 0 on a healthy seller, the check never made
 * (a hostile new user's trial 15, L2:
 * test/regressions/check-config-beside-probe-ignored.test.ts). Worded as commander words its
 * own conflicts (`option '...' cannot be used with ...`).
 */
const CHECK_CONFIG_WITH_PROBE =
  "error: option '--check-config' cannot be used with the command 'probe': --check-config checks the config and exits, probe <agent> calls the seller; give one of them";

/**
 * Why `--version` beside `--check-config` or `probe <agent>` is refused (exit 2), as
 * {@link CHECK_CONFIG_WITH_PROBE} is: the version is printed only on the plain serving line
 * (`refuseBadLineFirst`); the check or the probe, or the version, would be dropped without a word.
 */
const VERSION_WITH_CHECK_CONFIG =
  "error: option '-V, --version' cannot be used with option '--check-config': --version prints the version and exits, --check-config checks the config and exits; give one of them";
const VERSION_WITH_PROBE =
  "error: option '-V, --version' cannot be used with the command 'probe': --version prints the version and exits, probe <agent> calls the seller; give one of them";

/**
 * `parse` as the argument parser of an option that takes one value, refusing a second
 * occurrence of the option (in either spelling, `-c` or `--config`, before or after `probe`):
 * a usage error naming the option (`error: option '-c, --config <file>' was given more than
 * once: give it once`, exit `exitCode`, 2), reported by `owner()`, the command that holds
 * the option (commander's `error`: on stderr). commander keeps the last value, and
 * `--config a.yaml --config b.yaml` silently used b.yaml (a hostile new user's trial 12, L8:
 * test/regressions/repeated-config-flag-last-wins.test.ts). The values are not echoed.
 * A boolean flag (`--json`, `--verbose`, `--check-config`) given twice means what it means once.
 */
function once<T>(flags: string, parse: (value: string) => T, owner: () => Command, exitCode: number): (value: string, previous: T | undefined) => T {
  return (value, previous) => {
    if (previous !== undefined) owner().error(`error: option '${flags}' was given more than once: give it once`, { exitCode, code: 'adcp.repeatedOption' });
    return parse(value);
  };
}

/**
 * Builds the commander program. `setExit` receives the exit code of the action that ran;
 * a long-running action (serving) sets nothing.
 */
export function buildProgram(io: CliIo, setExit: (code: number) => void): Command {
  const program: Command = new Command('adcp-buyer-gateway')
    .description('Sidecar gateway between AdCP buyer MCP hosts and seller MCP servers: bounds and normalizes seller responses.')
    // Not commander's `.version()`: it prints and exits as soon as it meets the flag, before
    // the rest of the line is checked (see `refuseBadLineFirst`).
    .option('-V, --version', 'print the version and exit')
    .helpOption(`${HELP_SHORT}, --help`, 'show this help and exit')
    .option('-c, --config <file>', `config file (default: $${CONFIG_PATH_ENV}, else ${DEFAULT_CONFIG_PATH}; never empty; at most once)`, once(CONFIG_FLAGS, parseConfigPath, (): Command => program, EXIT_CODES.CONFIG))
    .option('--check-config', 'validate the config, print the gateway settings and the resolved limits per agent and tool, and exit')
    .option('--no-watch-config', 'serving: do not reload when the config file changes on disk; reload on SIGHUP only')
    .addHelpText('after', HELP_AFTER)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) })
    .action(async (opts: RootOptions, command: Command) => {
      const path = configPathFrom(opts.config, io.env, command);
      // Serving: a stop signal from here on stops the startup (startup-stop.ts); a check
      // ends the default way, as any command line tool (stop-signals.ts).
      const startup = opts.checkConfig === true ? undefined : new StartupStop(EXIT_CODES.OK);
      if (startup === undefined) restoreStopSignals(true);
      const config = await loadConfigOrReport(path, io);
      if (startup?.stopping === true) return;
      if (config === undefined) return setExit(EXIT_CODES.CONFIG);
      if (startup === undefined) return setExit(await checkConfig(path, config, io));
      const code = await serve(config, path, io, startup, opts.watchConfig !== false);
      if (code !== undefined) setExit(code);
    });
  const probeCommand: Command = program
    .command('probe')
    .argument('<agent>', 'the agent to probe (a name under agents: in the config)')
    .description("measure an agent's discovery responses against the AdCP size targets, through the gateway in-process")
    .option('--json', 'print one JSON object instead of the table')
    .option(
      TIMEOUT_FLAGS,
      `give up on one request after this long, ${PROBE_TIMEOUT_MS.min} to ${PROBE_TIMEOUT_MS.max} (default ${DEFAULT_PROBE_TIMEOUT_MS}; at most once)`,
      once(TIMEOUT_FLAGS, parseTimeout, (): Command => probeCommand, PROBE_EXIT.USAGE),
    )
    .option('--verbose', "write the gateway's log (at the config's log_level) to stderr")
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', PROBE_HELP)
    .action(async (agent: string, _opts: unknown, command: Command) => {
      restoreStopSignals(true);
      // `--check-config` (and `--version`) beside it: refused by refuseBadLineFirst's hook.
      const opts = command.optsWithGlobals<ProbeCliOptions>();
      const path = configPathFrom(opts.config, io.env, command);
      const config = await loadConfigOrReport(path, io);
      if (config === undefined) return setExit(PROBE_EXIT.USAGE);
      setExit(await probe(config, agent, opts, io));
    });
  const helpCommand = addHelpCommand(program);
  refuseBadLineFirst(program, probeCommand, helpCommand, io);
  return program;
}

/**
 * The whole command line is checked before anything runs, `--version` included (a preAction
 * hook of the program: it runs after commander's own checks, before the action):
 * - an operand where the program takes none is an unknown command, a usage error naming it
 *   and the commands there are (exit 2), as `help <unknown>` says it. commander takes it for
 *   an excess argument of the program, which has an action of its own (it serves), and said
 *   `error: too many arguments. Expected 0 arguments but got 1.`;
 * - `--check-config` beside `probe` is refused ({@link CHECK_CONFIG_WITH_PROBE}, exit 2);
 * - `--version` (`-V`) prints the version and exits 0 only on a line that without it is
 *   valid and serves (with or without `--config`, never read). On any other line it prints
 *   nothing: a line refused without it is refused the same with it (commander's checks, the
 *   two above, `help <unknown>`); `help [command]` shows the help, as `--help -V` does;
 *   `--check-config` or `probe <agent>` beside it is refused (exit 2:
 *   {@link VERSION_WITH_CHECK_CONFIG}, {@link VERSION_WITH_PROBE}).
 * Reported failures: commander's `.version()` printed and exited as it met the flag, so
 * `--version --bogus` exited 0 (a hostile new user's trial 19, L5:
 * test/regressions/unknown-command-too-many-arguments.test.ts); then this hook printed it
 * before the action that refuses `--check-config probe x` or `help nothere` ran (trial 20,
 * L1: test/regressions/version-flag-on-invalid-line.test.ts). Called once the subcommands
 * exist: they keep refusing excess arguments (commander copies the setting when a command is
 * added).
 */
function refuseBadLineFirst(program: Command, probeCommand: Command, helpCommand: Command, io: CliIo): void {
  program.allowExcessArguments(true);
  program.hook('preAction', (_hooked: Command, action: Command) => {
    const name = action === program ? program.args[0] : undefined;
    if (name !== undefined) refuseUnknownCommand(program, name);
    const opts = action.optsWithGlobals<{ version?: boolean; checkConfig?: boolean }>();
    const exitCode = action === probeCommand ? PROBE_EXIT.USAGE : EXIT_CODES.CONFIG;
    const conflict = (message: string): never => action.error(message, { exitCode, code: 'adcp.conflictingOption' });
    if (action === probeCommand && opts.checkConfig === true) conflict(CHECK_CONFIG_WITH_PROBE);
    if (opts.version !== true || action === helpCommand) return;
    if (action === probeCommand) conflict(VERSION_WITH_PROBE);
    if (opts.checkConfig === true) conflict(VERSION_WITH_CHECK_CONFIG);
    io.stdout(`${VERSION}\n`);
    throw new CommanderError(0, 'commander.version', VERSION);
  });
}

/** The usage error for `name`, no command of `program`: it and the commands there are, exit 2. */
function refuseUnknownCommand(program: Command, name: string): never {
  const names = program.commands.map((c) => c.name()).join(', ');
  return program.error(`error: unknown command '${name}' (commands: ${names})`, { exitCode: EXIT_CODES.CONFIG, code: 'commander.unknownCommand' });
}

/**
 * `help [command]`: the help of `command` (or of the program), on stdout, exit 0, as
 * `<command> --help` prints it; an unknown command is a usage error naming it (exit 2).
 *
 * commander adds such a command by itself only to a program without an action of its own:
 * this one serves, so `help probe` was refused `error: too many arguments` (exit 2) while
 * `probe --help` worked (a hostile trial: test/regressions/help-command-exits-2.test.ts).
 * Its own, forced with `helpCommand(true)`, gives an unknown name the program's help on
 * stderr, without naming what was wrong: hence this one. Added last, so it is listed last.
 */
function addHelpCommand(program: Command): Command {
  program.helpCommand(false);
  return program
    .command('help')
    .argument('[command]', 'the command to show the help of')
    .description('show the help of a command (without one: of adcp-buyer-gateway) and exit')
    .action((name: string | undefined) => {
      if (name === undefined) return program.help();
      const command = program.commands.find((c) => c.name() === name || c.aliases().includes(name));
      if (command !== undefined) return command.help();
      refuseUnknownCommand(program, name);
    });
}

/** `probe <agent>`: the report on stdout, the gateway's errors on stderr. */
async function probe(config: GatewayConfig, agent: string, opts: ProbeCliOptions, io: CliIo): Promise<number> {
  if (!config.agents.has(agent)) {
    io.stderr(`adcp-buyer-gateway probe: no agent ${JSON.stringify(agent)} in ${config.source ?? 'the config'} (agents: ${[...config.agents.keys()].join(', ')})\n`);
    return PROBE_EXIT.USAGE;
  }
  const [{ default: pino }, { createLogger }, { runProbe }, { formatProbeJson, formatProbeTable }] = await Promise.all([
    import('pino'),
    import('./observability/logger.js'),
    import('./probe/probe.js'),
    import('./probe/report.js'),
  ]);
  // stdout carries the report only: the in-process gateway logs to stderr (each line with
  // nothing a terminal acts on, as every logger's: observability/inert-json.ts).
  const logger = createLogger(opts.verbose === true ? config.log_level : 'error', { destination: pino.destination({ fd: 2, sync: true }) });
  let report;
  try {
    report = await runProbe({ config, agent, logger, ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) });
  } catch (err) {
    io.stderr(`adcp-buyer-gateway probe: ${(err as Error).message}\n`);
    return PROBE_EXIT.OVER_OR_ERROR;
  }
  io.stdout(opts.json === true ? formatProbeJson(report) : formatProbeTable(report));
  return report.within_target ? PROBE_EXIT.WITHIN : PROBE_EXIT.OVER_OR_ERROR;
}

/**
 * `--check-config` on a valid config, on stdout: `<path>: valid`, the gateway section, any
 * warnings and notes, then the limits table and the agent guard table, separated by blank
 * lines. No secret is printed. The tables' module (config/table.ts) is imported here, by the
 * one command that prints them.
 */
async function checkConfig(path: string, config: GatewayConfig, io: CliIo): Promise<number> {
  const { configNotes, formatGatewaySection, formatGuardTable, formatLimitsTable } = await import('./config/table.js');
  const notes = configNotes(config);
  const blocks = [`${path}: valid`, formatGatewaySection(config), ...(notes.length > 0 ? [notes.join('\n')] : []), formatLimitsTable(config), formatGuardTable(config)];
  io.stdout(`${blocks.join('\n\n')}\n`);
  return EXIT_CODES.OK;
}

/**
 * Normal start: logger, app, listen, reload and shutdown hooks. Returns an exit code only on
 * failure; undefined while it serves, or once `startup` is stopping (its exit is on its way:
 * startup goes no further). The gateway's modules are loaded here, after the `starting` line
 * (see the module comment).
 */
async function serve(config: GatewayConfig, path: string, io: CliIo, startup: StartupStop, watchConfig: boolean): Promise<number | undefined> {
  const { createLogger } = await import('./observability/logger.js');
  if (startup.stopping) return undefined;
  const logger = createLogger(config.log_level);
  startup.useLogger(logger);
  // SIGUSR1, SIGUSR2 and the other signals the gateway has no action for (stop-signals.ts
  // IGNORED_SIGNALS): one warning line each, from now to the exit (one held meanwhile: now).
  onIgnoredSignal((signal) => logger.warn({ signal }, 'signal ignored: the gateway acts on SIGHUP (reload), SIGTERM, SIGINT and SIGQUIT (stop) only'));
  logger.info({ config: config.source, version: VERSION }, 'starting');
  // Before the gateway's modules load: their start-up scavenges free glibc's threshold block.
  tuneProcessMemory();
  let app: FastifyInstance;
  let createReloader: typeof import('./reload.js').createReloader;
  let endStreams: EndStreams;
  let listening: OwnListener[] = [];
  try {
    const [{ buildApp }, { listenAll }, reload, shutdownStreams] = await Promise.all([
      import('./app.js'),
      import('./ops/listen.js'),
      import('./reload.js'),
      import('./shutdown-streams.js'),
    ]);
    if (startup.stopping) return undefined;
    createReloader = reload.createReloader;
    endStreams = shutdownStreams.endStreamsForShutdown;
    app = await buildApp(config, { logger });
    if (startup.stopping) return undefined;
    // Binding: a stop signal now waits for the graceful shutdown, installed once it listens.
    onStopSignal('hold');
    const { address, opsAddress } = await listenAll(app, config);
    listening = runningListeners(config, address, opsAddress);
    logger.info(
      { address, ...(opsAddress !== undefined ? { ops_address: opsAddress } : {}), config: config.source, ...listedNames('agents', [...config.agents.keys()]), version: VERSION },
      'gateway started',
    );
  } catch (err) {
    // The log line (stdout, with the stack) first, then the human line (stderr), whatever
    // failed: the stderr write waits until the log line is out (observability/exit-after-log.ts).
    logger.fatal({ err }, 'could not start');
    await logFlushed(logger);
    io.stderr(`adcp-buyer-gateway: could not start: ${(err as Error).message}\n`);
    return EXIT_CODES.FAILURE;
  }
  const reloader = createReloader({
    path,
    env: io.env,
    // `--no-watch-config`: SIGHUP only (a writer that cannot write the file atomically: README, "Config reload").
    watch: watchConfig,
    control: app.gateway,
    listening,
    log: logger,
    onResult: (result) => app.gateway.metrics.incConfigReload(!result.ok ? 'error' : result.unchanged === true ? 'unchanged' : 'ok'),
  });
  const onHangup = (): void => {
    logger.info({ signal: 'SIGHUP' }, 'reloading the config');
    void reloader.reload('sighup');
  };
  if (!watchConfig) logger.info({ config: config.source }, 'config file watch off (--no-watch-config): reload with SIGHUP');
  // The bin's SIGHUP listener (src/stop-signals.ts): a SIGHUP held during startup reloads now.
  onHangupSignal(onHangup);
  installShutdown(app, logger, endStreams, () => {
    reloader.close();
    // A SIGHUP from now on gets the reloader's dropped line (trigger sighup), as one whose
    // reload was running: the kernel may deliver a SIGHUP sent just before a SIGTERM after it,
    // and it went silently (test/regressions/reload-finishing-after-sigterm-logged-applied.test.ts).
    onHangupSignal(() => void reloader.reload('sighup'));
  });
  return undefined;
}

/**
 * The listeners the gateway has as it runs, for a reload's check of agent urls (reload.ts
 * `listening`): each with its start-up host and the port it got (`address`, `opsAddress`: what
 * `listenAll` returned), so a `listen.port: 0` is checked at its real port.
 */
function runningListeners(config: GatewayConfig, address: string, opsAddress: string | undefined): OwnListener[] {
  const portOf = (url: string): number => Number(new URL(url).port);
  const out: OwnListener[] = [{ key: 'listen', host: config.listen.host, port: portOf(address), portIsDefault: false, running: true }];
  if (opsAddress !== undefined && config.ops_listen !== undefined) {
    out.push({ key: 'ops_listen', host: config.ops_listen.host, port: portOf(opsAddress), portIsDefault: false, running: true });
  }
  return out;
}

/** src/shutdown-streams.ts's `endStreamsForShutdown`, loaded with the gateway (`serve`). */
type EndStreams = typeof endStreamsForShutdown;

/**
 * The one shutdown hook. Every exit it makes goes through `exitAfterLogFlush`
 * (observability/exit-after-log.ts): the lines written before it, its own last, reach
 * stdout in that order. On SIGTERM, SIGINT or SIGQUIT:
 * 1. stop reloading; /readyz answers 503 (`setReady(false)`);
 * 2. `app.close()`: stop listening (a new connection is refused) and close idle keep-alive
 *    connections (a client that sends its next request on one sees the connection close);
 *    a request that still arrives on a connection opened before is refused 503 `draining`
 *    (src/routing/draining.ts);
 * 3. leave the SSE streams to hosts running (src/shutdown-streams.ts): a request's until it
 *    finishes or min(1000 ms, half the grace) before `shutdown_grace_ms` runs out, when it
 *    ends plainly if it can be resumed (a configured secret, an event id sent: the token the
 *    client reconnects with to this gateway's successor), else with `gateway_shutdown` (no
 *    event id sent, or the random per-process resume secret, whose tokens no other process
 *    verifies: the line's `resume_secret` says `per_process`); one answering no request (the
 *    standalone GET stream) until no request is in flight, just before the exit, or that
 *    margin; a stream that starts while closing is handled the same way;
 * 4. in-flight JSON exchanges finish; each connection is closed once its response is out
 *    (buildApp's preClose hook: src/app.ts);
 * 5. exit 0 once everything is closed, or 1 after `shutdown_grace_ms` (of the config in
 *    force: the connections still open are then closed by the exit, with no response), or at
 *    once on a second signal, or when closing fails. Before such a forced exit each stream
 *    still open ends as at the margin (a request's that cannot be resumed with its
 *    `gateway_shutdown` event), then (a turn later, so a stream whose ending went out keeps
 *    its outcome) each exchange still open writes its `exchange` line, outcome
 *    `shutdown_cut`, and the exit's own line says how many (`exchanges_cut`); they wrote
 *    none (a new user's trial).
 */
function installShutdown(app: FastifyInstance, logger: Logger, endStreamsForShutdown: EndStreams, beforeClose: () => void): void {
  let closing = false;
  /**
   * Set by the first exit: while it waits for the log to be written out, nothing else
   * exits or logs (a third signal, the grace timer, or the close finishing meanwhile).
   */
  let exiting = false;
  /** The shutdown's SSE streams (src/shutdown-streams.ts), from the first signal on. */
  let streams: ShutdownStreams | undefined;
  /**
   * Exits 1: first the end of each SSE stream still open (a second signal comes while streams
   * are left open: a request's that cannot be resumed gets `gateway_shutdown`), then the line of each exchange still
   * open, then `msg` with `exchanges_cut` (how many; null if cutting them threw, which never
   * stops the exit), then the exit once those lines are out (`exitAfterLogFlush`).
   */
  const forcedExit = (level: 'warn' | 'error', fields: Record<string, unknown>, msg: string): void => {
    if (exiting) return;
    exiting = true;
    const failed = (err: unknown): void => logger.error({ err }, 'could not end the open exchanges before exiting');
    let ended = 0;
    try {
      streams?.stop();
      ended = streams?.endAll() ?? 0;
    } catch (err) {
      failed(err);
    }
    // The cut a turn later when streams were just ended: one whose ending Node wrote out has
    // closed by then and keeps its outcome (`local_error` gateway_shutdown, `resumable_end`);
    // only what is still open is cut and counted. Before, those streams were logged
    // `shutdown_cut` and counted in `exchanges_cut` too (a hostile operator's trial 51,
    // finding 4: test/regressions/second-signal-logs-ended-streams-as-cut.test.ts).
    const cutAndExit = (): void => {
      let cut: number | null = null;
      try {
        cut = app.gateway.cutOpenExchanges();
      } catch (err) {
        failed(err);
      }
      logger[level]({ ...fields, exchanges_cut: cut }, msg);
      exitAfterLogFlush(logger, EXIT_CODES.FAILURE);
    };
    if (ended > 0) setImmediate(cutAndExit);
    else cutAndExit();
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) return forcedExit('warn', { signal }, 'second signal while shutting down: exiting now');
    closing = true;
    const graceMs = app.gateway.config.shutdown_grace_ms;
    beforeClose();
    app.gateway.setReady(false);
    const hardExit = setTimeout(
      () => forcedExit('error', { grace_ms: graceMs, open_streams: app.gateway.openStreams }, 'shutdown_grace_ms is over with requests still open: exiting anyway'),
      graceMs,
    );
    hardExit.unref();
    const closed = app.close();
    const ending = endStreamsForShutdown(app.gateway, logger, graceMs);
    streams = ending;
    logger.info(
      { signal, grace_ms: graceMs, sse_streams_ended: ending.ended, sse_streams_finishing: ending.finishing, resume_secret: app.gateway.resumeSecret },
      'shutting down',
    );
    closed.then(
      () => {
        ending.stop();
        if (exiting) return; // a forced exit is on its way
        exiting = true;
        logger.info('stopped');
        exitAfterLogFlush(logger, EXIT_CODES.OK);
      },
      (err: unknown) => forcedExit('error', { err }, 'error while closing'),
    );
  };
  // The process's stop-signal listeners are installed by the bin (src/stop-signals.ts); a
  // signal that came while the ports were being bound is handed over now.
  onStopSignal(onSignal);
}

/**
 * Runs the CLI.
 *
 * @param argv full argv, as `process.argv` (node, script, args...).
 * @param io environment and output streams (default: the process's).
 * @returns the exit code, or undefined when the server is running (the process stays up).
 */
export async function main(argv: readonly string[] = process.argv, io: CliIo = processIo): Promise<number | undefined> {
  let exitCode: number | undefined;
  const program = buildProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version "fail" with exit code 0; usage errors are exit 2.
      return err.exitCode === 0 ? EXIT_CODES.OK : EXIT_CODES.CONFIG;
    }
    io.stderr(`adcp-buyer-gateway: ${(err as Error).stack ?? String(err)}\n`);
    return EXIT_CODES.FAILURE;
  }
  return exitCode;
}

/**
 * The bin's run (src/main.ts): `main` on the process's argv and output; its exit code, once
 * the command is over, becomes the process's (a stop signal held meanwhile is dropped: the
 * command ended on its own).
 */
export async function runCli(): Promise<void> {
  keepExitCodeOnClosedOutput(EXIT_CODES.FAILURE);
  const code = await main();
  if (code === undefined) return;
  restoreStopSignals(false);
  process.exitCode = code;
}
