#!/usr/bin/env node
// The `tidings` command (package.json "bin"). Runs on the Node.js that npm pins (>= 22.18, type stripping).
import { main } from '../src/main/cli.ts';

process.exitCode = await main(process.argv.slice(2), process.env);
