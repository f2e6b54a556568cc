import { parseArgs } from 'node:util';
import { generateKeyEntry } from '../adapters/crypto/key-ring.ts';
import { migrateOnSession, withCommandDb } from './database-setup.ts';
import { OPERATOR_COMMANDS } from '../cli/program.ts';
import { ConfigError, configurationMarkdown, loadConfig } from '../config/config.ts';
import { createLogger } from '../observability/logger.ts';
import { startTidings, type Roles } from './compose.ts';
import { operatorCommand, type OperatorSeams } from './operator.ts';
import { runKeysRotate } from './keys-rotate.ts';
import { runRetentionOnce } from './retention-run.ts';
import { startBanner } from './start-banner.ts';
import { runTail } from './tail.ts';

const USAGE = `Usage: tidings <command>

Commands:
  serve          HTTP API and dispatcher in one process (the default)
  api            HTTP API only
  dispatcher     dispatcher only (admin server on TIDINGS_ADMIN_PORT: /livez, /readyz, /metrics)
  migrate        apply pending database migrations and exit
  keys generate  print a new encryption key entry (id:base64) for TIDINGS_ENCRYPTION_KEYS
  keys rotate    re-encrypt stored secrets and payloads under the first key of the ring (safe while running)
  retention run  run the retention job once: expire payloads, prune old history and idempotency keys, run erasures
  config-docs    print the configuration reference (Markdown)
  tail           live attempts through the API: --app ID [--endpoint ID] [--outcome success|fail]
                 [--url URL (default TIDINGS_URL or http://127.0.0.1:8071)] [--interval MS] [--backlog N];
                 the token comes from TIDINGS_TOKEN

Operator commands (each with --help and --json; docs/guides/cli.md):
  publish, apps, endpoints list|show|health|pause|resume, messages list|show, attempts, timeline,
  dead-letters, replay, recover, replay-missing   through the HTTP API (TIDINGS_URL, TIDINGS_TOKEN)
  listen         forward an endpoint's new messages, signed, to a URL on this machine
  verify, sign   check a captured request's signature and say why it fails; sign a body
  doctor         check configuration, database, migrations, clock, egress, keys (exit 1 on an error)
  config show    every setting's effective value and its source, secrets masked

Configuration comes from the environment; see docs/reference/configuration.md.`;

const ROLES: Record<string, Roles> = {
  serve: { api: true, dispatcher: true },
  api: { api: true, dispatcher: false },
  dispatcher: { api: false, dispatcher: true },
};

/** Runs the `tidings` command line. Returns the exit code (servers run until SIGTERM/SIGINT). */
export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  seams: OperatorSeams = {},
): Promise<number> {
  if (OPERATOR_COMMANDS.has(argv[0] ?? '')) return operatorCommand(argv, env, seams);
  const { positionals, values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      app: { type: 'string' },
      endpoint: { type: 'string' },
      outcome: { type: 'string' },
      url: { type: 'string' },
      interval: { type: 'string' },
      backlog: { type: 'string' },
    },
  });
  const command = positionals[0] ?? 'serve';
  if (values.help === true || command === 'help') {
    console.log(USAGE);
    return 0;
  }
  try {
    if (command === 'tail') return await tailCommand(values, env);
    if (command === 'config-docs') {
      process.stdout.write(configurationMarkdown());
      return 0;
    }
    if (command === 'keys' && positionals[1] === 'generate') {
      console.log(generateKeyEntry(positionals[2] ?? `k${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`));
      return 0;
    }
    if (command === 'keys' && positionals[1] === 'rotate') {
      const config = loadConfig(env);
      let stop = false;
      const onSignal = (): void => {
        stop = true;
        console.error('stopping after this batch (run `tidings keys rotate` again to resume)…');
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        const { exitCode } = await runKeysRotate({
          config,
          logger: createLogger({ level: config.logLevel === 'info' ? 'warn' : config.logLevel }),
          out: (line) => console.log(line),
          shouldStop: () => stop,
        });
        return exitCode;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    }
    if (command === 'retention' && positionals[1] === 'run') {
      const config = loadConfig(env);
      const report = await runRetentionOnce(
        config,
        createLogger({ level: config.logLevel === 'info' ? 'warn' : config.logLevel }),
      );
      console.log(
        `payloads expunged: ${report.payloadsExpunged}, deliveries pruned: ${report.deliveriesPruned}, ` +
          `idempotency keys pruned: ${report.idempotencyKeysPruned}, erasure batches: ${report.erasureBatches}`,
      );
      return 0;
    }
    if (command === 'migrate') {
      const config = loadConfig(env);
      const logger = createLogger({ level: config.logLevel });
      await withCommandDb(config, 1, async (db) => {
        // Behind a transaction pooler: on TIDINGS_DIRECT_DATABASE_URL, or refused without it (migration_needs_session).
        const run = await migrateOnSession(config, db, logger, { orCheck: false });
        const applied = [...run.migrations, ...run.routines.map((name) => `routine ${name}`)];
        console.log(applied.length === 0 ? 'database is up to date' : `applied: ${applied.join(', ')}`);
      });
      return 0;
    }
    const roles = ROLES[command];
    if (roles === undefined) {
      console.error(`unknown command "${command}"\n\n${USAGE}`);
      return 2;
    }
    if (command !== 'serve' && (env.DATABASE_URL ?? '') === '') {
      console.error(
        `tidings ${command}: the embedded engine runs in one process — use \`tidings serve\`, or set ` +
          'DATABASE_URL to run the API and dispatchers as separate processes',
      );
      return 2;
    }
    const running = await startTidings({ env, roles });
    for (const line of startBanner(running.apiUrl, running.generatedAdminToken)) console.log(line);
    return await new Promise<number>((resolve) => {
      const onSignal = (signal: string): void => {
        console.error(`${signal}: stopping (grace ${running.config.shutdownGraceMs} ms)…`);
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        // Past TIDINGS_SHUTDOWN_GRACE + TIDINGS_SHUTDOWN_TIMEOUT the stop gives up (ShutdownTimeoutError, logged).
        running.stop().then(
          () => resolve(0),
          (error: unknown) => {
            console.error(`tidings: ${(error as Error).message}`);
            resolve(1);
          },
        );
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    const code =
      typeof error === 'object' && error !== null && 'code' in error
        ? ` (${String((error as { code: unknown }).code)})`
        : '';
    console.error(`tidings: ${(error as Error).message ?? String(error)}${code}`);
    return 1;
  }
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2), process.env);
  // A failed start may leave handles open (a half-opened engine): exit explicitly so supervisors see it.
  if (code !== 0) process.exit(code);
}

/** `tidings tail`: checks its options, then runs {@link runTail} until SIGINT/SIGTERM. Exit 2 for bad options. */
async function tailCommand(
  values: Readonly<Record<string, string | boolean | undefined>>,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const str = (name: string): string | undefined => (typeof values[name] === 'string' ? values[name] : undefined);
  const app = str('app');
  const token = env.TIDINGS_TOKEN ?? '';
  const outcome = str('outcome');
  const intervalMs = Number(str('interval') ?? 1000);
  const backlog = Number(str('backlog') ?? 10);
  const problem =
    app === undefined
      ? '--app is required'
      : token === ''
        ? 'TIDINGS_TOKEN must hold a Bearer token'
        : outcome !== undefined && outcome !== 'success' && outcome !== 'fail'
          ? '--outcome must be success or fail'
          : !Number.isInteger(intervalMs) || intervalMs < 100
            ? '--interval must be a whole number of ms, at least 100'
            : !Number.isInteger(backlog) || backlog < 0
              ? '--backlog must be a whole number'
              : null;
  if (problem !== null) {
    console.error(`tidings tail: ${problem}`);
    return 2;
  }
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await runTail({
      baseUrl: str('url') ?? env.TIDINGS_URL ?? 'http://127.0.0.1:8071',
      token,
      app: app!,
      endpoint: str('endpoint'),
      outcome: outcome as 'success' | 'fail' | undefined,
      intervalMs,
      backlog,
      out: (line) => console.log(line),
      signal: stop.signal,
    });
    return 0;
  } catch (error) {
    if (stop.signal.aborted) return 0;
    console.error(`tidings tail: ${(error as Error).message}`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
