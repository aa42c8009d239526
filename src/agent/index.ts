// The worker as a library: what the server's embedded hosted worker (and tests) use.
export {
  createAgent,
  createHostedAgent,
  pinoAgentLogger,
  type Agent,
  type AgentClient,
  type AgentLogger,
  type AgentOptions,
  type AgentStats,
  type HostedAgentOptions,
} from './agent.ts';
export { createWorkerClient, enrollWorker, type Lease, type WorkerClient, type WorkerClientConfig } from './client.ts';
export { signBody } from '../lib/worker-wire.ts';
export { WorkerApiError, WorkerNetworkError, isLeaseGone } from './errors.ts';
export { writeNativeReport, type WrittenReport } from './report.ts';
export { createPortScanner, scanPorts, type PortScannerSettings } from './scanners/port/index.ts';
export { builtinScanners, type BuiltinScannerSettings } from './scanners/builtin.ts';
export { ScannerError, type Scanner, type ScanTask, type ScanOutput } from './scanners/types.ts';
export { WORKER_VERSION } from './version.ts';
