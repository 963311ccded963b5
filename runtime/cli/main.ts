#!/usr/bin/env node
// The `orrery` command (bin of the package; `node --import tsx runtime/cli/main.ts` in the source tree).
import { processIo } from './io.ts';
import { runCli } from './run.ts';

process.exitCode = await runCli(process.argv.slice(2), processIo);
