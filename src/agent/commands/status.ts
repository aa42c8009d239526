// `rampart-worker status`: the config (without token or secret), whether the server answers, and a
// signed heartbeat: the worker id the server knows, its time, and this machine's clock skew (a
// skew beyond 5 minutes makes every signed request fail as expired).
import { parseArgs } from 'node:util';
import { apiUrl, createWorkerClient } from '../client.ts';
import { configSummary, defaultConfigPath, readConfig } from '../config.ts';
import { describeError } from '../errors.ts';
import { WORKER_VERSION } from '../version.ts';
import { EXIT, exitCodeOf, type CliIo } from './common.ts';

export const STATUS_HELP = `Usage: rampart-worker status [--json] [--config PATH]

Shows the worker's config (without secrets), checks that the server answers, and sends a signed
heartbeat (worker id, server time, clock skew).
`;

export async function statusCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { json: { type: 'boolean' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.stdout.write(STATUS_HELP);
    return EXIT.ok;
  }
  const path = values.config ?? defaultConfigPath(io.env);
  const config = await readConfig(path);
  const out: Record<string, unknown> = { config: { path, ...configSummary(config) }, version: WORKER_VERSION };

  let reachable: { ok: boolean; status?: number; error?: string };
  try {
    const res = await fetch(apiUrl(config.serverUrl, '/healthz'), {
      signal: AbortSignal.any([io.signal, AbortSignal.timeout(10_000)]),
    });
    await res.arrayBuffer().catch(() => undefined);
    reachable = { ok: res.ok, status: res.status };
  } catch (e) {
    reachable = { ok: false, error: describeError(e) };
  }
  out.server = reachable;

  let code: number = EXIT.ok;
  const client = createWorkerClient({
    serverUrl: config.serverUrl,
    token: config.token,
    signingSecret: io.env.RAMPART_WORKER_SECRET?.trim() || config.signingSecret,
    userAgent: `rampart-worker/${WORKER_VERSION}`,
    retry: { attempts: 1 },
    timeoutMs: 10_000,
  });
  const sent = Date.now();
  try {
    const hb = await client.heartbeat([], { version: WORKER_VERSION, signal: io.signal });
    const received = Date.now();
    // The server's clock read roughly halfway through the round trip.
    const skewMs = Date.parse(hb.serverTime) - Math.round((sent + received) / 2);
    out.heartbeat = {
      ok: true,
      workerId: hb.workerId,
      serverTime: hb.serverTime,
      clockSkewMs: skewMs,
      roundTripMs: received - sent,
    };
    if (hb.workerId !== config.workerId)
      out.warning = `The server knows this token as worker ${hb.workerId}, the config says ${config.workerId}`;
    if (Math.abs(skewMs) > 60_000)
      out.warning = `This machine's clock is ${Math.round(skewMs / 1000)} s off the server's; beyond 300 s every request fails`;
  } catch (e) {
    out.heartbeat = { ok: false, error: describeError(e) };
    code = exitCodeOf(e);
  }

  if (values.json) {
    io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return code;
  }
  const c = out.config as Record<string, string>;
  const hb = out.heartbeat as Record<string, unknown>;
  const lines = [
    `Config:     ${c.path}`,
    `Server:     ${c.serverUrl} (${reachable.ok ? `reachable, HTTP ${reachable.status}` : `not reachable${reachable.status ? `: HTTP ${reachable.status}` : reachable.error ? `: ${reachable.error}` : ''}`})`,
    `Worker:     ${c.name} ${c.workerId} (tenant ${c.tenantId}, enrolled ${c.enrolledAt})`,
    `Version:    ${WORKER_VERSION}`,
    hb.ok
      ? `Heartbeat:  accepted; worker ${String(hb.workerId)}, server time ${String(hb.serverTime)}, clock skew ${((hb.clockSkewMs as number) / 1000).toFixed(1)} s`
      : `Heartbeat:  failed: ${String(hb.error)}`,
  ];
  if (out.warning) lines.push(`Warning:    ${String(out.warning)}`);
  io.stdout.write(`${lines.join('\n')}\n`);
  return code;
}
