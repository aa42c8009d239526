// Handoff and status of the CMMC program: the bid peer's mesh flows cmmc_handoff (a one-time
// link, valid 30 minutes, to /cmmc/start, prefilled from the payload) and cmmc_status (a profile
// by CAGE code), and the signed-in side of the link: preview and claim.
import { sql } from 'kysely';
import { withService, type Tx } from '../db/tenant.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { appError } from '../lib/errors.ts';
import { randomToken } from '../lib/ids.ts';
import type { FlowContext } from '../mesh/mesh-flows.ts';
import {
  addDays,
  dayOf,
  EXPIRY_DAY,
  HANDOFF_TTL_MS,
  iso,
  sprsStatus,
  asOf,
  type Caller,
  type ProgramDeps,
  type ProgramState,
} from './cmmc-program-state.ts';
import type { HandoffClaimResponse, HandoffPreviewResponse } from './cmmc-program-schemas.ts';
import { cmmcRepo, parseJson } from './cmmc-repo.ts';

/** cmmc_status lists at most this many profiles when a CAGE code matches several. */
export const STATUS_MAX_MATCHES = 10;

const linkUsed = () =>
  appError('cmmc_handoff_used', 'This link was already used. Ask for a new one from the bid portal.');
const linkExpired = () =>
  appError(
    'cmmc_handoff_expired',
    'This link expired (links are valid for 30 minutes). Ask for a new one from the bid portal.',
  );
const linkInvalid = () => appError('cmmc_handoff_invalid', 'This link is not valid.');

export function createCmmcHandoff(deps: ProgramDeps, state: ProgramState) {
  const { db, clock } = deps;

  return {
    /**
     * cmmc_handoff: a one-time link (30 minutes) to /cmmc/start, prefilled from the payload.
     * Replays come from the dispatcher's idempotency record.
     */
    async handoffFlow(
      ctx: FlowContext,
      tx: Tx,
      payload: { cageCode: string; companyName: string; contactEmail: string },
    ) {
      const token = randomToken(32);
      const expiresAt = new Date(ctx.now.getTime() + HANDOFF_TTL_MS);
      await tx
        .insertInto('cmmc_handoff_links')
        .values({
          token_hash: sha256Hex(token),
          caller: ctx.caller.name,
          request_id: ctx.requestId,
          payload: JSON.stringify(payload),
          cage_code: payload.cageCode,
          created_at: ctx.now,
          expires_at: expiresAt,
        })
        .execute();
      return {
        url: `${deps.publicBaseUrl}/cmmc/start?token=${encodeURIComponent(token)}`,
        expiresAt: expiresAt.toISOString(),
      };
    },

    /**
     * cmmc_status: a profile by CAGE code (primary or additional). CAGE codes are not unique across
     * tenants (a tenant types its own, and a parent's code can be another's additional code), so
     * several profiles can match. Then the answer says so instead of picking one: `ambiguous: true`,
     * `matchCount`, and `matches` (primary-code matches first, then oldest profile first; at most
     * 10), with no top-level status, so a caller never reads one company's compliance as another's.
     */
    async statusFlow(cageCode: string) {
      return withService(db, async (tx) => {
        const rows = await tx
          .selectFrom('compliance_profiles')
          .select(['id', 'cage_code', 'company_name', 'status', 'status_date', 'created_at'])
          .where((eb) =>
            eb.or([
              eb('cage_code', '=', cageCode),
              eb(sql<string>`${cageCode}`, '=', eb.fn.any('additional_cage_codes')),
            ]),
          )
          .orderBy(sql`cage_code = ${cageCode}`, 'desc')
          .orderBy('created_at')
          .orderBy('id')
          .limit(STATUS_MAX_MATCHES + 1)
          .execute();
        if (!rows.length) return { found: false as const, cageCode };
        const t = state.today();
        const view = (row: (typeof rows)[number]) => {
          const p = asOf(row, t);
          const sd = dayOf(p.status_date);
          return {
            primaryCageCode: p.cage_code,
            companyName: p.company_name,
            status: p.status,
            sprsStatus: sprsStatus(p),
            statusDate: sd,
            renewalDueAt: sd ? addDays(sd, EXPIRY_DAY) : null,
          };
        };
        if (rows.length === 1) return { found: true as const, cageCode, ambiguous: false as const, ...view(rows[0]!) };
        const { rows: counted } = await sql<{ n: number }>`
          select count(*)::int as n from compliance_profiles
           where cage_code = ${cageCode} or ${cageCode} = any(additional_cage_codes)`.execute(tx);
        return {
          found: true as const,
          cageCode,
          ambiguous: true as const,
          matchCount: counted[0]!.n,
          matches: rows.slice(0, STATUS_MAX_MATCHES).map(view),
        };
      });
    },

    /** Shows what a handoff link holds without consuming it (a GET, or a link previewer, must not use it up). */
    async handoffPreview(token: string): Promise<HandoffPreviewResponse> {
      const row = await withService(db, (tx) =>
        tx
          .selectFrom('cmmc_handoff_links')
          .select(['payload', 'expires_at', 'consumed_at'])
          .where('token_hash', '=', sha256Hex(token))
          .executeTakeFirst(),
      );
      if (!row) throw linkInvalid();
      if (row.consumed_at) throw linkUsed();
      if (new Date(row.expires_at).getTime() <= clock.now().getTime()) throw linkExpired();
      return { prefill: parseJson<Record<string, unknown>>(row.payload, {}), expiresAt: iso(row.expires_at) };
    },

    /**
     * A signed-in owner or admin claims the link for a tenant: single use, then the prefill goes to
     * Scope. When the tenant already has a profile the link is still used up (it was meant for this
     * company), but nothing is overwritten: profileExists tells the page to show the bid portal's
     * details for comparison instead of filling them in.
     */
    async claimHandoff(tenantId: string, caller: Caller, token: string): Promise<HandoffClaimResponse> {
      const profileExists = await state.asManager(
        tenantId,
        caller,
        async (tx) => (await cmmcRepo.profileByTenant(tx, tenantId)) !== undefined,
      );
      const now = clock.now();
      return withService(db, async (tx) => {
        const row = await tx
          .selectFrom('cmmc_handoff_links')
          .selectAll()
          .where('token_hash', '=', sha256Hex(token))
          .forUpdate()
          .executeTakeFirst();
        if (!row) throw linkInvalid();
        if (row.consumed_at) throw linkUsed();
        if (new Date(row.expires_at).getTime() <= now.getTime()) throw linkExpired();
        await tx
          .updateTable('cmmc_handoff_links')
          .set({ consumed_at: now, consumed_by: caller.userId, tenant_id: tenantId })
          .where('id', '=', row.id)
          .execute();
        await state.audited(tx, tenantId, caller, 'cmmc.handoff_claimed', ['cmmc_handoff_link', row.id], {
          caller: row.caller,
          cageCode: row.cage_code,
          profileExists,
        });
        return { prefill: parseJson<Record<string, unknown>>(row.payload, {}), profileExists };
      });
    },
  };
}
