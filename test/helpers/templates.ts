// Template engine tests: a template from YAML (failing the test with the validator's errors), a
// run of templates against a base URL through the scanner's scoped HTTP client, and a loopback
// HTTP target whose teardown never waits for a connection a test left open.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createScopedHttp, sameOrigin } from '../../src/agent/scanners/http/scoped-http.ts';
import { runTemplates, validateTemplate, type Template } from '../../src/agent/scanners/template/index.ts';

export function validTemplate(yaml: string): Template {
  const v = validateTemplate(yaml);
  if (!v.ok) throw new Error(JSON.stringify(v.errors));
  return v.template;
}

/** Runs templates against `base` (requests limited to its origin), as a scan would. */
export async function runTemplatesAt(base: string, templates: Template[], o: { timeoutMs?: number } = {}) {
  const signal = new AbortController().signal;
  const client = createScopedHttp({ inScope: sameOrigin(base), signal, ratePerSecond: 1000 });
  try {
    return await runTemplates({
      baseUrl: new URL(base),
      templates,
      http: client,
      signal,
      ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
    });
  } finally {
    client.close();
  }
}

export interface HttpTarget {
  base: string;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 answering with `handler`. */
export async function listenHttp(handler: http.RequestListener): Promise<HttpTarget> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
