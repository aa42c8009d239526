// DNS ownership proof: TXT `_rampart-verify.<domain>` = `rampart-verify=<token>`. An absent or
// different record is "pending" (not yet published); only a check that cannot complete (resolver
// error, SERVFAIL, timeout) is "failed".
import { Resolver } from 'node:dns/promises';
import type { CheckOutcome } from './assets-schemas.ts';

export const RECORD_PREFIX = '_rampart-verify';
export const VALUE_PREFIX = 'rampart-verify=';

export const recordName = (domain: string): string => `${RECORD_PREFIX}.${domain}`;
export const recordValue = (token: string): string => `${VALUE_PREFIX}${token}`;

export interface CheckResult {
  outcome: CheckOutcome;
  detail: string;
}

export interface DnsVerifier {
  check(domain: string, token: string): Promise<CheckResult>;
}

const PENDING_CODES = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN']);

export function createDnsVerifier(opts: { resolvers: readonly string[]; timeoutMs: number }): DnsVerifier {
  return {
    async check(domain, token) {
      const resolver = new Resolver({ timeout: opts.timeoutMs, tries: 2 });
      if (opts.resolvers.length) resolver.setServers([...opts.resolvers]);
      const name = recordName(domain);
      const expected = recordValue(token);
      try {
        const records = (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
        if (records.includes(expected)) return { outcome: 'verified', detail: `Found ${expected} at ${name}.` };
        const ours = records.filter((r) => r.startsWith(VALUE_PREFIX));
        return {
          outcome: 'pending',
          detail: ours.length
            ? `${name} holds a different token (${ours.length} rampart-verify record${ours.length > 1 ? 's' : ''}); publish ${expected}.`
            : `${name} has no rampart-verify TXT record yet.`,
        };
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
        if (PENDING_CODES.has(code))
          return {
            outcome: 'pending',
            detail: `No TXT record at ${name} yet (${code === 'ENODATA' ? 'no data' : 'name not found'}).`,
          };
        const why: Record<string, string> = {
          ESERVFAIL: 'the resolver answered SERVFAIL',
          ETIMEOUT: 'the resolver did not answer in time',
          ECONNREFUSED: 'the resolver refused the connection',
          EREFUSED: 'the resolver refused the query',
        };
        return { outcome: 'failed', detail: `The check could not complete: ${why[code] ?? code}.` };
      }
    },
  };
}
