#!/usr/bin/env node
// The `tidings` command (package.json "bin"). Runs on the Node.js that npm pins (>= 22.18, type stripping).
import { main } from '../src/main/cli.ts';

const code = await main(process.argv.slice(2), process.env);
if (code !== 0) process.exit(code);
