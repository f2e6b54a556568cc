import { access } from 'node:fs/promises';
import { Command } from 'commander';
import { ConfigError, loadConfig, SETTINGS, type Config } from '../config/config.ts';
import { effectiveSettings } from '../config/effective-settings.ts';
import { loadEnvFile } from './env-file.ts';
import { CliError, ExitCode, printJson, printLine, table, type CliIo } from './io.ts';

/**
 * `tidings config show`: the effective configuration of a process started with this environment, each setting
 * with where its value comes from — `env` (the environment), `file` (an `--env-file`, or the embedded engine's
 * generated key file), `default` (src/config/config.ts) or `unset` — secrets and URL passwords masked by the
 * rule the console's settings page uses (src/config/effective-settings.ts).
 */

/** Where one setting's value comes from. */
export type SettingSource = 'env' | 'file' | 'default' | 'unset';

/** One row of `config show`. */
export interface ShownSetting {
  readonly env: string;
  readonly value: string | null;
  readonly source: SettingSource;
  /** The file, for source `file`. */
  readonly file?: string;
  readonly secret: boolean;
}

/** The path of the key file the embedded engine generates (src/main/encryption.ts), for a configuration. */
export type KeyFileOf = (config: Config) => string;

/** Every setting with its masked value and its source. */
export async function shownSettings(
  config: Config,
  sources: Readonly<Record<string, 'env' | 'file'>>,
  envFile: string | undefined,
  keyFileOf: KeyFileOf,
): Promise<ShownSetting[]> {
  const keyFile = keyFileOf(config);
  const generatedKey =
    config.databaseUrl === undefined &&
    config.encryptionKeys === undefined &&
    (await access(keyFile).then(
      () => true,
      () => false,
    ));
  return effectiveSettings(config).data.map((s): ShownSetting => {
    const given = sources[s.env];
    if (given === 'env') return { env: s.env, value: s.value, source: 'env', secret: s.secret };
    if (given === 'file') return { env: s.env, value: s.value, source: 'file', file: envFile!, secret: s.secret };
    if (s.env === SETTINGS.encryptionKeys.env && generatedKey)
      return { env: s.env, value: '(generated key ring)', source: 'file', file: keyFile, secret: true };
    return { env: s.env, value: s.value, source: s.defaultValue === null ? 'unset' : 'default', secret: s.secret };
  });
}

/** `tidings config show`. */
export function configCommand(io: CliIo, keyFileOf: KeyFileOf): Command {
  const config = new Command('config').description('the configuration of a process started here');
  config.addCommand(
    new Command('show')
      .description("every setting's effective value and where it comes from (env, file, default), secrets masked")
      .option('--env-file <path>', 'read settings from this dotenv file too (the environment wins)')
      .option('--changed', 'only the settings that do not come from their default')
      .option('--json', 'print JSON')
      .action(async (o: { envFile?: string; changed?: boolean; json?: boolean }) => {
        const env = await loadEnvFile(io.env, o.envFile);
        let parsed: Config;
        try {
          parsed = loadConfig(env.values);
        } catch (error) {
          if (error instanceof ConfigError) throw new CliError(ExitCode.usage, error.message);
          throw error;
        }
        const rows = (await shownSettings(parsed, env.sources, o.envFile, keyFileOf)).filter(
          (r) => o.changed !== true || (r.source !== 'default' && r.source !== 'unset'),
        );
        if (o.json === true) {
          printJson(io, { data: rows });
          return;
        }
        for (const line of table(
          ['VARIABLE', 'VALUE', 'SOURCE'],
          rows.map((r) => [r.env, r.value ?? '-', r.file === undefined ? r.source : `${r.source} (${r.file})`]),
        ))
          printLine(io, line);
      }),
  );
  return config;
}
