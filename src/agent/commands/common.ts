// Shared by the CLI commands: the I/O they write to, exit codes, and usage errors.
import { WorkerApiError, WorkerNetworkError } from '../errors.ts';
import { ConfigError } from '../config.ts';

/** Exit codes (docs/worker-cli.md). */
export const EXIT = {
  ok: 0,
  /** The command failed (a scan error, an unexpected server answer). */
  failed: 1,
  /** Bad arguments or an unknown command or scanner kind. */
  usage: 2,
  /** No config file, or one that cannot be read. */
  config: 3,
  /** The server refused: invalid enrollment code, revoked token, wrong signing secret. */
  refused: 4,
  /** The server could not be reached. */
  unreachable: 5,
  /** Interrupted (Ctrl-C during a one-off scan). */
  interrupted: 130,
} as const;

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WriteStream | (NodeJS.WritableStream & { isTTY?: boolean; columns?: number });
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM by the launcher. */
  signal: AbortSignal;
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The exit code for an error that ended a command. */
export function exitCodeOf(e: unknown): number {
  if (e instanceof UsageError) return EXIT.usage;
  if (e instanceof ConfigError) return EXIT.config;
  if (e instanceof WorkerNetworkError) return EXIT.unreachable;
  if (e instanceof WorkerApiError && (e.status === 401 || e.status === 403)) return EXIT.refused;
  return EXIT.failed;
}

export function parseIntFlag(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`--${name} takes a whole number, not ${JSON.stringify(value)}`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`--${name} must be between ${min} and ${max}`);
  return n;
}
