// The scanners a worker runs: every kind this build carries, with the worker's own settings.
// `rampart-worker run` and the server's embedded hosted workers both start from here.
import { createEdgeScanner, type EdgeScannerSettings } from './edge/index.ts';
import { createPortScanner, type PortScannerSettings } from './port/index.ts';
import type { Scanner } from './types.ts';
import { createWebappScanner, type WebappScannerSettings } from './webapp/index.ts';

export interface BuiltinScannerSettings {
  port?: PortScannerSettings;
  webapp?: WebappScannerSettings;
  edge?: EdgeScannerSettings;
}

export function builtinScanners(s: BuiltinScannerSettings = {}): Scanner[] {
  return [createPortScanner(s.port), createWebappScanner(s.webapp), createEdgeScanner(s.edge)];
}
