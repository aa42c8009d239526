// The Level 1 policy set (docs/cmmc.md), generated from the company's Scope data:
// one document per domain plus a system security plan (lite) and supporting forms. Each follows
// the NIST "-1" skeleton (purpose, scope, roles, policy statements mapped to requirement ids and
// objective letters, procedures, exceptions, enforcement, review, approval). The text is plain
// Markdown (headings, paragraphs, "- " lists) so the app shows it and pdf-lib renders it.
import { PDFDocument, StandardFonts, type PDFFont } from 'pdf-lib';
import { FAR_CLAUSE, REQUIREMENTS, type Requirement } from './cmmc-catalogue.ts';
import type { PolicyKind } from './cmmc-scoring.ts';

export interface PolicyCompany {
  companyName: string;
  cageCode: string;
  additionalCageCodes: string[];
  companyAddress: string | null;
  scopeDescription: string | null;
  mailPlatform: 'm365' | 'google';
  biddingUsers: { name: string; email: string; role: string | null }[];
  affirmingOfficial: { name: string; title: string; email: string };
}

export const POLICY_TITLES: Readonly<Record<PolicyKind, string>> = {
  system_security_plan: 'System Security Plan (Level 1)',
  access_control: 'Access Control Policy',
  identification_authentication: 'Identification and Authentication Policy',
  media_protection: 'Media Protection Policy',
  physical_protection: 'Physical Protection Policy',
  system_communications_protection: 'System and Communications Protection Policy',
  system_information_integrity: 'System and Information Integrity Policy',
  supporting_forms: 'Supporting Forms',
};

const DOMAIN_OF: Partial<Record<PolicyKind, Requirement['domain']>> = {
  access_control: 'AC',
  identification_authentication: 'IA',
  media_protection: 'MP',
  physical_protection: 'PE',
  system_communications_protection: 'SC',
  system_information_integrity: 'SI',
};

const PROCEDURES: Readonly<Partial<Record<PolicyKind, string[]>>> = {
  access_control: [
    'The Affirming Official keeps the authorized user roster and reviews it every quarter and whenever someone joins or leaves.',
    'Accounts and device access are removed on a person\u2019s last day.',
    'Administrators use a separate admin account for administrative work only.',
    'Content is reviewed for Federal Contract Information (FCI) before it is posted to the website or social media.',
  ],
  identification_authentication: [
    'Every person gets their own named account; shared or generic accounts are not allowed.',
    'Multi-factor authentication is required for the {mail} tenant; passwords are at least 8 characters.',
    'Default passwords on routers, printers and other devices are changed when they are installed.',
  ],
  media_protection: [
    'Drives, phones and paper holding FCI are wiped, destroyed or shredded before disposal or reuse.',
    'Each disposal or reuse is entered in the media-disposal record (Supporting Forms).',
  ],
  physical_protection: [
    'The office and network equipment are locked when unattended; only people on the authorized list have keys or codes.',
    'Visitors sign the visitor log and are escorted at all times.',
    'Keys, badges and door codes are listed with who holds them and collected or changed when someone leaves.',
  ],
  system_communications_protection: [
    'The internet router/firewall has its firewall on and a non-default admin password; computer firewalls stay on.',
    'Guest Wi-Fi and public-facing systems are separated from the office network.',
  ],
  system_information_integrity: [
    'Security updates are installed within 14 days of release (critical ones as soon as possible); automatic updates stay on.',
    'Anti-malware with real-time scanning runs on every computer and updates itself automatically; scans run at least weekly.',
    'The {mail} mail filtering for malware and attachments stays on.',
  ],
};

const mailName = (p: PolicyCompany['mailPlatform']) => (p === 'm365' ? 'Microsoft 365' : 'Google Workspace');
const cages = (c: PolicyCompany) => [c.cageCode, ...c.additionalCageCodes].join(', ');

function header(c: PolicyCompany, kind: PolicyKind): string[] {
  return [
    `# ${POLICY_TITLES[kind]}`,
    '',
    `Company: ${c.companyName} (CAGE ${cages(c)})`,
    `Owner and approver: ${c.affirmingOfficial.name}, ${c.affirmingOfficial.title}`,
    'Version, effective date and next review: recorded when the Affirming Official approves this document in Rampart.',
    '',
  ];
}

function requirementSection(r: Requirement, c: PolicyCompany): string[] {
  const out = [`## ${r.id} ${r.title}`, '', `${r.statement}`, ''];
  for (const o of r.objectives) out.push(`- [${o.letter}] ${o.text}`);
  out.push('', 'The company meets this by:');
  for (const i of r.items) out.push(`- ${i.platformText?.[c.mailPlatform] ?? i.text}`);
  out.push('');
  return out;
}

function common(c: PolicyCompany, kind: PolicyKind, statements: string[]): string {
  const procedures = (PROCEDURES[kind] ?? []).map((p) => `- ${p.replaceAll('{mail}', mailName(c.mailPlatform))}`);
  return [
    ...header(c, kind),
    '## Purpose',
    '',
    `This document sets out how ${c.companyName} protects Federal Contract Information (FCI) as required by ${FAR_CLAUSE} and CMMC Level 1.`,
    '',
    '## Scope',
    '',
    c.scopeDescription ??
      `All company computers, accounts and locations that store, process or send FCI, including the ${mailName(c.mailPlatform)} tenant.`,
    '',
    '## Roles',
    '',
    `- Affirming Official: ${c.affirmingOfficial.name}, ${c.affirmingOfficial.title} (${c.affirmingOfficial.email}) owns this policy and approves changes.`,
    `- Authorized users: ${c.biddingUsers.map((u) => `${u.name}${u.role ? ` (${u.role})` : ''}`).join(', ')}.`,
    '',
    ...statements,
    ...(procedures.length ? ['## Procedures', '', ...procedures, ''] : []),
    '## Exceptions',
    '',
    'Exceptions need the written approval of the Affirming Official and are reviewed at the next annual review.',
    '',
    '## Enforcement',
    '',
    'Breaking this policy can lead to loss of access and disciplinary action.',
    '',
    '## Review',
    '',
    'Reviewed at least once a year, together with the annual CMMC Level 1 self-assessment and affirmation.',
    '',
    '## Approval',
    '',
    `Approved by ${c.affirmingOfficial.name}, ${c.affirmingOfficial.title}. The approval and effective date are recorded in Rampart.`,
    '',
  ].join('\n');
}

/** The Markdown text of one policy document of the set. */
export function generatePolicy(kind: PolicyKind, c: PolicyCompany): string {
  const domain = DOMAIN_OF[kind];
  if (domain) {
    const statements = ['## Policy statements', ''];
    for (const r of REQUIREMENTS.filter((x) => x.domain === domain)) statements.push(...requirementSection(r, c));
    return common(c, kind, statements);
  }
  if (kind === 'system_security_plan') {
    const lines = [
      '## System description',
      '',
      `- Company: ${c.companyName}${c.companyAddress ? `, ${c.companyAddress}` : ''}`,
      `- CAGE codes in scope: ${cages(c)}`,
      `- Mail and cloud platform: ${mailName(c.mailPlatform)}`,
      `- People who bid on or handle FCI: ${c.biddingUsers.map((u) => `${u.name} <${u.email}>`).join(', ')}`,
      '',
      '## Requirements',
      '',
      ...REQUIREMENTS.map((r) => `- ${r.id} ${r.title}: ${r.plain}`),
      '',
    ];
    return common(c, kind, lines);
  }
  const forms = [
    '## Forms',
    '',
    '- Visitor log: date, name, company, host, time in, time out, escort.',
    '- Media-disposal record: date, item and serial number, method (wipe, destroy, shred), done by, witness.',
    '- User roster: name, e-mail, role, accounts, date added, date removed.',
    '- Asset inventory: device name, serial number, user, operating system, last device-check date.',
    '- Acceptable-use acknowledgment: each user signs that they read these policies.',
    '',
  ];
  return common(c, kind, forms);
}

// ---- PDF ----------------------------------------------------------------------------------------

/** WinAnsi fonts cannot draw every character: keep Latin-1 and replace the rest. */
const pdfSafe = (s: string) =>
  s
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/[\u2013\u2014]/g, '-')
    .replace(/[^\x20-\x7e\xa0-\xff]/g, '?');

function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const words = text.split(/\s+/).filter(Boolean);
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    const next = line ? `${line} ${w}` : w;
    if (font.widthOfTextAtSize(next, size) <= width || !line) line = next;
    else {
      lines.push(line);
      line = w;
    }
  }
  if (line) lines.push(line);
  return lines.length ? lines : [''];
}

/** Renders a policy document (its Markdown subset) as a Letter-size PDF. */
export async function renderPolicyPdf(doc: { title: string; body: string; footer: string }): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle(pdfSafe(doc.title));
  pdf.setProducer('Rampart');
  pdf.setCreator('Rampart CMMC Level 1');
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const [W, H, M] = [612, 792, 54];
  let page = pdf.addPage([W, H]);
  let y = H - M;
  const newPage = () => {
    page = pdf.addPage([W, H]);
    y = H - M;
  };
  const draw = (text: string, font: PDFFont, size: number, indent = 0, gapAfter = 2) => {
    for (const l of wrap(pdfSafe(text), font, size, W - 2 * M - indent)) {
      if (y - size < M + 20) newPage();
      y -= size + 3;
      page.drawText(l, { x: M + indent, y, size, font });
    }
    y -= gapAfter;
  };
  for (const raw of doc.body.split('\n')) {
    const line = raw.trimEnd();
    if (!line) {
      y -= 6;
      continue;
    }
    if (line.startsWith('# ')) draw(line.slice(2), bold, 18, 0, 8);
    else if (line.startsWith('## ')) draw(line.slice(3), bold, 13, 0, 4);
    else if (line.startsWith('- ')) {
      if (y - 10 < M + 20) newPage();
      page.drawText('-', { x: M + 6, y: y - 13, size: 10, font: regular });
      draw(line.slice(2), regular, 10, 18);
    } else draw(line, regular, 10);
  }
  const pages = pdf.getPages();
  pages.forEach((p, i) =>
    p.drawText(pdfSafe(`${doc.footer}  -  page ${i + 1} of ${pages.length}`), {
      x: M,
      y: M - 24,
      size: 8,
      font: regular,
    }),
  );
  return pdf.save();
}
