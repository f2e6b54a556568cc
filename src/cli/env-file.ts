import { readFile } from 'node:fs/promises';
import { parseEnv } from 'node:util';
import { CliError, ExitCode } from './io.ts';

/** Where a variable's value came from. */
export type VariableSource = 'env' | 'file';

/** The environment with an env file's variables under it. */
export interface LoadedEnv {
  readonly values: Readonly<Record<string, string | undefined>>;
  /** Source of each variable that has a non-empty value. */
  readonly sources: Readonly<Record<string, VariableSource>>;
}

/**
 * The environment, plus the variables of a dotenv file (`--env-file`, parsed by Node's `util.parseEnv`, as
 * `node --env-file` and Docker Compose's `.env` read them) where the environment has none: the environment wins,
 * as with `node --env-file`.
 * @throws CliError usage when the file cannot be read
 */
export async function loadEnvFile(
  env: Readonly<Record<string, string | undefined>>,
  path: string | undefined,
): Promise<LoadedEnv> {
  const sources: Record<string, VariableSource> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && value !== '') sources[name] = 'env';
  if (path === undefined) return { values: env, sources };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CliError(
      ExitCode.usage,
      `--env-file: cannot read ${path} (${(error as { code?: string }).code ?? String(error)})`,
    );
  }
  const values: Record<string, string | undefined> = { ...env };
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (sources[name] === 'env' || value === '') continue;
    values[name] = value;
    sources[name] = 'file';
  }
  return { values, sources };
}
