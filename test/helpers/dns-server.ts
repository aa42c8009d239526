// A real DNS server on loopback (UDP) for ownership-proof tests. Each name answers as configured:
// TXT records (a record may be split into several character-strings), addresses (A and AAAA, for
// the egress policy's tests), no data, NXDOMAIN, SERVFAIL, or silence (a timeout).
import dns2 from 'dns2';

export type ZoneEntry =
  { txt: (string | string[])[] } | { a?: string[]; aaaa?: string[] } | 'nodata' | 'nxdomain' | 'servfail' | 'timeout';

export interface TestDnsServer {
  address: string; // "127.0.0.1:<port>" for DNS_RESOLVERS
  zone: Map<string, ZoneEntry>;
  queries: string[];
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const { Packet } = dns2;
  const zone = new Map<string, ZoneEntry>();
  const queries: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle(request, send) {
      const response = Packet.createResponseFromRequest(request);
      const question = request.questions[0];
      const name = (question?.name ?? '').toLowerCase();
      queries.push(name);
      const entry = zone.get(name) ?? 'nxdomain';
      if (entry === 'timeout') return; // never answer
      if (entry === 'servfail') response.header.rcode = 2;
      else if (entry === 'nxdomain') response.header.rcode = 3;
      else if (entry !== 'nodata' && !('txt' in entry)) {
        const type = question?.type;
        if (type === Packet.TYPE.A)
          for (const address of entry.a ?? [])
            response.answers.push({ name, type, class: Packet.CLASS.IN, ttl: 1, address } as never);
        if (type === Packet.TYPE.AAAA)
          for (const address of entry.aaaa ?? [])
            response.answers.push({ name, type, class: Packet.CLASS.IN, ttl: 1, address } as never);
      } else if (entry !== 'nodata') {
        for (const data of entry.txt)
          response.answers.push({ name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data } as never);
      }
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = (addresses as { udp: { port: number } }).udp.port;
  return { address: `127.0.0.1:${port}`, zone, queries, close: () => server.close() };
}
