// Out-of-band callbacks by DNS: the server answers the zone delegated to it (OOB_DNS_DOMAIN), so a
// target that only resolves `{{interactsh-url}}` (`<token>.<zone>`) is seen. Each question under the
// zone is recorded for the scan whose prefix starts its first label; A questions are answered with
// OOB_DNS_ANSWER (this server's public address) so an HTTP request to the name comes here too, other
// questions with no records. Questions outside the zone are refused. Nothing is trusted: anyone may
// send questions, and the service records only tokens of scans that are leased or running.
import dns2 from 'dns2';
import type { OobService } from './oob-service.ts';

export interface OobDnsServer {
  /** The UDP port it listens on (the configured one, or the one given for port 0). */
  port: number;
  close(): Promise<void>;
}

/** The token a name under the zone carries (its first label), or null. */
export function oobDnsToken(name: string, domain: string): string | null {
  const n = name.toLowerCase().replace(/\.$/, '');
  const d = domain.toLowerCase();
  if (!n.endsWith(`.${d}`)) return null;
  const first = n
    .slice(0, -d.length - 1)
    .split('.')
    .at(-1)!;
  return /^[a-z0-9]{12,40}$/.test(first) ? first : null;
}

export async function startOobDnsServer(o: {
  domain: string;
  host: string;
  port: number;
  answer?: string;
  oob: Pick<OobService, 'record'>;
  log: { warn(obj: object, msg: string): void };
}): Promise<OobDnsServer> {
  const { Packet } = dns2;
  const server = dns2.createServer({
    udp: true,
    handle(request, send, rinfo) {
      const response = Packet.createResponseFromRequest(request);
      const question = request.questions[0];
      const name = question?.name ?? '';
      const token = oobDnsToken(name, o.domain);
      const inZone = name.toLowerCase().replace(/\.$/, '').endsWith(o.domain.toLowerCase());
      if (!inZone) {
        response.header.rcode = 5; // REFUSED: not a resolver
        return send(response);
      }
      (response.header as { aa?: number }).aa = 1;
      if (question?.type === Packet.TYPE.A && o.answer)
        response.answers.push({
          name,
          type: Packet.TYPE.A,
          class: Packet.CLASS.IN,
          ttl: 0,
          address: o.answer,
        } as never);
      send(response);
      // UDP only: the remote is a dgram RemoteInfo.
      const from = (rinfo as { address?: string }).address ?? '';
      if (token)
        void o.oob
          .record({
            token,
            protocol: 'dns',
            remoteAddress: from,
            request: `${name} ${Object.entries(Packet.TYPE).find(([, v]) => v === question?.type)?.[0] ?? question?.type} from ${from}`,
          })
          .catch((err: unknown) => o.log.warn({ err }, 'an out-of-band DNS callback could not be recorded'));
    },
  });
  server.on('requestError', () => undefined); // a malformed packet from anyone
  const addresses = await server.listen({ udp: { port: o.port, address: o.host } });
  return {
    port: (addresses as { udp: { port: number } }).udp.port,
    close: () => server.close(),
  };
}
