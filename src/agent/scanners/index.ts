// The scanner kinds this worker build carries: their command-line faces (`rampart-worker scan`).
// Each is loaded when asked for, so a scan evaluates only its own scanner's code.
import type { LocalScanCli } from './types.ts';

const LOADERS = {
  port: async () => (await import('./port/cli.ts')).portCli,
  template: async () => (await import('./template/cli.ts')).templateCli,
  webapp: async () => (await import('./webapp/cli.ts')).webappCli,
  edge: async () => (await import('./edge/cli.ts')).edgeCli,
  container: async () => (await import('./container/cli.ts')).containerCli,
} satisfies Record<string, () => Promise<LocalScanCli>>;

/** Kinds `rampart-worker scan` can run locally, in the order the help lists them. */
export const LOCAL_SCAN_KINDS = Object.keys(LOADERS) as (keyof typeof LOADERS)[];

/** The command-line face of a kind, or null when this build has no such scanner. */
export function loadScanCli(kind: string): Promise<LocalScanCli> | null {
  return Object.hasOwn(LOADERS, kind) ? LOADERS[kind as keyof typeof LOADERS]() : null;
}

/** Every kind's command-line face (for the help text). */
export function loadScanClis(): Promise<LocalScanCli[]> {
  return Promise.all(LOCAL_SCAN_KINDS.map((k) => LOADERS[k]()));
}
