// rampart-worker: enroll with a Rampart server, run scans it leases, check status, or scan
// locally. main() takes its I/O as arguments so tests run it in-process; the launcher
// (bin/rampart-worker.mjs, or the single-file executable) wires it to the process.
// Commands are loaded when they run (dynamic imports, which the bundle keeps lazy): `--help` and
// `--version` evaluate nothing but this file, and a scan only the scanner it runs.
import { parseArgs } from 'node:util';
import { describeError } from './errors.ts';
import { EXIT, UsageError, exitCodeOf, type CliIo } from './commands/common.ts';
import { WORKER_VERSION } from './version.ts';

export const HELP = `rampart-worker ${WORKER_VERSION}: the Rampart scan worker

Usage: rampart-worker <command> [options]

Commands:
  enroll    enroll this machine with a one-time code and write the config file
  run       lease and run scans until stopped (SIGINT/SIGTERM stop gracefully)
  status    show the config, check the server, send a signed heartbeat
  scan      run one scan locally and print it (table, json, sarif)
  osv       import OSV advisories for the container scanner: rampart-worker osv import <path>
  help      show help for a command: rampart-worker help <command>

Options:
  --version   print the version
  --help      print this help

Exit codes: 0 ok, 1 failed, 2 usage error, 3 config missing or invalid, 4 refused by the
server, 5 server unreachable, 130 interrupted. See docs/worker-cli.md.
`;

interface Command {
  run: (args: string[], io: CliIo) => Promise<number>;
  help: () => Promise<string>;
}

const COMMANDS: Record<string, () => Promise<Command>> = {
  enroll: async () => {
    const m = await import('./commands/enroll.ts');
    return { run: m.enrollCommand, help: async () => m.ENROLL_HELP };
  },
  run: async () => {
    const m = await import('./commands/run.ts');
    return { run: m.runCommand, help: async () => m.RUN_HELP };
  },
  status: async () => {
    const m = await import('./commands/status.ts');
    return { run: m.statusCommand, help: async () => m.STATUS_HELP };
  },
  scan: async () => {
    const m = await import('./commands/scan.ts');
    return { run: m.scanCommand, help: m.scanHelp };
  },
  osv: async () => {
    const m = await import('./commands/osv.ts');
    return { run: m.osvCommand, help: async () => m.OSV_HELP };
  },
};
const isCommand = (name: string | undefined): boolean => name !== undefined && Object.hasOwn(COMMANDS, name);

/** Node's parseArgs errors (unknown option, missing value) are usage errors. */
function usageFromParseArgs(e: unknown): UsageError | null {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_') ? new UsageError((e as Error).message) : null;
}

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === undefined || first === '--help' || first === '-h') {
      io.stdout.write(HELP);
      return first === undefined ? EXIT.usage : EXIT.ok;
    }
    if (first === '--version' || first === '-v' || first === 'version') {
      io.stdout.write(`${WORKER_VERSION}\n`);
      return EXIT.ok;
    }
    if (first === 'help') {
      const topic = rest[0];
      if (!topic) io.stdout.write(HELP);
      else if (isCommand(topic)) io.stdout.write(await (await COMMANDS[topic]!()).help());
      else
        throw new UsageError(`No such command ${JSON.stringify(topic)}; commands: ${Object.keys(COMMANDS).join(', ')}`);
      return EXIT.ok;
    }
    if (!isCommand(first)) {
      if (first.startsWith('-')) parseArgs({ args: [first], options: {}, strict: true });
      throw new UsageError(`Unknown command ${JSON.stringify(first)}; commands: ${Object.keys(COMMANDS).join(', ')}`);
    }
    const command = await COMMANDS[first]!();
    return await command.run(rest, io);
  } catch (err) {
    const e = usageFromParseArgs(err) ?? err;
    const code = exitCodeOf(e);
    io.stderr.write(`rampart-worker: ${describeError(e)}\n`);
    if (code === EXIT.usage)
      io.stderr.write(`Run \`rampart-worker ${isCommand(first) ? `${first} ` : ''}--help\` for usage.\n`);
    return code;
  }
}

/** Runs the CLI in this process: signals abort the command (a second one exits at once). */
export async function runCli(argv = process.argv.slice(2)): Promise<never> {
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) process.exit(EXIT.interrupted);
    process.stderr.write(`\nrampart-worker: ${sig} received, stopping (again to force)\n`);
    controller.abort(Object.assign(new Error(`Stopped by ${sig}`), { name: 'AbortError' }));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const code = await main(argv, {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    signal: controller.signal,
  });
  // Let stdout drain before exiting (a pipe may still hold the JSON output).
  await new Promise<void>((resolve) =>
    process.stdout.writableNeedDrain ? process.stdout.once('drain', () => resolve()) : resolve(),
  );
  process.exit(code);
}
