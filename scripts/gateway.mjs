#!/usr/bin/env node
// `npm start`, `npm run demo` and `npm run gateway -- …` run this, as `exec node scripts/gateway.mjs
// <command> …`: it builds first when dist/ is not what src/ says (and says so), then runs the
// built CLI in this same process, so the signals npm passes on reach the gateway.
//
// Why `exec` and one process: npm runs a script as `sh -c '<script>'` and, on SIGINT or SIGTERM,
// passes the signal to that shell only. Debian's sh (dash) does not replace itself with the last
// command, so the signal killed the shell and the gateway, its child, was left running with the
// port. `exec` makes the shell become this process, and this process becomes the gateway; npm then
// waits for it to drain and exits with its status (test/package/npm-scripts.test.ts).
//
// Why the listener below: a terminal's Ctrl-C reaches npm and the gateway alike (one process
// group), and npm passes its copy on, so the gateway gets SIGINT twice within milliseconds. Its
// handler is `process.once`, and with no listener left node ends the process on the second one,
// in the middle of the drain. A repeat within a second is that copy and is dropped; a later one is
// a second Ctrl-C and stops the process at once, as it does a gateway run directly.
import { constants } from 'node:os';
import { buildIfNeeded } from './dist-fresh.mjs';

/** How long after a stop signal the same signal again is npm's copy of it. */
const COPY_WITHIN_MS = 1000;

const status = buildIfNeeded();
if (status !== 0) process.exit(status);

let stopSince = null;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    const exit = () => process.exit(128 + constants.signals[signal]);
    if (stopSince !== null) {
      if (Date.now() - stopSince >= COPY_WITHIN_MS) exit();
      return;
    }
    // Only this listener: the command has none of its own (yet), and the signal ends it as it would.
    if (process.listenerCount(signal) === 1) exit();
    stopSince = Date.now();
  });
}

const cli = new URL('../dist/src/cli.js', import.meta.url);
process.argv = [process.argv[0] ?? 'node', cli.pathname, ...process.argv.slice(2)];
await import(cli.href);
