#!/usr/bin/env node
// The `tidings` command (package.json "bin"). Runs on the Node.js that npm pins (>= 22.18, type stripping).
// Node's compile cache (in the temporary folder; skipped where it cannot be written) keeps the modules compiled
// between runs, and the operator commands (docs/guides/cli.md) load without the server's modules: both make a
// command start in a fraction of the time.
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
const argv = process.argv.slice(2);
const { OPERATOR_COMMANDS } = await import('../src/cli/program.ts');
const code = OPERATOR_COMMANDS.has(argv[0] ?? '')
  ? await (await import('../src/main/operator.ts')).operatorCommand(argv, process.env)
  : await (await import('../src/main/cli.ts')).main(argv, process.env);
if (code !== 0) process.exit(code);
