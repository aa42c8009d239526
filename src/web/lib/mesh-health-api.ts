// Staff mesh tools (/api/v1/staff/mesh/health, /sweep, /self, /console/*): queries, the sweep's
// NDJSON stream reader, and the console call.
import { queryOptions } from '@tanstack/react-query';
import type { ConsolePeers, ConsoleSendResponse } from '../../staff/mesh-console-schemas.ts';
import type {
  HealthResponse,
  HealthWindow,
  PeerHealth,
  SweepLine,
  SweepResult,
} from '../../staff/mesh-health-schemas.ts';
import { api, ApiError, defaultMessageFor } from './api.ts';
import { queryClient, ME_KEY } from './query-client.ts';
import type { Me } from './types.ts';

export type { ConsolePeers, ConsoleSendResponse, HealthResponse, HealthWindow, PeerHealth, SweepLine, SweepResult };
export const HEALTH_WINDOW_OPTIONS: { value: HealthWindow; label: string }[] = [
  { value: '24h', label: 'Last 24 hours' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
];

export function isHealthWindow(value: unknown): value is HealthWindow {
  return value === '24h' || value === '7d' || value === '30d';
}

export const meshHealthKeys = {
  health: (window: HealthWindow) => ['staff', 'mesh-health', window] as const,
  self: ['staff', 'mesh-self'] as const,
  consolePeers: ['staff', 'mesh-console', 'peers'] as const,
};

export const meshHealthQuery = (window: HealthWindow) =>
  queryOptions({
    queryKey: meshHealthKeys.health(window),
    queryFn: ({ signal }) => api<HealthResponse>('/api/v1/staff/mesh/health', { query: { window }, signal }),
  });

/** SVC_SELF_NAME, the prefix of export file names (staff). */
export const meshSelfQuery = queryOptions({
  queryKey: meshHealthKeys.self,
  queryFn: ({ signal }) => api<{ selfName: string }>('/api/v1/staff/mesh/self', { signal }),
  staleTime: 10 * 60_000,
});

export const consolePeersQuery = queryOptions({
  queryKey: meshHealthKeys.consolePeers,
  queryFn: ({ signal }) => api<ConsolePeers>('/api/v1/staff/mesh/console/peers', { signal }),
});

export interface ConsoleSendInput {
  peer: string;
  flow: string;
  payload: Record<string, unknown>;
  requestId?: string;
}

export const sendConsoleCall = (body: ConsoleSendInput) =>
  api<ConsoleSendResponse>('/api/v1/staff/mesh/console/send', { method: 'POST', body });

/**
 * Runs the sweep: POST /api/v1/staff/mesh/health/sweep answers NDJSON, one JSON object per line
 * ({"type":"start"} · {"type":"result"} per peer as it arrives · {"type":"done"}); each line is
 * handed to onLine as soon as it is read. Errors before the stream (401, 403) throw ApiError.
 */
export async function runSweep(
  onLine: (line: SweepLine) => void,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<void> {
  const me = queryClient.getQueryData<Me | null>(ME_KEY);
  let response: Response;
  try {
    response = await fetch('/api/v1/staff/mesh/health/sweep', {
      method: 'POST',
      credentials: 'same-origin',
      headers: {
        'content-type': 'application/json',
        accept: 'application/x-ndjson',
        ...(me?.csrfToken ? { 'x-csrf-token': me.csrfToken } : {}),
      },
      body: JSON.stringify(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
      signal: opts.signal,
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'network_error', 'Cannot reach the Rampart server. Check your connection and try again.');
  }
  if (!response.ok || !response.body) {
    let body: { error?: string; message?: string } = {};
    try {
      body = (await response.json()) as typeof body;
    } catch {
      // not JSON
    }
    throw new ApiError(
      response.status,
      body.error ?? `http_${response.status}`,
      body.message ?? defaultMessageFor(response.status),
    );
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) onLine(JSON.parse(line) as SweepLine);
  }
  if (buffered.trim()) onLine(JSON.parse(buffered) as SweepLine);
}
