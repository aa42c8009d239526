// The scanners a worker runs: every kind this build carries, with the worker's own settings.
// `rampart-worker run` and the server's embedded hosted workers both start from here.
import { createContainerScanner, type ContainerScannerSettings } from './container/index.ts';
import { createEdgeScanner, type EdgeScannerSettings } from './edge/index.ts';
import { createPortScanner, type PortScannerSettings } from './port/index.ts';
import { createTemplateScanner, type TemplateScannerSettings } from './template/index.ts';
import type { Scanner } from './types.ts';
import { createWebappScanner, type WebappScannerSettings } from './webapp/index.ts';

export interface BuiltinScannerSettings {
  port?: PortScannerSettings;
  template?: TemplateScannerSettings;
  webapp?: WebappScannerSettings;
  edge?: EdgeScannerSettings;
  /**
   * The container scanner runs only with an advisory database (osvDbPath): a worker without one
   * does not lease container scans, so they wait for a worker that can check advisories rather
   * than succeed with none checked (which would close every open vulnerability finding).
   */
  container?: ContainerScannerSettings;
}

export function builtinScanners(s: BuiltinScannerSettings = {}): Scanner[] {
  const scanners = [
    createPortScanner(s.port),
    createTemplateScanner(s.template),
    createWebappScanner(s.webapp),
    createEdgeScanner(s.edge),
  ];
  if (s.container?.osvDbPath) scanners.push(createContainerScanner(s.container));
  return scanners;
}
