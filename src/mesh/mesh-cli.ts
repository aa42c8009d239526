// `npm run mesh -- <command>`: the service mesh from a shell, without a database.
//   call <peer> <flow> [payload-json] [--request-id ID]   one signed logical call (normal retries)
//   probe <peer>                                          unsigned POST {} to the peer's transport URL
//   peers                                                 configured peers, presence only
// Attempts are printed to stderr instead of being written to svc_outbound_events (docs/mesh.md).
import { parseArgs } from 'node:util';
import { systemClock } from '../lib/clock.ts';
import { ConfigError, loadConfig, peerEnvSuffix, type Config } from '../lib/config.ts';
import { type MeshCallResult, type OutboundAttempt, createMeshClient, redactUrl } from './mesh-client.ts';
import { createPeerRegistry, describePeer, resolveTransportUrl, type Peer } from './mesh-peers.ts';

export const USAGE = `usage: npm run mesh -- call <peer> <flow> [payload-json] [--request-id ID]
       npm run mesh -- probe <peer>
       npm run mesh -- peers

  call   one signed call to <peer> with the client's normal retries; payload-json is a JSON
         object (default {}); --request-id sets x-svc-request-id (default: a new UUID)
  probe  unsigned POST {} to the peer's dispatch URL: is the route deployed, and does it refuse
         unsigned calls?
  peers  the configured peers: URL form, secret presence and inbound flows (never a secret value)

Attempts made from this CLI are printed to stderr, not stored in svc_outbound_events.
Exit codes: 0 success, 1 the call or probe failed, 64 usage error, 78 configuration error.`;

export interface MeshCliDeps {
  config: Config;
  out(line: string): void;
  err(line: string): void;
  fetch?: typeof fetch;
}

/** Same rule as the dispatch route (1–200 of letters, digits and . _ : -), so a Rampart peer accepts it. */
const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,200}$/;
const PROBE_TIMEOUT_MS = 10_000;
const EX_USAGE = 64;
const EX_CONFIG = 78;

class UsageError extends Error {}

function isJsonMedia(media: string): boolean {
  return media === 'application/json' || /^application\/[^/]+\+json$/.test(media);
}

/** URL as printed (see redactUrl). */
const printableUrl = (raw: string): string => redactUrl(raw) || '(invalid URL)';

function causeOf(e: unknown): string {
  const cause = (e as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError'))
    return `no answer within ${PROBE_TIMEOUT_MS / 1000} s`;
  return e instanceof Error ? e.message : String(e);
}

function formatAttempt(a: OutboundAttempt): string {
  const cause =
    a.response && typeof a.response === 'object' && typeof (a.response as { cause?: unknown }).cause === 'string'
      ? ` (${(a.response as { cause: string }).cause})`
      : '';
  return `attempt ${a.attempt}: status ${a.status ?? '-'}, error ${a.error ?? '-'}${cause}, ${a.durationMs} ms`;
}

function pretty(body: unknown): string {
  if (typeof body === 'string') return body;
  return JSON.stringify(body ?? null, null, 2);
}

/** One line of advice for a failed call, from the error code the peer (or the client) gave. */
function callHint(r: MeshCallResult, peer: Peer, selfName: string): string | null {
  const to = `SVC_SECRET_TO_${peer.suffix}`;
  const theirs = `SVC_SECRET_FROM_${peerEnvSuffix(selfName)}`;
  if (r.routeNotDeployed)
    return `the peer answered ${r.status} with a non-JSON body (an HTML page?): its dispatch route is not deployed at this URL; this is not a live mesh leg`;
  if (r.status === 525)
    return '525 is an edge error page: the TLS handshake between the edge and the peer failed before its handler ran; transient, retry later, no secret change';
  if (r.status !== null && r.status >= 520 && r.status <= 527)
    return `${r.status} is an edge error page, not the peer's answer; retry later`;
  switch (r.error) {
    case 'network_error':
      return 'could not connect: check the URL, DNS, firewall, and that the peer is running';
    case 'timeout':
      return 'no complete answer within the per-attempt timeout (10 s)';
    case 'invalid_response':
      return 'the peer answered 2xx with JSON that does not parse';
    case 'missing_svc_headers':
    case 'missing_signature':
      return 'the signing headers did not reach the peer handler: a proxy in between may strip x-svc-* headers';
    case 'bad_timestamp':
      return 'the peer refused our timestamp format (we send ISO 8601 UTC ending in Z)';
    case 'stale_timestamp':
      return 'clock skew: this host and the peer differ by more than 5 minutes; fix NTP on both';
    case 'bad_signature':
      return `check that ${to} here holds the same value as the peer's inbound secret for us (${theirs} on a Rampart-style peer), that the peer knows us as "${selfName}" (SVC_SELF_NAME), and that the clocks agree`;
    case 'flow_not_allowed':
      return `the peer does not allow "${selfName}" to call this flow; ask its operator to add it to the allowlist`;
    case 'unknown_flow':
      return 'the peer does not know this flow';
    case 'flow_unavailable':
      return 'the peer knows the flow but has no handler for it yet';
    case 'idempotency_key_reuse':
      return 'this request id was already used with a different payload; use a new --request-id';
    case 'request_in_progress':
      return 'the first call with this request id is still running at the peer; retry later with the same --request-id';
    case 'handler_failed':
      return 'the peer handler failed; nothing was recorded there, and the same --request-id may be retried';
    default:
      if (r.status === 404)
        return (
          'no route at this URL: check SVC_PEER_URL_' +
          peer.suffix +
          ' (a URL with a path other than the dispatch path is used as the complete transport URL)'
        );
      if (r.status !== null && r.status >= 300 && r.status < 400)
        return `redirect${r.headers.location ? ` to ${printableUrl(r.headers.location)}` : ''}: signed calls do not follow redirects; configure the final URL`;
      return null;
  }
}

async function callCommand(args: string[], requestId: string | undefined, deps: MeshCliDeps): Promise<number> {
  const [peerName, flow, payloadText, ...extra] = args;
  if (!peerName || !flow) throw new UsageError('call needs <peer> and <flow>');
  if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}" (quote the payload JSON as one argument)`);
  let payload: Record<string, unknown> = {};
  if (payloadText !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payloadText);
    } catch (e) {
      throw new UsageError(`payload-json is not valid JSON: ${(e as Error).message}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new UsageError('payload-json must be a JSON object, e.g. \'{"nonce":"abc"}\'');
    payload = parsed as Record<string, unknown>;
  }
  if (requestId !== undefined && !REQUEST_ID_RE.test(requestId))
    throw new UsageError('--request-id must be 1 to 200 characters of letters, digits and . _ : -');

  const { config } = deps;
  const peers = createPeerRegistry(config);
  const peer = peers.byName(peerName);
  if (!peer) throw new UsageError(unknownPeer(peerName, peers.list()));
  if (!peer.transportUrl || !peer.secretTo) {
    deps.err(
      `peer ${peer.name} cannot be called: ${!peer.transportUrl ? `SVC_PEER_URL_${peer.suffix} is not set` : `SVC_SECRET_TO_${peer.suffix} is not set`}`,
    );
    return EX_CONFIG;
  }

  const client = createMeshClient({
    selfName: config.SVC_SELF_NAME,
    peers,
    clock: systemClock,
    recordAttempt: async (a) => deps.err(formatAttempt(a)),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  deps.err(`calling ${peer.name} (${printableUrl(peer.transportUrl)}) flow ${flow} as ${config.SVC_SELF_NAME}`);
  const result = await client.call(peer.name, flow, payload, requestId !== undefined ? { requestId } : {});
  deps.out(`status: ${result.status ?? 'none (no HTTP answer)'}`);
  deps.out(`requestId: ${result.requestId}`);
  deps.out(`duration: ${result.durationMs} ms (${result.attempts} attempt${result.attempts === 1 ? '' : 's'})`);
  if (!result.ok) deps.out(`error: ${result.error ?? 'unknown'}`);
  deps.out(pretty(result.body));
  if (result.ok) return 0;
  const hint = callHint(result, peer, config.SVC_SELF_NAME);
  if (hint) deps.err(`hint: ${hint}`);
  return 1;
}

interface Verdict {
  live: boolean;
  text: string;
}

function probeVerdict(status: number, media: string, body: string, location: string | null): Verdict {
  const json = isJsonMedia(media);
  let code: string | null = null;
  if (json) {
    try {
      const parsed = JSON.parse(body) as { error?: unknown };
      if (typeof parsed?.error === 'string') code = parsed.error;
    } catch {
      code = null;
    }
  }
  if (media === 'text/html' || media === 'application/xhtml+xml')
    return { live: false, text: 'route not deployed: the answer is an HTML page' };
  if (json && status === 401)
    return {
      live: true,
      text: `dispatch route is live (refused the unsigned probe as it should)${code ? `: ${code}` : ''}`,
    };
  if (json && status >= 200 && status < 300)
    return { live: false, text: 'answered an unsigned call: the route does not check signatures!' };
  if (status === 525)
    return {
      live: false,
      text: 'edge error 525: the TLS handshake between the edge and the peer failed before any handler ran; transient, probe again (no secret change)',
    };
  if (status >= 520 && status <= 527)
    return {
      live: false,
      text: `edge error ${status}: the edge could not get an answer from the peer's origin; transient or an origin outage, probe again`,
    };
  if (status >= 300 && status < 400)
    return {
      live: false,
      text: `redirect (${status})${location ? ` to ${printableUrl(location)}` : ''}: signed calls do not follow redirects; configure the final URL`,
    };
  if (status === 404)
    return {
      live: false,
      text: `no route at this URL (404${code ? ` ${code}` : ''}): check the peer URL; a URL with another path is used as the complete transport URL`,
    };
  if (status >= 500)
    return {
      live: false,
      text: `server error ${status}${code ? ` (${code})` : ''}: the peer failed before refusing the probe`,
    };
  if (status === 401)
    return {
      live: false,
      text: `401 without JSON (${media || 'no content type'}): something in front of the peer (a gateway or basic auth) refused the probe, not a dispatch route`,
    };
  if (status >= 200 && status < 300)
    return { live: false, text: `route not deployed: answered ${status} with ${media || 'no content type'}, not JSON` };
  if (json)
    return {
      live: false,
      text: `answered ${status}${code ? ` ${code}` : ''} instead of 401: a JSON endpoint, but not one that refuses unsigned calls like a dispatch route`,
    };
  return { live: false, text: `unexpected answer: ${status} with ${media || 'no content type'}` };
}

async function probeCommand(args: string[], deps: MeshCliDeps): Promise<number> {
  const [peerName, ...extra] = args;
  if (!peerName) throw new UsageError('probe needs <peer>');
  if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const peers = createPeerRegistry(deps.config);
  const peer = peers.byName(peerName);
  if (!peer) throw new UsageError(unknownPeer(peerName, peers.list()));
  if (!peer.url) {
    deps.err(`peer ${peer.name} cannot be probed: SVC_PEER_URL_${peer.suffix} is not set`);
    return EX_CONFIG;
  }
  const url = resolveTransportUrl(peer.url);
  const doFetch = deps.fetch ?? fetch;
  deps.out(`url: ${printableUrl(url)}`);
  const started = performance.now();
  let status: number;
  let contentType: string | null;
  let text: string;
  let location: string | null;
  try {
    const res = await doFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      redirect: 'manual',
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    text = await res.text();
    status = res.status;
    contentType = res.headers.get('content-type');
    location = res.headers.get('location');
  } catch (e) {
    deps.out(`duration: ${Math.round(performance.now() - started)} ms`);
    deps.out(`verdict: unreachable (${causeOf(e)})`);
    return 1;
  }
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const verdict = probeVerdict(status, media, text, location);
  deps.out(`status: ${status}`);
  deps.out(`content-type: ${contentType ?? '(none)'}`);
  deps.out(`duration: ${Math.round(performance.now() - started)} ms`);
  deps.out(`verdict: ${verdict.text}`);
  return verdict.live ? 0 : 1;
}

function peersCommand(args: string[], deps: MeshCliDeps): number {
  if (args.length) throw new UsageError(`unexpected argument "${args[0]}"`);
  const { config } = deps;
  const peers = createPeerRegistry(config).list();
  const mgmt = config.SVC_MANAGEMENT_PEER?.trim();
  const bid = config.SVC_BID_PEER?.trim();
  deps.out(`self: ${config.SVC_SELF_NAME} (our x-svc-caller)`);
  deps.out(`management peer: ${mgmt ?? '(unset)'}; bid peer: ${bid ?? '(unset)'}`);
  for (const [label, name] of [
    ['SVC_MANAGEMENT_PEER', mgmt],
    ['SVC_BID_PEER', bid],
  ] as const) {
    if (name && !peers.some((p) => p.suffix === peerEnvSuffix(name)))
      deps.err(
        `warning: ${label}=${name} names no configured peer (no SVC_PEER_URL_${peerEnvSuffix(name)} or SVC_SECRET_*_${peerEnvSuffix(name)})`,
      );
  }
  if (!peers.length) {
    deps.out('no peers configured (set SVC_PEER_URL_<PEER>, SVC_SECRET_TO_<PEER>, SVC_SECRET_FROM_<PEER>)');
    return 0;
  }
  const rows = peers.map((p) => {
    const v = describePeer(p);
    const roles = [
      mgmt && peerEnvSuffix(mgmt) === p.suffix ? 'management' : null,
      bid && peerEnvSuffix(bid) === p.suffix ? 'bid' : null,
    ]
      .filter(Boolean)
      .join(',');
    return [
      v.name,
      p.suffix,
      v.hasUrl ? (v.urlForm ?? 'invalid') : 'unset',
      v.secretToPresent ? 'set' : 'unset',
      v.secretFromPresent ? 'set' : 'unset',
      v.flows.join(',') || '(none)',
      roles || '-',
    ];
  });
  const header = ['PEER', 'ENV SUFFIX', 'URL', 'SECRET_TO', 'SECRET_FROM', 'INBOUND FLOWS', 'ROLE'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  deps.out(line(header));
  for (const r of rows) deps.out(line(r));
  return 0;
}

function unknownPeer(name: string, peers: Peer[]): string {
  const known = peers.map((p) => p.name).join(', ');
  return `unknown peer "${name}" (configured: ${known || 'none'}; a peer is configured by SVC_PEER_URL_${peerEnvSuffix(name)} or SVC_SECRET_*_${peerEnvSuffix(name)})`;
}

/** Runs one mesh command. Returns the process exit code. */
export async function runMeshCli(argv: string[], deps: MeshCliDeps): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({
        args: argv,
        allowPositionals: true,
        strict: true,
        options: { 'request-id': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      });
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const [command, ...rest] = parsed.positionals;
    if (parsed.values.help || command === 'help') {
      deps.out(USAGE);
      return 0;
    }
    const requestId = parsed.values['request-id'];
    if (requestId !== undefined && command !== 'call') throw new UsageError('--request-id applies to call only');
    switch (command) {
      case 'call':
        return await callCommand(rest, requestId, deps);
      case 'probe':
        return await probeCommand(rest, deps);
      case 'peers':
        return peersCommand(rest, deps);
      case undefined:
        throw new UsageError('no command given');
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    deps.err(e.message);
    deps.err(USAGE);
    return EX_USAGE;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let config: Config | null = null;
  try {
    config = loadConfig();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(e.message);
    process.exitCode = EX_CONFIG;
  }
  if (config)
    process.exitCode = await runMeshCli(process.argv.slice(2), {
      config,
      out: (l) => console.log(l),
      err: (l) => console.error(l),
    });
}
