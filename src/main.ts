#!/usr/bin/env node
/**
 * The `adcp-buyer-gateway` command: parse the command line, load the config, then either
 * check it (`--check-config`) or serve.
 *
 *   adcp-buyer-gateway [--config <file>] [--check-config]
 *
 * Exit codes (`EXIT_CODES`): 0 ok, 1 runtime failure, 2 invalid config or command line.
 *
 * Adding a subcommand (e.g. `probe <agent>`): add a `program.command('probe <agent>')` in
 * `buildProgram` whose action calls `loadConfigOrReport(configPathFrom(...))`; `--config`
 * is a root option, read from a subcommand with `command.optsWithGlobals()`.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { CONFIG_PATH_ENV, DEFAULT_CONFIG_PATH, MIN_RESUME_SECRET_LENGTH, RESUME_SECRET_ENV } from './config/defaults.js';
import { ConfigError, loadConfigFile } from './config/load.js';
import { formatLimitsTable } from './config/table.js';
import type { GatewayConfig } from './config/types.js';
import { createLogger } from './observability/logger.js';
import { VERSION } from './version.js';

/** Process exit codes. */
export const EXIT_CODES = Object.freeze({
  /** Success: `--check-config` found the config valid, or the server stopped on SIGTERM/SIGINT. */
  OK: 0,
  /** Runtime failure: the server could not start (port in use, ...) or failed to close. */
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
 * The config file to use: `--config`, else `$ADCP_GATEWAY_CONFIG` (when non-empty), else
 * `config/gateway.yaml`. Relative paths are relative to the current directory.
 */
export function configPathFrom(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag !== undefined && flag !== '') return flag;
  const fromEnv = env[CONFIG_PATH_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return DEFAULT_CONFIG_PATH;
}

/**
 * Loads the config; on a `ConfigError` writes its report to stderr and returns undefined
 * (the caller exits with `EXIT_CODES.CONFIG`). Other errors propagate.
 */
export async function loadConfigOrReport(path: string, io: CliIo): Promise<GatewayConfig | undefined> {
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

Environment:
  ${CONFIG_PATH_ENV}         the config file, when --config is not given
  ${RESUME_SECRET_ENV}  SSE resume-token secret (>= ${MIN_RESUME_SECRET_LENGTH} characters) when
                              the file has no resume.secret; without either, a random
                              per-process secret is used (resumption won't survive a restart)
  any \${VAR} that the config file references (e.g. seller tokens in headers)

Exit codes:
  0  --check-config: the config is valid; serving: stopped by SIGTERM or SIGINT
  1  runtime failure (e.g. the port is in use)
  2  invalid or unreadable config file, or a bad command line

Examples:
  adcp-buyer-gateway --check-config
  adcp-buyer-gateway --config /etc/adcp-buyer-gateway/gateway.yaml

Every config key, unit and default: docs/configuration.md
`;

interface RootOptions {
  config?: string;
  checkConfig?: boolean;
}

/**
 * Builds the commander program. `setExit` receives the exit code of the action that ran;
 * a long-running action (serving) sets nothing.
 */
export function buildProgram(io: CliIo, setExit: (code: number) => void): Command {
  const program = new Command('adcp-buyer-gateway')
    .description('Sidecar gateway between AdCP buyer MCP hosts and seller MCP servers: bounds and normalizes seller responses.')
    .version(VERSION, '-V, --version', 'print the version and exit')
    .helpOption('-h, --help', 'show this help and exit')
    .option('-c, --config <file>', `config file (default: $${CONFIG_PATH_ENV}, else ${DEFAULT_CONFIG_PATH})`)
    .option('--check-config', 'validate the config, print the resolved limits per agent and tool, and exit')
    .addHelpText('after', HELP_AFTER)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) })
    .action(async (opts: RootOptions) => {
      const path = configPathFrom(opts.config, io.env);
      const config = await loadConfigOrReport(path, io);
      if (config === undefined) return setExit(EXIT_CODES.CONFIG);
      if (opts.checkConfig === true) return setExit(checkConfig(path, config, io));
      const code = await serve(config, io);
      if (code !== undefined) setExit(code);
    });
  // Subcommands go here (e.g. `probe <agent>`); see the file comment.
  return program;
}

/** `--check-config` on a valid config: the summary and the table on stdout. */
function checkConfig(path: string, config: GatewayConfig, io: CliIo): number {
  const lines = [`${path}: valid`, `listen: ${config.listen.host}:${config.listen.port}`];
  if (config.resume.secret === undefined) {
    lines.push(`resume secret: not set (resume.secret or ${RESUME_SECRET_ENV}); a random per-process secret will be used`);
  } else {
    lines.push(`resume secret: set (ttl_ms ${config.resume.ttl_ms})`);
  }
  for (const agent of config.agents.values()) {
    if (agent.tls_insecure_skip_verify) lines.push(`WARNING: agent ${agent.name}: TLS certificate verification is OFF (tls_insecure_skip_verify)`);
  }
  io.stdout(`${lines.join('\n')}\n\n${formatLimitsTable(config)}\n`);
  return EXIT_CODES.OK;
}

/** Normal start: logger, app, listen, signal hook. Returns an exit code only on failure. */
async function serve(config: GatewayConfig, io: CliIo): Promise<number | undefined> {
  const logger = createLogger(config.log_level);
  let app: FastifyInstance;
  try {
    app = await buildApp(config, { logger });
    const address = await app.listen({ host: config.listen.host, port: config.listen.port });
    logger.info({ address, config: config.source, agents: [...config.agents.keys()], version: VERSION }, 'gateway started');
  } catch (err) {
    logger.fatal({ err }, 'could not start');
    io.stderr(`adcp-buyer-gateway: could not start: ${(err as Error).message}\n`);
    return EXIT_CODES.FAILURE;
  }
  installShutdown(app, logger);
  return undefined;
}

/**
 * The one shutdown hook: on SIGTERM or SIGINT close the app (stop accepting, let Fastify
 * finish) and exit 0; exit 1 if closing fails or on a second signal.
 */
function installShutdown(app: FastifyInstance, logger: Logger): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      logger.warn({ signal }, 'second signal while closing: exiting now');
      process.exit(EXIT_CODES.FAILURE);
    }
    closing = true;
    logger.info({ signal }, 'shutting down');
    app.close().then(
      () => {
        logger.info('stopped');
        process.exit(EXIT_CODES.OK);
      },
      (err: unknown) => {
        logger.error({ err }, 'error while closing');
        process.exit(EXIT_CODES.FAILURE);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
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
    await program.parseAsync([...argv]);
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

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  const code = await main();
  if (code !== undefined) process.exitCode = code;
}
