import { Command, CommanderError } from 'commander';
import { configCommand, type KeyFileOf } from './config-show.ts';
import { doctorCommand, type GatherFacts } from './doctor.ts';
import { appsCommand, endpointsCommand } from './endpoints.ts';
import { CliError, EXIT_CODES_HELP, ExitCode, note, type CliIo } from './io.ts';
import { listenCommand } from './listen.ts';
import { attemptsCommand, deadLettersCommand, messagesCommand, timelineCommand } from './messages.ts';
import { publishCommand } from './publish.ts';
import { deadLetterReplayCommand, recoverCommand, replayMissingCommand } from './replays.ts';
import { signCommand, verifyCommand } from './signatures.ts';

/**
 * The operator commands of `tidings` (docs/guides/cli.md), on commander: the API clients (publish, apps,
 * endpoints, messages, attempts, timeline, dead-letters, replay, recover, replay-missing, listen), the
 * signature tools (verify, sign) and the host checks (doctor, config show). src/main/cli.ts mounts them
 * beside the process commands (serve, api, dispatcher, migrate, …).
 */

/** The first word of each operator command: src/main/cli.ts hands these to {@link runOperatorCommand}. */
export const OPERATOR_COMMANDS: ReadonlySet<string> = new Set([
  'publish',
  'apps',
  'endpoints',
  'messages',
  'attempts',
  'timeline',
  'dead-letters',
  'replay',
  'recover',
  'replay-missing',
  'listen',
  'verify',
  'sign',
  'doctor',
  'config',
]);

/** What the host commands need from the composition root (they read the database and the data folder). */
export interface HostHooks {
  readonly gatherDoctorFacts: GatherFacts;
  readonly keyFileOf: KeyFileOf;
}

/** The command tree; every command's output and errors go through `io`. */
export function buildProgram(io: CliIo, hooks: HostHooks): Command {
  const program = new Command('tidings')
    .description('Tidings operator commands (the process commands: tidings --help)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('afterAll', EXIT_CODES_HELP);
  for (const command of [
    publishCommand(io),
    appsCommand(io),
    endpointsCommand(io),
    messagesCommand(io),
    attemptsCommand(io),
    timelineCommand(io),
    deadLettersCommand(io),
    deadLetterReplayCommand(io),
    recoverCommand(io),
    replayMissingCommand(io),
    listenCommand(io),
    verifyCommand(io),
    signCommand(io),
    doctorCommand(io, hooks.gatherDoctorFacts),
    configCommand(io, hooks.keyFileOf),
  ])
    program.addCommand(command);
  // Subcommands added before these settings were made: apply them down the tree.
  const inherit = (c: Command): void => {
    for (const sub of c.commands) {
      sub.copyInheritedSettings(c);
      inherit(sub);
    }
  };
  inherit(program);
  return program;
}

/**
 * Runs one operator command line (argv without the program name). Never throws: the outcome is the exit code
 * (docs/guides/cli.md#exit-codes), and an error's message is written to stderr.
 */
export async function runOperatorCommand(argv: readonly string[], io: CliIo, hooks: HostHooks): Promise<number> {
  const program = buildProgram(io, hooks);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with exitCode 0; a usage error was already written by commander.
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    if (error instanceof CliError) {
      note(io, `tidings ${argv[0] ?? ''}: ${error.message}`);
      return error.exitCode;
    }
    note(io, `tidings ${argv[0] ?? ''}: ${(error as Error).message ?? String(error)}`);
    return ExitCode.failure;
  }
}
