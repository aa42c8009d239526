// The compliance events (cmmc.compliant, cmmc.renewal_due, cmmc.not_compliant, cmmc.expired) to the bid and
// management peers, enqueued in the outbox within the transaction of their cause.
import { randomUUID } from 'node:crypto';
import type { Tx } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { BRAND } from '../mesh/mesh-brand.ts';
import type { Outbox } from '../mesh/mesh-outbox.ts';
import type { ProfileRow } from './cmmc-repo.ts';

/** Every compliance event kind (the brand test enumerates them). */
export const CMMC_EVENT_KINDS = ['cmmc.compliant', 'cmmc.renewal_due', 'cmmc.not_compliant', 'cmmc.expired'] as const;
export type CmmcEventKind = (typeof CMMC_EVENT_KINDS)[number];

const TITLES: Record<CmmcEventKind, string> = {
  'cmmc.compliant': 'is CMMC Level 1 compliant',
  'cmmc.renewal_due': 'CMMC Level 1 renewal is due',
  'cmmc.not_compliant': 'is no longer CMMC Level 1 compliant (live score below 15/15)',
  'cmmc.expired': 'CMMC Level 1 self-assessment expired',
};

export type EventProfile = Pick<
  ProfileRow,
  'id' | 'tenant_id' | 'cage_code' | 'additional_cage_codes' | 'company_name'
>;

export function createCmmcEvents(deps: {
  outbox: Outbox;
  clock: Clock;
  bidPeer: string | undefined;
  managementPeer: string | undefined;
}) {
  /** The peers that hear about compliance events (bid and management), each once. */
  const peers = () => [...new Set([deps.bidPeer, deps.managementPeer].filter((x): x is string => !!x))];

  return {
    peers,
    /** One request id per peer, made up front so a notice row can name them before the enqueue. */
    planRequestIds: () => peers().map(() => randomUUID()),
    /** Enqueues the event for each peer; returns the request ids used. */
    async emit(
      tx: Tx,
      p: EventProfile,
      kind: CmmcEventKind,
      data: Record<string, unknown>,
      requestIds: string[] = peers().map(() => randomUUID()),
    ): Promise<string[]> {
      const ids: string[] = [];
      let n = 0;
      const severity = kind === 'cmmc.expired' || kind === 'cmmc.not_compliant' ? 'warning' : 'info';
      for (const peer of peers()) {
        ids.push(
          await deps.outbox.enqueue(tx, {
            peer,
            requestId: requestIds[n++] ?? randomUUID(),
            flow: 'event_report',
            eventType: kind,
            severity,
            subject: { tenantId: p.tenant_id, companyName: p.company_name, cageCode: p.cage_code },
            payload: {
              kind,
              severity,
              title: `${p.company_name} (CAGE ${p.cage_code}) ${TITLES[kind]}`,
              occurredAt: deps.clock.now().toISOString(),
              data: {
                cageCode: p.cage_code,
                cageCodes: [p.cage_code, ...p.additional_cage_codes],
                companyName: p.company_name,
                profileId: p.id,
                ...data,
              },
              brand: BRAND,
            },
          }),
        );
      }
      return ids;
    },
  };
}

export type CmmcEvents = ReturnType<typeof createCmmcEvents>;
