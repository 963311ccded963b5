#!/usr/bin/env node
// The `orrery` command (bin of the package; `node --import tsx runtime/cli/main.ts` in the source tree).
import { processIo } from './io.ts';
import { runCli } from './run.ts';

// A reader that stops reading (`orrery status | head -5`) closes the pipe: that is the end of the
// output the user wanted, not an error to print a stack trace for.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

process.exitCode = await runCli(process.argv.slice(2), processIo);
