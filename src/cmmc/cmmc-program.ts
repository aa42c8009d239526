// CMMC Level 1 program, after Scope and device checks, put together from its sections around the
// shared program state (cmmc-program-state.ts): attestations with evidence files
// (cmmc-attestations.ts), the generated policy set (cmmc-policy-documents.ts), score and the
// officer's SPRS confirmation (cmmc-sprs.ts), the exports (cmmc-exports.ts), the daily renewal
// sweep (cmmc-renewals.ts), the live status after every change (cmmc-live-status.ts), the bid peer's cmmc_handoff / cmmc_status flows and the handoff link
// (cmmc-handoff.ts) and the staff dashboard (cmmc-staff-list.ts). Members read; owners and admins
// write.
import { createCmmcAttestations } from './cmmc-attestations.ts';
import { createCmmcEvents } from './cmmc-events.ts';
import { createCmmcExports } from './cmmc-exports.ts';
import { createCmmcHandoff } from './cmmc-handoff.ts';
import { createCmmcLiveStatus, type CmmcLiveStatus } from './cmmc-live-status.ts';
import { createCmmcPolicyDocuments } from './cmmc-policy-documents.ts';
import { createProgramState, type ProgramDeps } from './cmmc-program-state.ts';
import { createCmmcRenewals } from './cmmc-renewals.ts';
import { createCmmcSprs } from './cmmc-sprs.ts';
import { createCmmcStaffList } from './cmmc-staff-list.ts';

/** Section methods that only read: every other one may change what scoring reads. */
const READS = new Set(['attestations', 'openEvidence', 'policies', 'policyPdf']);

/**
 * The section with each writing method followed by a recheck of the live status (the tenant id is
 * every method's first argument), so a new writing method is covered without being listed.
 */
function rechecked<S extends Record<string, unknown>>(section: S, live: CmmcLiveStatus): S {
  const out: Record<string, unknown> = { ...section };
  for (const [name, fn] of Object.entries(section))
    if (typeof fn === 'function' && !READS.has(name))
      out[name] = async (tenantId: string, ...rest: unknown[]) => {
        const result: unknown = await (fn as (...a: unknown[]) => Promise<unknown>)(tenantId, ...rest);
        await live.recheckStatus(tenantId);
        return result;
      };
  return out as S;
}

export function createCmmcProgram(deps: ProgramDeps) {
  const state = createProgramState(deps);
  const events = createCmmcEvents(deps);
  const live = createCmmcLiveStatus(deps, state, events);
  return {
    ...rechecked(createCmmcAttestations(deps, state), live),
    ...rechecked(createCmmcPolicyDocuments(deps, state), live),
    ...createCmmcSprs(deps, state, events),
    ...createCmmcExports(deps, state),
    ...createCmmcRenewals(deps, state, events, live),
    recheckStatus: live.recheckStatus,
    ...createCmmcHandoff(deps, state),
    ...createCmmcStaffList(deps, state),
  };
}

export type CmmcProgram = ReturnType<typeof createCmmcProgram>;
export type { Caller, ProgramDeps } from './cmmc-program-state.ts';
export type { EvidenceUpload } from './cmmc-uploads.ts';
export type { StaffFilter } from './cmmc-staff-list.ts';
export {
  AFFIRMATION_TEXT,
  AFFIRMATION_TEXT_VERSION,
  EXPIRY_DAY,
  HANDOFF_TTL_MS,
  RENEWAL_DUE_DAY,
} from './cmmc-program-state.ts';
export { STATUS_MAX_MATCHES } from './cmmc-handoff.ts';
