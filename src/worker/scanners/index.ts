// The scanner kinds this worker build carries: their command-line faces (`rampart-worker scan`).
import { containerCli } from './container/cli.ts';
import { edgeCli } from './edge/cli.ts';
import { portCli } from './port/cli.ts';
import { templateCli } from './template/cli.ts';
import type { LocalScanCli } from './types.ts';
import { webappCli } from './webapp/cli.ts';

export const LOCAL_SCAN_CLIS: readonly LocalScanCli[] = [portCli, templateCli, webappCli, edgeCli, containerCli];
