// explainDeviceCheck: the latest device-check run per computer (CMMC device checks, read from
// endpoint_audit_runs under the tenant's RLS), optional pasted script output and notes →
// explanations and prioritized fixes with re-check steps. Nothing is stored.
//
// The offline analysis uses the device-check knowledge table of src/cmmc (per check: meaning, fix,
// re-check steps, why a result can be unknown). It is the answer without a model and the evidence
// a model is given: each failing or unreadable check is one piece of evidence, ids C1, C2, ...
// Observed values come from the computers: they are untrusted data (delimited in the prompt,
// escaped in Markdown).
//
// Unknown results count as not met (src/cmmc/cmmc-scoring.ts, decision 30). An attestation settles
// one only where the check has an `attestable` rule and the run reported exactly its reason code
// (today: win.scan_recent unknown with third_party_av, settled by si15.frequency answered yes);
// the explanation and the prompt say which unknowns that is, and that the others are not.
// The CMMC files themselves, not src/cmmc/index.ts, so that the CMMC module may import src/llm without a cycle.
import {
  DEVICE_CHECKS,
  isDeviceCheckId,
  reasonInfo,
  type CheckResult,
  type DeviceCheck,
  type DeviceOs,
} from '../cmmc/cmmc-checks.ts';
import { cmmcRepo, parseJson } from '../cmmc/cmmc-repo.ts';
import { DEVICE_STALE_DAYS } from '../cmmc/cmmc-schemas.ts';
import type { Tx } from '../db/tenant.ts';
import { llmError } from './llm-errors.ts';
import { mdInline } from './llm-offline-results.ts';
import { citeRule, DATA_RULE, dataBlock } from './llm-prompts.ts';
import { OFFLINE_LABEL } from './llm-schemas.ts';

export interface DeviceRun {
  hostname: string;
  os: DeviceOs;
  osVersion: string | null;
  /** When Rampart received the run; null for pasted output. */
  receivedAt: string | null;
  results: Record<string, CheckResult>;
  /** Observed values per check, as the script reported them. */
  details: Record<string, string>;
  /** Reason codes of unknown results, as the script reported them (`{"win.scan_recent": "third_party_av"}`). */
  reasons: Record<string, string>;
  from: 'latest run' | 'pasted output';
}

/** One failing or unreadable check across the computers: a piece of evidence. */
export interface DeviceFinding {
  id: string;
  check: DeviceCheck;
  result: 'fail' | 'unknown';
  computers: {
    hostname: string;
    observed: string | null;
    /** The reason code the script gave for an unknown result; null when none. */
    reason: string | null;
    /** The attestation item that, answered yes, settles this unknown on this computer; null when none can. */
    attestItem: string | null;
  }[];
}

export interface DeviceAnalysis {
  runs: DeviceRun[];
  /** Failing checks first (most computers, then direct before supporting checks), then unknown ones. */
  findings: DeviceFinding[];
  /** Computers whose latest run is older than DEVICE_STALE_DAYS. */
  stale: string[];
}

export const PASTED_OUTPUT_MAX = 100_000;
export const DEVICE_NOTES_MAX = 4_000;
const MAX_OBSERVED = 200;

/** The latest run per computer of the tenant's CMMC profile (none without a profile). */
export async function latestDeviceRuns(tx: Tx, tenantId: string): Promise<DeviceRun[]> {
  const profile = await cmmcRepo.profileByTenant(tx, tenantId);
  if (!profile) return [];
  const rows = await cmmcRepo.latestRunsPerHost(tx, profile.id);
  return rows.map((r) => ({
    hostname: r.hostname,
    os: r.os,
    osVersion: r.os_version,
    receivedAt: new Date(r.received_at).toISOString(),
    results: parseJson<Record<string, CheckResult>>(r.results, {}),
    details: parseJson<Record<string, string>>(r.details, {}),
    reasons: parseJson<Record<string, string>>(r.reasons, {}),
    from: 'latest run',
  }));
}

const HEADER = /Rampart CMMC device check (\S+) on (\S+) \(([^)\n]*)\)/;
const LINE = /^\s*(pass|fail|unknown)\s+((?:win|mac)\.[a-z0-9_]+)[ \t]*(.*)$/gim;
/** What the Windows script prints for win.scan_recent when it sends the reason third_party_av. */
const THIRD_PARTY_AV = /^third-party anti-malware on \(.*\): its scan history is not readable/;

/**
 * Reads the console output of a device-check script (its header line and one "status check-id
 * observed" line per check). Throws llm_device_output_unreadable when no check line is found.
 */
export function parsePastedOutput(text: string): DeviceRun {
  const results: Record<string, CheckResult> = {};
  const details: Record<string, string> = {};
  const reasons: Record<string, string> = {};
  let os: DeviceOs | null = null;
  for (const m of text.matchAll(LINE)) {
    const id = m[2]!.toLowerCase();
    if (!isDeviceCheckId(id)) continue;
    const checkOs = DEVICE_CHECKS[id].os;
    if (os && checkOs !== os) continue;
    os = checkOs;
    results[id] = m[1]!.toLowerCase() as CheckResult;
    const observed = m[3]!.trim();
    if (observed) details[id] = observed.slice(0, 300);
    // The console shows no reason codes; the one an attestation can settle is told by the fixed
    // text the script prints with it (third-party anti-malware whose scan history is not readable).
    if (results[id] === 'unknown' && id === 'win.scan_recent' && THIRD_PARTY_AV.test(observed))
      reasons[id] = 'third_party_av';
  }
  if (!os)
    throw llmError(
      'llm_device_output_unreadable',
      'The pasted text holds no device-check results. Paste the whole output of the Rampart device-check script (the lines starting with pass, fail or unknown).',
    );
  const header = HEADER.exec(text);
  return {
    hostname: (header?.[2] ?? 'pasted computer').slice(0, 253),
    os,
    osVersion: header?.[3]?.slice(0, 200) ?? null,
    receivedAt: null,
    results,
    details,
    reasons,
    from: 'pasted output',
  };
}

/** Combines stored runs and pasted output (which replaces a stored run of the same computer). */
export function combineRuns(stored: DeviceRun[], pasted: DeviceRun | null): DeviceRun[] {
  if (!pasted) return stored;
  return [pasted, ...stored.filter((r) => r.hostname.toLowerCase() !== pasted.hostname.toLowerCase())];
}

export function analyzeDeviceRuns(runs: DeviceRun[], now: Date): DeviceAnalysis {
  const byCheck = new Map<string, { result: 'fail' | 'unknown'; computers: DeviceFinding['computers'] }>();
  for (const run of runs) {
    for (const [id, result] of Object.entries(run.results)) {
      if (result === 'pass' || !isDeviceCheckId(id)) continue;
      const key = `${result}:${id}`;
      const entry = byCheck.get(key) ?? byCheck.set(key, { result, computers: [] }).get(key)!;
      const observed = run.details[id];
      const reason = result === 'unknown' ? (run.reasons[id]?.slice(0, 64) ?? null) : null;
      // The attestation item that settles this unknown here: the check's `attestable` rule with exactly its reason (decision 30), else none.
      const attestItem = reason ? (reasonInfo(id, reason)?.attestItem ?? null) : null;
      entry.computers.push({
        hostname: run.hostname,
        observed: observed ? observed.slice(0, MAX_OBSERVED) : null,
        reason,
        attestItem,
      });
    }
  }
  const order = Object.keys(DEVICE_CHECKS);
  const findings = [...byCheck.entries()]
    .map(([key, v]) => ({ check: DEVICE_CHECKS[key.slice(key.indexOf(':') + 1) as keyof typeof DEVICE_CHECKS], ...v }))
    .sort(
      (a, b) =>
        (a.result === 'fail' ? 0 : 1) - (b.result === 'fail' ? 0 : 1) ||
        b.computers.length - a.computers.length ||
        Number(a.check.supporting) - Number(b.check.supporting) ||
        order.indexOf(a.check.id) - order.indexOf(b.check.id),
    )
    .map((f, i) => ({ id: `C${i + 1}`, ...f }));
  const staleMs = DEVICE_STALE_DAYS * 86_400_000;
  const stale = runs
    .filter((r) => r.receivedAt && now.getTime() - new Date(r.receivedAt).getTime() > staleMs)
    .map((r) => r.hostname);
  return { runs, findings, stale };
}

const OS_NAME: Record<DeviceOs, string> = { windows: 'Windows', macos: 'macOS' };

/** The checks whose unknown result an attestation can settle, with the reason it needs. */
const ATTESTABLE = Object.values(DEVICE_CHECKS).filter((c) => c.attestable);

/** How unknown results count, and the one kind an attestation settles (decision 30). */
export const UNKNOWN_RULE = [
  'An unknown result counts as not met until a run of the script reads the setting; answering an attestation item does not settle it.',
  ...ATTESTABLE.map(
    (c) =>
      `The one exception: "${c.title}" (${c.id}) reported unknown with the reason ${c.attestable!.reason} is settled on that computer by answering yes to the attestation item ${c.attestable!.itemId}.`,
  ),
].join(' ');

const quote = (s: string) => `"${mdInline(s)}"`;

/** The offline answer: Markdown, labelled "offline analysis". */
export function offlineDeviceExplanation(a: DeviceAnalysis): string {
  const lines: string[] = [];
  const n = a.runs.length;
  lines.push(
    `**${OFFLINE_LABEL[0]!.toUpperCase()}${OFFLINE_LABEL.slice(1)}** of the device checks of ${n} computer${n === 1 ? '' : 's'} (the latest run of each${a.runs.some((r) => r.from === 'pasted output') ? ', and the pasted output' : ''}).`,
    '',
  );
  lines.push('| Computer | OS | Result of | Pass | Fail | Unknown |', '|---|---|---|---|---|---|');
  for (const r of a.runs) {
    const v = Object.values(r.results);
    const when = r.receivedAt ? r.receivedAt.slice(0, 10) : 'pasted output';
    lines.push(
      `| ${mdInline(r.hostname)} | ${OS_NAME[r.os]} | ${when} | ${v.filter((x) => x === 'pass').length} | ${v.filter((x) => x === 'fail').length} | ${v.filter((x) => x === 'unknown').length} |`,
    );
  }
  lines.push('');
  if (a.stale.length)
    lines.push(
      `The latest run of ${a.stale.map(quote).join(', ')} is older than ${DEVICE_STALE_DAYS} days and counts as pending: run the script there again.`,
      '',
    );
  const fails = a.findings.filter((f) => f.result === 'fail');
  const unknowns = a.findings.filter((f) => f.result === 'unknown');
  const where = (f: DeviceFinding) => f.computers.map((c) => mdInline(c.hostname)).join(', ');
  const observed = (f: DeviceFinding) => {
    const seen = f.computers.filter((c) => c.observed).slice(0, 3);
    return seen.length
      ? `   Observed: ${seen.map((c) => `${mdInline(c.hostname)}: ${quote(c.observed!)}`).join('; ')}`
      : null;
  };
  if (fails.length === 0 && unknowns.length === 0) {
    lines.push(
      'Every check passes on every computer. Keep running the script after changes and at least every 30 days.',
    );
    return lines.join('\n');
  }
  if (fails.length) {
    lines.push('## Fix first', '');
    fails.forEach((f, i) => {
      lines.push(
        `${i + 1}. **${mdInline(f.check.title)}**: fails on ${where(f)} [${f.id}] (${f.check.requirementIds.join(', ')}${f.check.supporting ? ', supporting' : ''})`,
      );
      lines.push(`   What it means: ${mdInline(f.check.meaning)}`);
      const o = observed(f);
      if (o) lines.push(o);
      lines.push(`   Fix: ${mdInline(f.check.fix)}`, `   Re-check: ${mdInline(f.check.recheck)}`);
    });
    lines.push('');
  }
  if (unknowns.length) {
    lines.push('## Could not be read', '', UNKNOWN_RULE, '');
    const hosts = (cs: DeviceFinding['computers']) => cs.map((c) => mdInline(c.hostname)).join(', ');
    unknowns.forEach((f, i) => {
      lines.push(`${fails.length + i + 1}. **${mdInline(f.check.title)}**: unknown on ${where(f)} [${f.id}]`);
      lines.push(`   Why: ${mdInline(f.check.unknownWhen)}`);
      const o = observed(f);
      if (o) lines.push(o);
      const settles = f.computers.filter((c) => c.attestItem);
      const rest = f.computers.filter((c) => !c.attestItem);
      if (settles.length)
        lines.push(
          `   Can be attested on ${hosts(settles)} (reason ${mdInline(f.check.attestable!.reason)}): ${mdInline(f.check.attestable!.explanation)}`,
        );
      for (const c of rest.filter((x) => x.reason)) {
        const meaning = reasonInfo(f.check.id, c.reason!)?.explanation;
        lines.push(
          `   Reason on ${mdInline(c.hostname)}: ${mdInline(c.reason!)}${meaning ? `: ${mdInline(meaning)}` : ''}`,
        );
      }
      if (rest.length)
        lines.push(
          `   ${settles.length ? `On ${hosts(rest)} it` : 'It'} cannot be attested: it counts as not met until a run of the script reads it.`,
        );
      lines.push(`   Re-check: ${mdInline(f.check.recheck)}`);
    });
  }
  return lines.join('\n').trimEnd();
}

export const DEVICE_INSTRUCTIONS = [
  'You are an IT security advisor helping a small company fix the results of read-only device checks for CMMC Level 1.',
  DATA_RULE,
  citeRule('C'),
  'Write Markdown with these sections: "Summary" (2-3 sentences), "Fix first" (numbered, most important first; for each: what the result means, the fix step by step for that operating system, and how to re-check), "Could not be read" (unknown results and how to get them read), "Caveats".',
  `Unknown results: ${UNKNOWN_RULE} Say that an attestation settles an unknown only for a computer whose "attestItem" in the data names the item; never suggest attesting any other unknown result.`,
  'Use the fixes and re-check steps given in the data; adapt them to the notes only where the notes make that necessary. Do not invent computers, checks or results.',
].join('\n');

/** The device-check prompt: the analysis as delimited data; evidence ids are the findings' ids. */
export function devicePrompt(
  a: DeviceAnalysis,
  notes?: string,
): { prompt: string; evidenceIds: string[]; evidencePrefixes: string[] } {
  const facts = {
    computers: a.runs.map((r) => ({
      hostname: r.hostname,
      os: r.os,
      osVersion: r.osVersion,
      resultOf: r.receivedAt ?? 'pasted output',
      stale: a.stale.includes(r.hostname),
      pass: Object.values(r.results).filter((x) => x === 'pass').length,
    })),
    findings: a.findings.map((f) => ({
      id: f.id,
      check: f.check.id,
      title: f.check.title,
      result: f.result,
      requirements: f.check.requirementIds,
      supportingOnly: f.check.supporting,
      computers: f.computers,
      meaning: f.check.meaning,
      fix: f.check.fix,
      recheck: f.check.recheck,
      unknownWhen: f.check.unknownWhen,
      // Per computer: `reason` (the script's reason code for an unknown) and `attestItem` (the item that settles it there, or null).
      ...(f.result === 'unknown' && f.computers.some((c) => c.attestItem)
        ? { attestation: f.check.attestable!.explanation }
        : {}),
    })),
  };
  const parts = [
    `Explain these device-check results and prioritize the fixes.\n\n${dataBlock({ kind: 'device-checks' }, JSON.stringify(facts, null, 1))}`,
  ];
  if (notes?.trim())
    parts.push('Notes from the user (context only):', dataBlock({ kind: 'notes' }, notes.slice(0, DEVICE_NOTES_MAX)));
  return { prompt: parts.join('\n\n'), evidenceIds: a.findings.map((f) => f.id), evidencePrefixes: ['C'] };
}
