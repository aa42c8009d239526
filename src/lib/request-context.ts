// Who and where a request came from, available to code that runs deep inside libraries (Better
// Auth hooks) without threading it through every call.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestInfo {
  requestId: string;
  ip: string;
  userAgent: string | null;
}

const storage = new AsyncLocalStorage<RequestInfo>();

export const runWithRequestInfo = <T>(info: RequestInfo, fn: () => T): T => storage.run(info, fn);
export const currentRequestInfo = (): RequestInfo | undefined => storage.getStore();
