#!/usr/bin/env node
/** The `callisto` binary (package.json `bin`). */
import { runCli } from './run-cli.js';

void runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
  (code) => {
    process.exitCode = code;
    // Everything the command opened is closed by now; a client library's leftover timer (ioredis keeps
    // a 2 s one after closing a connection that never opened) must not hold a finished command.
    setTimeout(() => process.exit(code), 300).unref();
  },
);
