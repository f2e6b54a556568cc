import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { newId } from '../domain/ids.ts';
import { InvalidSecretError, signatureHeadersFor, type SignatureHeaderSet } from '../domain/signing.ts';
import { seg } from './api-client.ts';
import { CliError, ExitCode, printJson, printLine, readAll, type CliIo } from './io.ts';
import { checkSignature, DEFAULT_TOLERANCE_S, parseHeaders, secretKey } from './signature-check.ts';
import { apiClient, wholeNumber, withApiOptions } from './options.ts';

interface SecretOptions {
  readonly secret?: string;
  readonly app?: string;
  readonly endpoint?: string;
  readonly url?: string;
  readonly token?: string;
  readonly timeout?: string;
  readonly json?: boolean;
}

/** Adds the ways to name the secret: `--secret`, `TIDINGS_WEBHOOK_SECRET`, or an endpoint's through the API. */
function withSecret(command: Command): Command {
  return withApiOptions(command)
    .option('--secret <whsec>', "the endpoint's signing secret (default: TIDINGS_WEBHOOK_SECRET)")
    .option('--app <app>', "with --endpoint: read the endpoint's secret through the API")
    .option('--endpoint <endpoint>', 'the endpoint whose secret signs (with --app)');
}

/** The key bytes of the secret the options name. @throws CliError usage (none, or malformed), as ApiClient */
async function keyOf(io: CliIo, o: SecretOptions): Promise<Buffer> {
  let secret = o.secret ?? io.env.TIDINGS_WEBHOOK_SECRET;
  if (secret === undefined || secret === '') {
    if (o.app === undefined || o.endpoint === undefined)
      throw new CliError(
        ExitCode.usage,
        'no secret: give --secret, set TIDINGS_WEBHOOK_SECRET, or name the endpoint with --app and --endpoint',
      );
    secret = (
      await apiClient(io, o).get<{ key: string }>(`/api/v1/app/${seg(o.app)}/endpoint/${seg(o.endpoint)}/secret`)
    ).key;
  }
  try {
    return secretKey(secret);
  } catch (error) {
    if (error instanceof InvalidSecretError)
      throw new CliError(ExitCode.usage, `the secret is malformed: ${error.message}`);
    throw error;
  }
}

/** A file's bytes, or stdin's for `-`. @throws CliError usage */
async function bytesOf(io: CliIo, path: string, what: string): Promise<Buffer> {
  if (path === '-') return readAll(io.stdin);
  try {
    return await readFile(path);
  } catch (error) {
    throw new CliError(
      ExitCode.usage,
      `${what}: cannot read ${path} (${(error as { code?: string }).code ?? String(error)})`,
    );
  }
}

/** `tidings verify <headers-file> <body-file>`. */
export function verifyCommand(io: CliIo): Command {
  return withSecret(
    new Command('verify')
      .description('check a captured request against an endpoint secret, and say why it fails')
      .argument('<headers-file>', 'the request\'s headers: "Name: value" lines as captured, or a JSON object')
      .argument('<body-file>', 'the raw request body (- = stdin)'),
  )
    .option(
      '--tolerance <seconds>',
      `largest age (or lead) of webhook-timestamp, s (default ${DEFAULT_TOLERANCE_S})`,
      wholeNumber(0),
    )
    .option('--at <unix-seconds>', 'verify as of this time instead of now (a request captured earlier)', wholeNumber(0))
    .action(async (headersFile: string, bodyFile: string, o: SecretOptions & { tolerance?: number; at?: number }) => {
      const headersText = (await bytesOf(io, headersFile, 'headers file')).toString('utf8');
      let headers: Record<string, string>;
      try {
        headers = parseHeaders(headersText);
      } catch (error) {
        throw new CliError(
          ExitCode.usage,
          `headers file: not JSON nor "Name: value" lines (${(error as Error).message})`,
        );
      }
      const body = await bytesOf(io, bodyFile, 'body file');
      const key = await keyOf(io, o);
      const verdict = checkSignature(
        headers,
        body,
        key,
        o.at ?? Math.floor(io.now() / 1000),
        o.tolerance ?? DEFAULT_TOLERANCE_S,
      );
      if (o.json === true) printJson(io, verdict);
      else printLine(io, verdict.message);
      if (!verdict.ok) throw new CliError(ExitCode.failure, `invalid: ${verdict.reason}`);
    });
}

/** `tidings sign [body-file]`: the signature headers of a body, for testing a receiver. */
export function signCommand(io: CliIo): Command {
  return withSecret(
    new Command('sign')
      .description('print the signature headers of a body, as Tidings would send them')
      .argument('[body-file]', 'the body to sign (- or absent = stdin)'),
  )
    .option('--id <msg-id>', 'the webhook-id (default: a new msg_ id)')
    .option('--timestamp <unix-seconds>', 'the webhook-timestamp (default: now)', wholeNumber(0))
    .addOption(new Option('--headers <set>', 'which header names').choices(['both', 'webhook', 'svix']).default('both'))
    .action(
      async (
        bodyFile: string | undefined,
        o: SecretOptions & { id?: string; timestamp?: number; headers: SignatureHeaderSet },
      ) => {
        const body = await bytesOf(io, bodyFile ?? '-', 'body file');
        const key = await keyOf(io, o);
        const id = o.id ?? newId('msg', io.now(), () => randomInt(2 ** 32) / 2 ** 32);
        const headers = signatureHeadersFor(o.headers, [key], id, o.timestamp ?? Math.floor(io.now() / 1000), body);
        if (o.json === true) printJson(io, headers);
        else for (const [name, value] of Object.entries(headers)) printLine(io, `${name}: ${value}`);
      },
    );
}
