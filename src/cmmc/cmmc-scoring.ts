// Scoring of the 15 Level 1 requirements (docs/cmmc.md, Scoring): each is MET or NOT MET, with
// no partial credit. A requirement is MET only with evidence for every part of it:
// - every attestation item answered yes, or not applicable with a note (any no or unanswered item
//   makes it NOT MET; all items not applicable makes the requirement NA, which counts as MET);
// - its domain policy approved with an effective date on or before today and its review date not
//   passed (drafts never count; a policy past its review date is named in policyReviewOverdueSince);
// - when its objectives name required device checks: at least one device with a current run, and
//   every required check of that device's OS passing on every device. A fail, an unknown (or a
//   missing result) or a device whose latest run is older than 30 days (pending) makes it NOT MET.
//   This holds whatever the attestation answers are: items answered not applicable never hide a
//   failing or unknown device check (a requirement whose devices are checked is never NA).
// The one exception is a check with an `attestable` rule (cmmc-checks.ts): an unknown result that
// carries that rule's reason code (the script saw a third-party anti-malware product whose scan
// history Windows does not expose) is settled by that attestation item answered yes, and listed
// under attestedChecks. A fail, or an unknown without the reason, is never settled that way.
// Retired computers are not passed in (the caller leaves them out).
// Coverage: the Scope's declared number of computers is the denominator. A requirement with
// device checks is MET only when every in-scope computer is covered: a current run passing its
// required checks, or (a computer that cannot run the script, or whose run went stale) an
// attestation an owner or admin recorded in the last 30 days. A current run always decides over an
// attestation, so a failing computer is never attested away. Fewer computers known (runs plus
// attestations) than Scope declares makes it NOT MET with the number missing. Without a declared
// number (profiles saved before it was asked), at least one covered computer is needed.
// Supporting checks (e.g. disk encryption for media disposal) are shown, never required.
import { REQUIREMENTS, type Requirement } from './cmmc-catalogue.ts';
import { DEVICE_CHECKS, type DeviceCheckId, type DeviceOs } from './cmmc-checks.ts';

export type PolicyKind =
  | 'system_security_plan'
  | 'access_control'
  | 'identification_authentication'
  | 'media_protection'
  | 'physical_protection'
  | 'system_communications_protection'
  | 'system_information_integrity'
  | 'supporting_forms';

export const POLICY_KINDS: readonly PolicyKind[] = [
  'system_security_plan',
  'access_control',
  'identification_authentication',
  'media_protection',
  'physical_protection',
  'system_communications_protection',
  'system_information_integrity',
  'supporting_forms',
];

/** The policy document that must be approved for a requirement of each domain to count. */
export const DOMAIN_POLICY: Readonly<Record<Requirement['domain'], PolicyKind>> = {
  AC: 'access_control',
  IA: 'identification_authentication',
  MP: 'media_protection',
  PE: 'physical_protection',
  SC: 'system_communications_protection',
  SI: 'system_information_integrity',
};

export type Answer = 'yes' | 'no' | 'not_applicable';
export type RequirementStatus = 'MET' | 'NOT_MET' | 'NA';

export interface ScoringDevice {
  hostname: string;
  os: DeviceOs;
  results: Record<string, 'pass' | 'fail' | 'unknown'>;
  /** Reason codes the script gave for unknown results (`{"win.scan_recent": "third_party_av"}`). */
  reasons?: Record<string, string>;
  /** The latest run is older than 30 days. */
  pending: boolean;
}

/** A computer attested by an owner or admin instead of (or after the last of) its runs. */
export interface ScoringAttestation {
  hostname: string;
  /** Recorded in the last 30 days. */
  current: boolean;
}

export interface ScoringInput {
  devices: readonly ScoringDevice[];
  /** Computer attestations (latest per hostname); a hostname with a current run is decided by the run. */
  attestations?: readonly ScoringAttestation[];
  /** The Scope's number of in-scope computers; null when Scope does not declare it. */
  declaredDevices?: number | null;
  answers: ReadonlyMap<string, { answer: Answer; note: string | null }>;
  /** Policy kinds with an approved version effective today and not past its review date. */
  approvedPolicies: ReadonlySet<PolicyKind>;
  /** Policy kinds whose version in force is past its review date, with that date. */
  overduePolicies?: ReadonlyMap<PolicyKind, string>;
}

export interface RequirementScore {
  requirementId: string;
  status: RequirementStatus;
  /** MET and NA are implemented; NOT_MET is not. */
  implemented: boolean;
  missingItems: string[];
  noItems: string[];
  /** Not applicable without a note. */
  unjustifiedNa: string[];
  /** `attestItem`: the script could not read it for a stated reason; this item answered yes would settle it. */
  failingChecks: {
    hostname: string;
    checkId: string;
    result: 'fail' | 'unknown';
    reason?: string;
    attestItem?: string;
  }[];
  /** Unknown results settled by their attestation item (see the header). */
  attestedChecks: { hostname: string; checkId: string; reason: string; itemId: string }[];
  pendingDevices: string[];
  /** Required device checks exist but no computer is covered (a current run or attestation). */
  needsDeviceRun: boolean;
  /** For a requirement with device checks: covered computers of the in-scope ones; null otherwise. */
  coverage: Coverage | null;
  missingPolicy: PolicyKind | null;
  /** When missingPolicy is approved but past its review date: that date ("review overdue since"). */
  policyReviewOverdueSince: string | null;
  naJustification: string | null;
}

export interface Coverage {
  /** The Scope's number; null when not declared. */
  declared: number | null;
  /** Computers with a current passing run, or a current attestation and no current run. */
  covered: number;
  /** Of those, covered by an attestation. */
  attested: number;
  /** Computers known at all: latest runs (not retired) and attestation-only computers. */
  known: number;
  /** In-scope computers with neither a run nor an attestation (declared minus known, at least 0). */
  unaccounted: number;
}

export interface Score {
  requirements: RequirementScore[];
  /** Over every required device check: the computers covered for all requirements. */
  coverage: Coverage;
  met: number;
  total: number;
  /** All 15 MET or NA. */
  allMet: boolean;
}

/** The required (non-supporting) device checks of a requirement, per OS. */
export function requiredChecks(r: Requirement, os: DeviceOs): DeviceCheckId[] {
  const ids = new Set<DeviceCheckId>();
  for (const o of r.objectives)
    for (const c of o.checks) if (DEVICE_CHECKS[c].os === os && !DEVICE_CHECKS[c].supporting) ids.add(c);
  return [...ids];
}

/** Which computers an attestation covers: current ones without a current run; stale ones with no run at all. */
function hostsOf(input: ScoringInput) {
  const current = new Set(input.devices.filter((d) => !d.pending).map((d) => d.hostname.toLowerCase()));
  const withRun = new Set(input.devices.map((d) => d.hostname.toLowerCase()));
  const attested = new Set<string>();
  const staleAttestationOnly: string[] = [];
  for (const a of input.attestations ?? []) {
    const key = a.hostname.toLowerCase();
    if (current.has(key)) continue;
    if (a.current) attested.add(key);
    else if (!withRun.has(key)) staleAttestationOnly.push(a.hostname);
  }
  const known =
    withRun.size + [...(input.attestations ?? [])].filter((a) => !withRun.has(a.hostname.toLowerCase())).length;
  return { attested, staleAttestationOnly, known };
}

function coverageOf(input: ScoringInput, passing: number, hosts: ReturnType<typeof hostsOf>): Coverage {
  const declared = input.declaredDevices ?? null;
  const covered = passing + hosts.attested.size;
  return {
    declared,
    covered,
    attested: hosts.attested.size,
    known: hosts.known,
    unaccounted: declared === null ? 0 : Math.max(0, declared - hosts.known),
  };
}

export function scoreRequirement(r: Requirement, input: ScoringInput): RequirementScore {
  const missingItems: string[] = [];
  const noItems: string[] = [];
  const unjustifiedNa: string[] = [];
  const naNotes: string[] = [];
  let naCount = 0;
  for (const item of r.items) {
    const a = input.answers.get(item.id);
    if (!a) missingItems.push(item.id);
    else if (a.answer === 'no') noItems.push(item.id);
    else if (a.answer === 'not_applicable') {
      naCount += 1;
      if (!a.note?.trim()) unjustifiedNa.push(item.id);
      else naNotes.push(a.note.trim());
    }
  }
  const allNa = naCount === r.items.length && unjustifiedNa.length === 0;

  const failingChecks: RequirementScore['failingChecks'] = [];
  const attestedChecks: RequirementScore['attestedChecks'] = [];
  const pendingDevices: string[] = [];
  const needsChecks = requiredChecks(r, 'windows').length + requiredChecks(r, 'macos').length > 0;
  let coverage: Coverage | null = null;
  // Device checks count whatever the answers: not applicable items never hide a failing device.
  if (needsChecks) {
    const hosts = hostsOf(input);
    let passing = 0;
    for (const d of input.devices) {
      if (d.pending) {
        if (hosts.attested.has(d.hostname.toLowerCase())) continue;
        pendingDevices.push(d.hostname);
        continue;
      }
      const before = failingChecks.length;
      for (const id of requiredChecks(r, d.os)) {
        const res = d.results[id] ?? 'unknown';
        if (res === 'pass') continue;
        const alt = DEVICE_CHECKS[id].attestable;
        const reason = d.reasons?.[id];
        if (res === 'unknown' && alt && reason === alt.reason) {
          if (input.answers.get(alt.itemId)?.answer === 'yes')
            attestedChecks.push({ hostname: d.hostname, checkId: id, reason, itemId: alt.itemId });
          else failingChecks.push({ hostname: d.hostname, checkId: id, result: res, reason, attestItem: alt.itemId });
          continue;
        }
        failingChecks.push({ hostname: d.hostname, checkId: id, result: res, ...(reason ? { reason } : {}) });
      }
      if (failingChecks.length === before) passing += 1;
    }
    pendingDevices.push(...hosts.staleAttestationOnly);
    coverage = coverageOf(input, passing, hosts);
  }
  const needsDeviceRun = coverage !== null && coverage.attested === 0 && input.devices.every((d) => d.pending);
  const policy = DOMAIN_POLICY[r.domain];
  const missingPolicy = input.approvedPolicies.has(policy) ? null : policy;
  const policyReviewOverdueSince = missingPolicy ? (input.overduePolicies?.get(policy) ?? null) : null;

  const failing =
    missingItems.length + noItems.length + unjustifiedNa.length + failingChecks.length + pendingDevices.length > 0 ||
    needsDeviceRun ||
    (coverage?.unaccounted ?? 0) > 0 ||
    missingPolicy !== null;
  // NA only when nothing on the devices evidences the requirement: checked devices show it applies.
  const status: RequirementStatus = failing ? 'NOT_MET' : allNa && !needsChecks ? 'NA' : 'MET';
  return {
    requirementId: r.id,
    status,
    implemented: status !== 'NOT_MET',
    missingItems,
    noItems,
    unjustifiedNa,
    failingChecks,
    attestedChecks,
    pendingDevices,
    needsDeviceRun,
    coverage,
    missingPolicy,
    policyReviewOverdueSince,
    naJustification: status === 'NA' ? naNotes.join(' / ').slice(0, 2000) : null,
  };
}

export function scoreAll(input: ScoringInput): Score {
  const requirements = REQUIREMENTS.map((r) => scoreRequirement(r, input));
  const met = requirements.filter((r) => r.implemented).length;
  // A computer is covered overall when no requirement lists it as failing or pending.
  const hosts = hostsOf(input);
  const notCovered = new Set(
    requirements.flatMap((r) =>
      [...r.failingChecks.map((f) => f.hostname), ...r.pendingDevices].map((h) => h.toLowerCase()),
    ),
  );
  const passing = input.devices.filter((d) => !d.pending && !notCovered.has(d.hostname.toLowerCase())).length;
  const coverage = coverageOf(input, passing, hosts);
  return { requirements, coverage, met, total: REQUIREMENTS.length, allMet: met === REQUIREMENTS.length };
}
