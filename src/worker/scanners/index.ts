// The scanner kinds this worker build carries: their command-line faces (`rampart-worker scan`).
import { portCli } from './port/cli.ts';
import type { LocalScanCli } from './types.ts';

export const LOCAL_SCAN_CLIS: readonly LocalScanCli[] = [portCli];
