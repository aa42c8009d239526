// The egress policy (docs/security.md): which addresses the server's own outgoing connections (tenant
// S3 endpoints, the language-model gateway, mesh peers) and the in-process hosted worker's scanners
// may reach. Only public unicast addresses are allowed, plus the operator's EGRESS_ALLOW ranges.
//
// The check is bound to the connection: a name is resolved once, every address is checked, and the
// socket connects to a checked address (the `lookup` of net/tls/http agents and undici's connector),
// so a DNS answer that changes between a check and the connect (rebinding) cannot slip through.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent as UndiciAgent, buildConnector } from 'undici';

export type LookupAddress = { address: string; family: number };
/** Resolves a name to its addresses (default: the system resolver, as a connect would). */
export type EgressResolver = (host: string) => Promise<LookupAddress[]>;

/** A connection the policy refused. The message is for logs; tenants see their module's own text. */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';
  readonly range: string;
  constructor(host: string, range: string) {
    super(`Refusing to connect to ${host}: the address is in a range outgoing connections may not reach (${range})`);
    this.name = 'EgressRefusedError';
    this.range = range;
  }
}

/** What a hosted scan says when its target is internal (the same text whatever the range). */
export function egressRefusalMessage(host: string): string {
  return (
    `Not scanned: ${host.slice(0, 253)} resolves only to addresses the Rampart-hosted worker may not reach ` +
    '(loopback, private, link-local, metadata and other internal ranges). Scan it with a worker of your own.'
  );
}

export interface EgressPolicy {
  /** Null when the address may be reached, else the name of the range that refuses it. */
  refusal(address: string): string | null;
  /** Resolves a host (a name or any numeric spelling) to the addresses the policy allows. */
  resolve(host: string): Promise<string[]>;
  /** For net.connect / tls.connect / http agents: resolves and checks, never returns a refused address. */
  lookup: net.LookupFunction;
  /** The same policy with more allowed ranges (a super-admin's bypassed IP asset, for one scan). */
  withAllowed(cidrs: readonly string[]): EgressPolicy;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses CIDRs or single addresses ("10.0.0.0/8", "fd00::/8", "192.0.2.7"); throws on a bad entry. */
export function parseCidrs(list: readonly string[]): Range[] {
  return list.map((entry) => {
    const s = entry.trim();
    if (s.includes('/')) return ipaddr.parseCIDR(s);
    const a = ipaddr.parse(s);
    return [a, a.kind() === 'ipv4' ? 32 : 128];
  });
}

export function isCidrList(list: readonly string[]): boolean {
  try {
    parseCidrs(list);
    return true;
  } catch {
    return false;
  }
}

/**
 * The address an asset target names literally (a host, a bracketed IPv6 address, a URL's host; any
 * numeric spelling), normalized; null for a name.
 */
export function literalAddressOf(target: string): string | null {
  let host = target.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) {
    try {
      host = new URL(host).hostname;
    } catch {
      return null;
    }
  }
  host = host.replace(/^\[(.*)\]$/, '$1');
  return ipaddr.isValid(host) ? ipaddr.process(host).toString() : null;
}

/** Site-local IPv6 (deprecated, still routed internally by some networks); ipaddr.js calls it unicast. */
const SITE_LOCAL = ipaddr.parseCIDR('fec0::/10');

/** The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4), if any. */
function embeddedV4(a: ipaddr.IPv6, range: string): ipaddr.IPv4 | null {
  const b = a.toByteArray();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') return new ipaddr.IPv4(b.slice(12, 16));
  if (range === '6to4') return new ipaddr.IPv4(b.slice(2, 6));
  return null;
}

/** The range name that makes an address internal, or null for a public unicast address. */
export function internalRange(address: string): string | null {
  let a: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // ipaddr.parse also reads the numeric spellings (127.1, 0x7f000001, 2130706433, 0177.0.0.1).
    a = ipaddr.parse(address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, ''));
  } catch {
    return 'not an address';
  }
  const range = a.range();
  if (a.kind() === 'ipv4') return range === 'unicast' ? null : range;
  const v6 = a as ipaddr.IPv6;
  const inner = embeddedV4(v6, range);
  if (inner) {
    const innerRange = inner.range();
    return innerRange === 'unicast' ? null : `${range} ${innerRange}`;
  }
  if (v6.match(SITE_LOCAL)) return 'siteLocal';
  return range === 'unicast' ? null : range;
}

const systemResolver: EgressResolver = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/** A resolver asking given DNS servers (A and AAAA); tests point it at their own DNS server. */
export function dnsServerResolver(servers: readonly string[]): EgressResolver {
  const r = new dns.promises.Resolver({ timeout: 2000, tries: 1 });
  r.setServers([...servers]);
  return async (host) => {
    if (net.isIP(host)) return [{ address: host, family: net.isIP(host) }];
    const [v4, v6] = await Promise.all([r.resolve4(host).catch(() => []), r.resolve6(host).catch(() => [])]);
    const all = [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
    if (all.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return all;
  };
}

export function createEgressPolicy(opts: { allow?: readonly string[]; resolver?: EgressResolver } = {}): EgressPolicy {
  const allowed = parseCidrs(opts.allow ?? []);
  const resolver = opts.resolver ?? systemResolver;

  const refusal = (address: string): string | null => {
    const range = internalRange(address);
    if (range === null) return null;
    let a: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      a = ipaddr.process(address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, ''));
    } catch {
      return range;
    }
    for (const [net0, bits] of allowed) {
      if (a.kind() === net0.kind() && a.match(net0, bits)) return null;
      // An allowed IPv4 range also allows its IPv4-mapped IPv6 spelling (::ffff:127.0.0.1).
      if (a.kind() === 'ipv6' && net0.kind() === 'ipv4' && (a as ipaddr.IPv6).isIPv4MappedAddress()) {
        if ((a as ipaddr.IPv6).toIPv4Address().match(net0, bits)) return null;
      }
    }
    return range;
  };

  const resolveChecked = async (host: string): Promise<LookupAddress[]> => {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    // Numeric spellings are addresses, not names: never ask DNS about them.
    const literal = ipaddr.isValid(bare) ? ipaddr.process(bare).toString() : null;
    const found = literal ? [{ address: literal, family: net.isIP(literal) }] : await resolver(bare);
    const ok = found.filter((f) => refusal(f.address) === null);
    if (ok.length === 0) throw new EgressRefusedError(host, refusal(found[0]?.address ?? '') ?? 'none');
    return ok;
  };

  const lookup = ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    resolveChecked(hostname).then(
      (ok) => {
        const wanted =
          options?.family === 4 || options?.family === 6 ? ok.filter((a) => a.family === options.family) : ok;
        if (wanted.length === 0) return callback(new EgressRefusedError(hostname, 'no address of that family'));
        if (options?.all) callback(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: unknown) => callback(err),
    );
  }) as unknown as net.LookupFunction;

  return {
    refusal,
    resolve: async (host) => (await resolveChecked(host)).map((a) => a.address),
    lookup,
    withAllowed: (cidrs) => createEgressPolicy({ allow: [...(opts.allow ?? []), ...cidrs], resolver }),
  };
}

/**
 * Connect options that route every connection through the policy. net.connect skips `lookup` for
 * an IP literal, so a literal is turned into a name-less check first (connect to it only if allowed).
 */
export function guardedConnectOptions<T extends { host?: string | null | undefined }>(
  policy: EgressPolicy,
  options: T,
): T & { lookup: net.LookupFunction } {
  const host = options.host ?? 'localhost';
  if (net.isIP(host.replace(/^\[(.*)\]$/, '$1'))) {
    const range = policy.refusal(host);
    if (range !== null) throw new EgressRefusedError(host, range);
  }
  return { ...options, lookup: policy.lookup };
}

/** net.connect through the policy; a refusal surfaces as the socket's 'error'. */
export function guardedNetConnect(policy: EgressPolicy, options: net.NetConnectOpts): net.Socket {
  try {
    return net.connect(guardedConnectOptions(policy, options as { host?: string }) as net.NetConnectOpts);
  } catch (err) {
    const s = new net.Socket();
    process.nextTick(() => s.destroy(err as Error));
    return s;
  }
}

/** Node http/https agents whose every connection goes through the policy (the S3 SDK, scanners). */
export function guardedAgents(
  policy: EgressPolicy,
  opts: { http?: http.AgentOptions; https?: https.AgentOptions } = {},
): { http: http.Agent; https: https.Agent } {
  const wrap = <A extends http.Agent>(agent: A): A => {
    const create = (agent as unknown as { createConnection: (o: object, cb: unknown) => unknown }).createConnection;
    (agent as unknown as { createConnection: unknown }).createConnection = function (
      this: A,
      o: { host?: string },
      cb: (err: Error | null, s?: net.Socket) => void,
    ) {
      let guarded: object;
      try {
        guarded = guardedConnectOptions(policy, o);
      } catch (err) {
        // Node's agent takes a synchronous throw as a request error.
        process.nextTick(() => cb(err as Error));
        return undefined;
      }
      return create.call(this, guarded, cb);
    };
    return agent;
  };
  return { http: wrap(new http.Agent(opts.http)), https: wrap(new https.Agent(opts.https)) };
}

/** An undici dispatcher for fetch whose connections go through the policy (LLM, mesh, registries). */
export function guardedDispatcher(policy: EgressPolicy, tls: { rejectUnauthorized?: boolean } = {}): UndiciAgent {
  const base = buildConnector({ ...tls, lookup: policy.lookup } as buildConnector.BuildOptions);
  return new UndiciAgent({
    connect: (options, callback) => {
      const range = net.isIP(options.hostname.replace(/^\[(.*)\]$/, '$1')) ? policy.refusal(options.hostname) : null;
      if (range !== null) return callback(new EgressRefusedError(options.hostname, range), null);
      return base(options, callback);
    },
  });
}

/** fetch with the policy's dispatcher. */
export function guardedFetch(policy: EgressPolicy, base: typeof fetch = globalThis.fetch): typeof fetch {
  const dispatcher = guardedDispatcher(policy);
  return ((input: RequestInfo | URL, init?: RequestInit) =>
    base(input, { ...init, dispatcher } as RequestInit)) as typeof fetch;
}

/** True when an error (or its cause chain) is a policy refusal. */
export function isEgressRefusal(e: unknown): boolean {
  for (let cur = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++)
    if (cur instanceof EgressRefusedError || (cur as { code?: string }).code === 'EGRESS_REFUSED') return true;
  return false;
}
