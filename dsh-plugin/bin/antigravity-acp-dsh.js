#!/usr/bin/env node
/**
 * `antigravity-acp-dsh`: check the adapter where DSH runs, sign in and out of Google's
 * server, list its models. Run it in DSH's own Node from the DSH host folder (`npx
 * antigravity-acp-dsh doctor`, `pnpm exec antigravity-acp-dsh doctor`). Glue only: it reads
 * the command line and the config (the plugin's `Config`, validated by the same Rust code,
 * `PluginConfig`, through the binding), gathers what only Node knows (the platform and its
 * addon, Node's version, the DSH version installed where it runs), and prints what the
 * adapter's `user_commands` return. `USAGE` below is the reference, exit codes included.
 * @module antigravity-acp-dsh/bin
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { choosePackage } from '../lib/binding-platform.js';
import { configJson } from '../lib/config.js';

/** Exit codes (the Rust `user_commands::EXIT_*`, and 130 for an interrupted login). */
const EXIT = Object.freeze({ ok: 0, failed: 1, warnings: 2, usage: 64, interrupted: 130 });

const USAGE = `Usage: antigravity-acp-dsh <command> [options]

Commands:
  doctor    check everything, one line each: ok, warn, fail or skip, with a fix (the
            install: every file hashed against its receipt)
              --quick    skip the sign-in check (no server is started)
              --install  install (or repair) the pinned server first; without it nothing
                         is downloaded and a missing install fails
              --clean    sweep the sessions that ended processes left in the scratch root
  status    one line: the install (the quick check each launch runs: sizes, modes and
            file identities), the sign-in and confinement
  login     sign in to Google's server (ACP authenticate); the sign-in URL is shown on
            this terminal only, never logged; in an SSH session without a display it also
            prints the ssh -L line that forwards the sign-in's loopback port
              --method M   oauth-personal (default: authMethod, else oauth-personal),
                           oauth-business, gemini-api-key or agent-platform
              --wait SECS  how long to wait for the sign-in (default 600)
  logout    sign out (ACP logout), only if the server advertises it
  models    the models DSH would list (the adapter's discovery)
  help      this text

Config (the plugin's config row, as in DSH). Field by field, --config wins over
--config-file, and each flag below wins over both, wherever it stands on the line:
  --config-file PATH   a JSON file: the plugin's config, or a whole row {id, name, config}
  --config JSON        the same, inline
  --server CMD         the whole server: its command, with --server-arg ARG (repeatable;
                       --server-arg=ARG for an ARG that starts with -)
  --scratch-root DIR, --cache-dir DIR, --registry URL, --provider ROUTE,
  --confinement required|best_effort|off, --auth-method METHOD

Output:
  --json               the report as JSON on stdout (a login's URL still goes to stderr)

Exit codes:
  0    all well (doctor, status: every check ok or skipped)
  1    a check failed, or the command could not do what it was asked (not signed in,
       logout not advertised, the server did not start, ...)
  2    doctor, status: warnings, no failure
  64   the command line or the config was refused (nothing was started)
  130  login interrupted
`;

/** A refused command line: printed with a pointer to `--help`, exit 64. */
class UsageError extends Error {}

/** @typedef {import('node:util').ParseArgsOptionsConfig} Options */

/** The options every command takes. @type {Options} */
const COMMON = {
  config: { type: 'string' },
  'config-file': { type: 'string' },
  server: { type: 'string' },
  'server-arg': { type: 'string', multiple: true },
  'scratch-root': { type: 'string' },
  'cache-dir': { type: 'string' },
  registry: { type: 'string' },
  provider: { type: 'string' },
  confinement: { type: 'string' },
  'auth-method': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

/** Each command's own options. @type {Record<string, Options>} */
const OWN = {
  doctor: { quick: { type: 'boolean' }, install: { type: 'boolean' }, clean: { type: 'boolean' } },
  status: {},
  login: { method: { type: 'string' }, wait: { type: 'string' } },
  logout: {},
  models: {},
};

/** The config fields a flag sets directly. */
const FIELD_FLAGS = [
  ['scratch-root', 'scratchRoot'],
  ['cache-dir', 'cacheDir'],
  ['registry', 'registry'],
  ['provider', 'provider'],
  ['confinement', 'confinement'],
  ['auth-method', 'authMethod'],
];

/**
 * Run one command line.
 * @param {string[]} argv - the arguments after the binary.
 * @returns {Promise<number>} the exit code.
 */
async function main(argv) {
  const command = argv[0];
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  const own = Object.hasOwn(OWN, command) ? OWN[command] : undefined;
  if (own === undefined) throw new UsageError(`unknown command \`${command}\``);
  /** @type {Record<string, any>} */
  let values;
  try {
    ({ values } = parseArgs({
      args: argv.slice(1),
      options: { ...COMMON, ...own },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(/** @type {Error} */ (error).message);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return EXIT.ok;
  }
  const config = readConfig(values);
  const loader = await import('../lib/binding.js').catch((error) => {
    process.stderr.write(
      `antigravity-acp-dsh: its loader cannot be imported here (is DSH installed where this runs?): ${error.message}\n`,
    );
    return undefined;
  });
  if (loader === undefined) return EXIT.failed;
  let addon;
  try {
    addon = loader.binding();
  } catch (error) {
    process.stderr.write(`fail  platform  ${/** @type {Error} */ (error).message}\n`);
    return EXIT.failed;
  }
  if (command === 'login') return login(addon, config, values);
  if (command === 'doctor') return doctor(addon, config, values, loader.loadedAddon());
  const answer = await addon.runUserCommand(command, config, 'null', '{}');
  return print(unwrap(answer), values.json);
}

/**
 * `doctor`: with `--install`, the install's progress on stderr as the adapter renders it
 * (a bar redrawn in place when stderr is a terminal, a line every few seconds otherwise),
 * then the report.
 * @param {import('../lib/binding.js').Addon} addon
 * @param {string} config - the config JSON.
 * @param {Record<string, any>} values - the parsed flags.
 * @param {{path: string, source: string}} loaded - the loaded addon.
 * @returns {Promise<number>}
 */
async function doctor(addon, config, values, loaded) {
  const options = {
    quick: !!values.quick,
    install: !!values.install,
    clean: !!values.clean,
    progress: process.stderr.isTTY ? 'terminal' : 'lines',
  };
  if (options.install)
    process.stderr.write('installing (or checking) the pinned server first; a first install downloads it...\n');
  const handle = addon.startDoctor(config, JSON.stringify(hostFacts(loaded)), JSON.stringify(options));
  for (;;) {
    const event = unwrap(await handle.nextEvent());
    if (event === null) return EXIT.failed;
    if (event.kind === 'progress') process.stderr.write(event.text);
    else if (event.kind === 'done') return print(event.output, values.json);
  }
}

/**
 * `login`: the sign-in URL on stderr as soon as the server prints it, then the output.
 * @param {import('../lib/binding.js').Addon} addon
 * @param {string} config - the config JSON.
 * @param {Record<string, any>} values - the parsed flags.
 * @returns {Promise<number>}
 */
async function login(addon, config, values) {
  let waitSecs;
  if (values.wait !== undefined) {
    waitSecs = Number(values.wait);
    if (!Number.isInteger(waitSecs) || waitSecs < 1)
      throw new UsageError('--wait takes a whole number of seconds, at least 1');
  }
  /** @type {import('../lib/binding.js').NativeLoginHandle} */
  let handle;
  try {
    handle = addon.startLogin(config, JSON.stringify({ method: values.method, waitSecs }));
  } catch (error) {
    return refused(error);
  }
  let interrupted = false;
  const interrupt = () => {
    interrupted = true;
    handle.cancel();
  };
  process.once('SIGINT', interrupt);
  try {
    let output;
    for (;;) {
      const event = unwrap(await handle.nextEvent());
      if (event === null) break;
      if (event.kind === 'url') process.stderr.write(`\n${event.text}\n`);
      else if (event.kind === 'done') output = event.output;
    }
    if (output !== undefined) print(output, values.json);
    if (interrupted || output === undefined) {
      process.stderr.write('login interrupted: the sign-in was abandoned\n');
      return EXIT.interrupted;
    }
    return output.exitCode;
  } finally {
    process.off('SIGINT', interrupt);
  }
}

/**
 * The config JSON from the config file, `--config` and the flags, in that order, each
 * later source winning field by field wherever it stands on the command line (a flag is
 * the most specific thing a user says); `--server` replaces the whole `server`.
 * @param {Record<string, any>} values - the parsed flags.
 * @returns {string} what the Rust `PluginConfig` reads.
 */
function readConfig(values) {
  /** @type {Record<string, any>} */
  let config = {};
  if (values['config-file'] !== undefined) {
    let text;
    try {
      text = readFileSync(values['config-file'], 'utf8');
    } catch (error) {
      throw new UsageError(`--config-file: cannot read it (${/** @type {NodeJS.ErrnoException} */ (error).code})`);
    }
    config = { ...config, ...configOf(text, '--config-file') };
  }
  if (values.config !== undefined) config = { ...config, ...configOf(values.config, '--config') };
  if (values.server !== undefined) config.server = { command: values.server, args: values['server-arg'] ?? [] };
  else if (values['server-arg'] !== undefined) throw new UsageError('--server-arg needs --server');
  for (const [flag, field] of FIELD_FLAGS) if (values[flag] !== undefined) config[field] = values[flag];
  // The Rust `PluginConfig` validates it, as it does the plugin's (`configJson` only drops
  // unset fields).
  return configJson(/** @type {import('../index.js').Config} */ (config));
}

/**
 * The plugin config a JSON text holds: the object itself, or a config row's `config`.
 * @param {string} text - JSON.
 * @param {string} where - the flag, for a message.
 * @returns {Record<string, any>}
 */
function configOf(text, where) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${where} is not JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UsageError(`${where} is not a JSON object`);
  const row = Object.hasOwn(value, 'config') && (Object.hasOwn(value, 'name') || Object.hasOwn(value, 'id'));
  if (!row) return value;
  const config = value.config ?? {};
  if (typeof config !== 'object' || Array.isArray(config))
    throw new UsageError(`${where}: the row's config is not an object`);
  return config;
}

/**
 * What only Node knows, for `doctor` (the Rust `HostFacts`).
 * @param {{path: string, source: string}} addon - the loaded addon.
 * @returns {object}
 */
function hostFacts(addon) {
  const choice = choosePackage({ platform: process.platform, arch: process.arch, report: process.report });
  const cwd = process.cwd();
  return {
    platform: choice.platform,
    packageName: choice.packageName,
    supported: choice.supported,
    addonPath: addon.path,
    addonSource: addon.source,
    nodeVersion: process.versions.node,
    dshVersion: dshVersion(cwd),
    cwd,
  };
}

/**
 * The version of the `@deepseek-ai/dsh-llm` that resolves from `cwd` (the DSH host folder).
 * @param {string} cwd
 * @returns {string | null} `null` when none does.
 */
function dshVersion(cwd) {
  try {
    const version = createRequire(join(cwd, 'package.json'))('@deepseek-ai/dsh-llm/package.json').version;
    return typeof version === 'string' ? version : null;
  } catch {
    return null;
  }
}

/**
 * The value of the binding's envelope; its error thrown with its code.
 * @param {string} json - `{ok}` or `{error: {code, message}}`.
 * @returns {any}
 */
function unwrap(json) {
  const outcome = JSON.parse(json);
  if (outcome.error !== undefined) throw Object.assign(new Error(outcome.error.message), { code: outcome.error.code });
  return outcome.ok;
}

/**
 * Prints an output, as text or JSON.
 * @param {{exitCode: number, text: string, report: unknown}} output
 * @param {boolean | undefined} json - `--json`.
 * @returns {number} its exit code.
 */
function print(output, json) {
  process.stdout.write(json ? `${JSON.stringify(output.report, null, 2)}\n` : output.text);
  return output.exitCode;
}

/**
 * A failure before anything ran: a refused config is a usage error (64), anything else 1.
 * @param {unknown} error
 * @returns {number}
 */
function refused(error) {
  const { code, message } = /** @type {{code?: string, message?: string}} */ (error ?? {});
  process.stderr.write(`antigravity-acp-dsh: ${message ?? String(error)}${code ? ` (${code})` : ''}\n`);
  return code === 'ACP_INVALID_CONFIG' ? EXIT.usage : EXIT.failed;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    if (error instanceof UsageError) {
      process.stderr.write(`antigravity-acp-dsh: ${error.message}\n(antigravity-acp-dsh --help for usage)\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    process.exitCode = refused(error);
  },
);
