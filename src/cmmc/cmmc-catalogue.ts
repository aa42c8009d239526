// The CMMC Level 1 catalogue: the 15 safeguarding requirements of FAR 52.204-21(b)(1) with their
// CMMC ids (32 CFR 170 / L1 Assessment Guide v2.13: `DD.L1-b.1.<roman>`), the CMMC 2.0 (v2.0,
// NIST 800-171 numbering) ids as aliases, and the 59 assessment objectives. Each objective is
// evidenced by read-only device checks (src/cmmc/cmmc-checks.ts) and/or attestation items (yes /
// no / not applicable answers, optionally backed by files). See docs/cmmc.md.
// Over 500 lines on purpose: a data table: the 15 requirements and 59 objectives of FAR 52.204-21 / CMMC Level 1.
import { DEVICE_CHECKS, type DeviceCheckId } from './cmmc-checks.ts';

export const FAR_CLAUSE = 'FAR 52.204-21(b)(1)';

export type MailPlatform = 'm365' | 'google';

export interface AttestationItem {
  /** Stable id, e.g. `ac1.roster`. */
  id: string;
  /** The statement the company answers yes / no / not applicable to. */
  text: string;
  /** Platform-specific wording for the mail platform chosen in Scope. */
  platformText?: Partial<Record<MailPlatform, string>>;
}

export interface Objective {
  /** `AC.L1-b.1.i[a]` */
  id: string;
  letter: string;
  text: string;
  /** Device checks that evidence this objective (any OS). */
  checks: readonly DeviceCheckId[];
  /** Attestation items that evidence this objective. */
  items: readonly string[];
}

export interface Requirement {
  /** CMMC id (2024 rule): `AC.L1-b.1.i` */
  id: string;
  /** Roman numeral of FAR 52.204-21(b)(1). */
  far: string;
  /** CMMC 2.0 (v2.0) ids; (ix) was three practices there. */
  aliases: readonly string[];
  domain: 'AC' | 'IA' | 'MP' | 'PE' | 'SC' | 'SI';
  title: string;
  /** The FAR text. */
  statement: string;
  plain: string;
  items: readonly AttestationItem[];
  objectives: readonly Objective[];
}

type ObjectiveSpec = [letter: string, text: string, checks: DeviceCheckId[], items: string[]];

function req(r: Omit<Requirement, 'objectives'> & { objectives: ObjectiveSpec[] }): Requirement {
  return {
    ...r,
    objectives: r.objectives.map(([letter, text, checks, items]) => ({
      id: `${r.id}[${letter}]`,
      letter,
      text,
      checks,
      items,
    })),
  };
}

export const REQUIREMENTS: readonly Requirement[] = [
  req({
    id: 'AC.L1-b.1.i',
    far: 'i',
    aliases: ['AC.L1-3.1.1'],
    domain: 'AC',
    title: 'Authorized Access Control',
    statement:
      'Limit information system access to authorized users, processes acting on behalf of authorized users, or devices (including other information systems).',
    plain: 'Only authorized users, processes and devices get access.',
    items: [
      {
        id: 'ac1.roster',
        text: 'A current list of authorized users exists and matches the people who handle FCI (the bidding users in Scope).',
      },
      {
        id: 'ac1.service_accounts',
        text: 'Service accounts and automated processes that act for users are listed with their owner.',
      },
      { id: 'ac1.devices', text: 'A list of approved computers and phones that may access company systems is kept.' },
      {
        id: 'ac1.tenant_users',
        text: 'The accounts in the mail/cloud tenant match the user roster; no unknown or shared accounts.',
        platformText: {
          m365: 'The user accounts in Microsoft 365 (Entra ID) match the user roster; no unknown or shared accounts.',
          google: 'The user accounts in Google Workspace match the user roster; no unknown or shared accounts.',
        },
      },
      { id: 'ac1.offboarding', text: 'Accounts and device access are removed the same day a person leaves.' },
    ],
    objectives: [
      [
        'a',
        'Authorized users are identified.',
        ['win.named_accounts', 'mac.named_accounts'],
        ['ac1.roster', 'ac1.tenant_users'],
      ],
      ['b', 'Processes acting on behalf of authorized users are identified.', [], ['ac1.service_accounts']],
      [
        'c',
        'Devices (and other systems) authorized to connect to organizational systems are identified.',
        [],
        ['ac1.devices'],
      ],
      [
        'd',
        'System access is limited to authorized users.',
        ['win.guest_disabled', 'mac.guest_disabled', 'win.autologon_disabled', 'mac.autologin_disabled'],
        ['ac1.tenant_users', 'ac1.offboarding'],
      ],
      [
        'e',
        'System access is limited to processes acting on behalf of authorized users.',
        [],
        ['ac1.service_accounts'],
      ],
      ['f', 'System access is limited to authorized devices (including other systems).', [], ['ac1.devices']],
    ],
  }),
  req({
    id: 'AC.L1-b.1.ii',
    far: 'ii',
    aliases: ['AC.L1-3.1.2'],
    domain: 'AC',
    title: 'Transaction & Function Control',
    statement:
      'Limit information system access to the types of transactions and functions that authorized users are permitted to execute.',
    plain: 'Users can do only what their role allows.',
    items: [
      {
        id: 'ac2.role_matrix',
        text: 'A simple role/permission list says who may do what (tenant admins, finance, file shares).',
      },
      {
        id: 'ac2.admin_separation',
        text: 'Administrators use a separate admin account for admin work and a standard account for daily use.',
        platformText: {
          m365: 'Microsoft 365 global administrators use separate admin accounts, not their daily mailbox account.',
          google: 'Google Workspace super admins use separate admin accounts, not their daily account.',
        },
      },
    ],
    objectives: [
      [
        'a',
        'The types of transactions and functions that authorized users are permitted to execute are defined.',
        [],
        ['ac2.role_matrix'],
      ],
      [
        'b',
        'System access is limited to the defined types of transactions and functions for authorized users.',
        ['win.local_admins', 'mac.admins'],
        ['ac2.admin_separation'],
      ],
    ],
  }),
  req({
    id: 'AC.L1-b.1.iii',
    far: 'iii',
    aliases: ['AC.L1-3.1.20'],
    domain: 'AC',
    title: 'External Connections',
    statement: 'Verify and control/limit connections to and use of external information systems.',
    plain: 'Identify, verify and limit connections to and use of external systems.',
    items: [
      {
        id: 'ac3.external_list',
        text: 'External systems used with FCI are listed (cloud apps, personal devices, USB drives, personal e-mail).',
      },
      {
        id: 'ac3.verified',
        text: 'Each listed external system and connection has been checked and approved before use.',
      },
      {
        id: 'ac3.limits',
        text: 'Rules limit what may be done on external systems (e.g. no FCI on personal devices or personal e-mail).',
      },
    ],
    objectives: [
      ['a', 'Connections to external systems are identified.', [], ['ac3.external_list']],
      ['b', 'The use of external systems is identified.', [], ['ac3.external_list']],
      ['c', 'Connections to external systems are verified.', [], ['ac3.verified']],
      ['d', 'The use of external systems is verified.', [], ['ac3.verified']],
      [
        'e',
        'Connections to external systems are controlled/limited.',
        ['win.rdp_disabled', 'mac.remote_login'],
        ['ac3.limits'],
      ],
      ['f', 'The use of external systems is controlled/limited.', [], ['ac3.limits']],
    ],
  }),
  req({
    id: 'AC.L1-b.1.iv',
    far: 'iv',
    aliases: ['AC.L1-3.1.22'],
    domain: 'AC',
    title: 'Control Public Information',
    statement: 'Control information posted or processed on publicly accessible information systems.',
    plain: 'Keep FCI off public sites; review before posting.',
    items: [
      { id: 'ac4.posters', text: 'The people allowed to post on the website and social media are named.' },
      { id: 'ac4.procedure', text: 'A written rule says FCI is never posted on public sites.' },
      { id: 'ac4.pre_review', text: 'Content is reviewed for FCI before it is posted.' },
      { id: 'ac4.periodic_review', text: 'Public sites are reviewed periodically for FCI.' },
      { id: 'ac4.takedown', text: 'There is a way to take down FCI that was posted by mistake.' },
    ],
    objectives: [
      [
        'a',
        'Individuals authorized to post or process information on publicly accessible systems are identified.',
        [],
        ['ac4.posters'],
      ],
      [
        'b',
        'Procedures to ensure FCI is not posted or processed on publicly accessible systems are identified.',
        [],
        ['ac4.procedure'],
      ],
      [
        'c',
        'A review process is in place prior to posting of any content to publicly accessible systems.',
        [],
        ['ac4.pre_review'],
      ],
      [
        'd',
        'Content on publicly accessible systems is reviewed to ensure that it does not include FCI.',
        [],
        ['ac4.periodic_review'],
      ],
      ['e', 'Mechanisms are in place to remove and address improper posting of FCI.', [], ['ac4.takedown']],
    ],
  }),
  req({
    id: 'IA.L1-b.1.v',
    far: 'v',
    aliases: ['IA.L1-3.5.1'],
    domain: 'IA',
    title: 'Identification',
    statement: 'Identify information system users, processes acting on behalf of users, or devices.',
    plain: 'Every user, process and device is identified.',
    items: [
      { id: 'ia5.unique_ids', text: 'Every person has their own named account; no shared or generic accounts.' },
      { id: 'ia5.process_ids', text: 'Automated processes and service accounts have their own identifiers.' },
      { id: 'ia5.device_ids', text: 'Each computer is identified (name, serial number) in the device list.' },
    ],
    objectives: [
      ['a', 'System users are identified.', ['win.named_accounts', 'mac.named_accounts'], ['ia5.unique_ids']],
      ['b', 'Processes acting on behalf of users are identified.', [], ['ia5.process_ids']],
      ['c', 'Devices accessing the system are identified.', [], ['ia5.device_ids']],
    ],
  }),
  req({
    id: 'IA.L1-b.1.vi',
    far: 'vi',
    aliases: ['IA.L1-3.5.2'],
    domain: 'IA',
    title: 'Authentication',
    statement:
      'Authenticate (or verify) the identities of those users, processes, or devices, as a prerequisite to allowing access to organizational information systems.',
    plain: 'Authenticate them before access.',
    items: [
      {
        id: 'ia6.mfa',
        text: 'Multi-factor authentication is on for every user of the mail/cloud tenant.',
        platformText: {
          m365: 'Multi-factor authentication (security defaults or conditional access) is on for every Microsoft 365 user.',
          google: '2-Step Verification is enforced for every Google Workspace user.',
        },
      },
      {
        id: 'ia6.default_passwords',
        text: 'Default passwords on routers, printers and other devices have been changed.',
      },
      {
        id: 'ia6.process_auth',
        text: 'Service accounts and integrations authenticate with their own credentials (keys, app passwords), not shared user passwords.',
      },
      { id: 'ia6.wifi', text: 'Office Wi-Fi uses WPA2 or WPA3 with a non-default password.' },
    ],
    objectives: [
      [
        'a',
        'The identity of each user is authenticated or verified as a prerequisite to system access.',
        [
          'win.password_min_length',
          'mac.password_policy',
          'win.autologon_disabled',
          'mac.autologin_disabled',
          'win.screen_lock',
          'mac.screen_lock',
        ],
        ['ia6.mfa'],
      ],
      [
        'b',
        'The identity of each process acting on behalf of a user is authenticated or verified as a prerequisite to system access.',
        [],
        ['ia6.process_auth'],
      ],
      [
        'c',
        'The identity of each device accessing or connecting to the system is authenticated or verified as a prerequisite to system access.',
        [],
        ['ia6.default_passwords', 'ia6.wifi'],
      ],
    ],
  }),
  req({
    id: 'MP.L1-b.1.vii',
    far: 'vii',
    aliases: ['MP.L1-3.8.3'],
    domain: 'MP',
    title: 'Media Disposal',
    statement:
      'Sanitize or destroy information system media containing Federal Contract Information before disposal or release for reuse.',
    plain: 'Sanitize or destroy media before disposal or reuse.',
    items: [
      {
        id: 'mp7.method',
        text: 'A sanitization method is defined for drives, phones and paper (wipe, destroy, shred).',
      },
      { id: 'mp7.log', text: 'Disposed or reused media is recorded in a disposal log.' },
      { id: 'mp7.reuse', text: 'Computers are wiped before they are given to someone else or reused.' },
    ],
    objectives: [
      [
        'a',
        'System media containing FCI is sanitized or destroyed before disposal.',
        ['win.disk_encryption', 'mac.filevault'],
        ['mp7.method', 'mp7.log'],
      ],
      [
        'b',
        'System media containing FCI is sanitized before it is released for reuse.',
        ['win.disk_encryption', 'mac.filevault'],
        ['mp7.reuse'],
      ],
    ],
  }),
  req({
    id: 'PE.L1-b.1.viii',
    far: 'viii',
    aliases: ['PE.L1-3.10.1'],
    domain: 'PE',
    title: 'Limit Physical Access',
    statement:
      'Limit physical access to organizational information systems, equipment, and the respective operating environments to authorized individuals.',
    plain: 'Only authorized people reach systems, equipment and rooms.',
    items: [
      { id: 'pe8.authorized_list', text: 'A list of people allowed into the office and equipment areas is kept.' },
      { id: 'pe8.locked', text: 'The office and the network closet are locked when unattended.' },
      {
        id: 'pe8.equipment',
        text: 'Computers, servers and network equipment are kept where only authorized people can reach them.',
      },
      { id: 'pe8.home_office', text: 'Home-office rules keep company computers away from family and visitors.' },
    ],
    objectives: [
      ['a', 'Authorized individuals allowed physical access are identified.', [], ['pe8.authorized_list']],
      ['b', 'Physical access to organizational systems is limited to authorized individuals.', [], ['pe8.locked']],
      ['c', 'Physical access to equipment is limited to authorized individuals.', [], ['pe8.equipment']],
      [
        'd',
        'Physical access to operating environments is limited to authorized individuals.',
        [],
        ['pe8.locked', 'pe8.home_office'],
      ],
    ],
  }),
  req({
    id: 'PE.L1-b.1.ix',
    far: 'ix',
    aliases: ['PE.L1-3.10.3', 'PE.L1-3.10.4', 'PE.L1-3.10.5'],
    domain: 'PE',
    title: 'Manage Visitors & Physical Access',
    statement:
      'Escort visitors and monitor visitor activity; maintain audit logs of physical access; and control and manage physical access devices.',
    plain: 'Escort and monitor visitors, keep physical-access logs, manage keys and badges.',
    items: [
      { id: 'pe9.escort', text: 'Visitors are escorted at all times.' },
      { id: 'pe9.monitor', text: 'Visitor activity is watched while they are on site.' },
      { id: 'pe9.log', text: 'A visitor / physical access log is kept.' },
      { id: 'pe9.key_inventory', text: 'Keys, badges and door codes are listed with who holds them.' },
      { id: 'pe9.key_control', text: 'Keys, badges and codes are collected or changed when someone leaves.' },
    ],
    objectives: [
      ['a', 'Visitors are escorted.', [], ['pe9.escort']],
      ['b', 'Visitor activity is monitored.', [], ['pe9.monitor']],
      ['c', 'Audit logs of physical access are maintained.', [], ['pe9.log']],
      ['d', 'Physical access devices are identified.', [], ['pe9.key_inventory']],
      ['e', 'Physical access devices are controlled.', [], ['pe9.key_control']],
      ['f', 'Physical access devices are managed.', [], ['pe9.key_inventory', 'pe9.key_control']],
    ],
  }),
  req({
    id: 'SC.L1-b.1.x',
    far: 'x',
    aliases: ['SC.L1-3.13.1'],
    domain: 'SC',
    title: 'Boundary Protection',
    statement:
      'Monitor, control, and protect organizational communications (i.e., information transmitted or received by organizational information systems) at the external boundaries and key internal boundaries of the information systems.',
    plain: 'Monitor, control and protect traffic at external and key internal boundaries.',
    items: [
      {
        id: 'sc10.diagram',
        text: 'A simple network diagram shows the internet boundary (router/firewall) and internal boundaries (guest Wi-Fi, servers).',
      },
      {
        id: 'sc10.router_firewall',
        text: 'The router/firewall at the internet boundary has its firewall on and its admin password changed.',
      },
      { id: 'sc10.alerts', text: 'Firewall and router alerts or logs are looked at regularly.' },
      {
        id: 'sc10.remote_work',
        text: 'Remote workers connect only through protected networks (home router firewall, VPN, or equivalent).',
      },
      {
        id: 'sc10.internal',
        text: 'Key internal boundaries (e.g. guest Wi-Fi vs office network) are separated and controlled.',
      },
    ],
    objectives: [
      ['a', 'The external system boundary is defined.', [], ['sc10.diagram']],
      ['b', 'Key internal system boundaries are defined.', [], ['sc10.diagram']],
      ['c', 'Communications are monitored at the external system boundary.', [], ['sc10.alerts']],
      ['d', 'Communications are monitored at key internal boundaries.', [], ['sc10.alerts']],
      [
        'e',
        'Communications are controlled at the external system boundary.',
        ['win.firewall_enabled', 'mac.firewall'],
        ['sc10.router_firewall'],
      ],
      [
        'f',
        'Communications are controlled at key internal boundaries.',
        ['win.firewall_enabled', 'mac.firewall'],
        ['sc10.internal'],
      ],
      [
        'g',
        'Communications are protected at the external system boundary.',
        ['win.firewall_enabled', 'mac.firewall'],
        ['sc10.router_firewall', 'sc10.remote_work'],
      ],
      [
        'h',
        'Communications are protected at key internal boundaries.',
        ['win.firewall_enabled', 'mac.firewall'],
        ['sc10.internal'],
      ],
    ],
  }),
  req({
    id: 'SC.L1-b.1.xi',
    far: 'xi',
    aliases: ['SC.L1-3.13.5'],
    domain: 'SC',
    title: 'Public-Access System Separation',
    statement:
      'Implement subnetworks for publicly accessible system components that are physically or logically separated from internal networks.',
    plain: 'Public-facing parts on a separated subnetwork.',
    items: [
      {
        id: 'sc11.public_list',
        text: 'Publicly accessible components (website, guest Wi-Fi, public kiosks) are listed.',
      },
      {
        id: 'sc11.separated',
        text: 'The public website is hosted off the office network (or in a DMZ) and guest Wi-Fi is isolated from the office network.',
      },
    ],
    objectives: [
      ['a', 'Publicly accessible system components are identified.', [], ['sc11.public_list']],
      [
        'b',
        'Subnetworks for publicly accessible system components are physically or logically separated from internal networks.',
        [],
        ['sc11.separated'],
      ],
    ],
  }),
  req({
    id: 'SI.L1-b.1.xii',
    far: 'xii',
    aliases: ['SI.L1-3.14.1'],
    domain: 'SI',
    title: 'Flaw Remediation',
    statement: 'Identify, report, and correct information and information system flaws in a timely manner.',
    plain: 'Find, report and fix flaws within set times.',
    items: [
      {
        id: 'si12.timeframes',
        text: 'Written time frames exist to identify, report and correct flaws (e.g. critical updates within 14 days).',
      },
      { id: 'si12.advisories', text: 'Someone watches vendor advisories and update notices.' },
      { id: 'si12.reporting', text: 'Flaws found are reported to the person responsible within the set time.' },
      { id: 'si12.apps_firmware', text: 'Applications and router/printer firmware are patched within the set time.' },
    ],
    objectives: [
      ['a', 'The time within which to identify system flaws is specified.', [], ['si12.timeframes']],
      [
        'b',
        'System flaws are identified within the specified time frame.',
        ['win.auto_update', 'mac.auto_update'],
        ['si12.advisories'],
      ],
      ['c', 'The time within which to report system flaws is specified.', [], ['si12.timeframes']],
      ['d', 'System flaws are reported within the specified time frame.', [], ['si12.reporting']],
      ['e', 'The time within which to correct system flaws is specified.', [], ['si12.timeframes']],
      [
        'f',
        'System flaws are corrected within the specified time frame.',
        ['win.patch_recent', 'mac.patch_recent', 'win.os_supported', 'mac.os_supported'],
        ['si12.apps_firmware'],
      ],
    ],
  }),
  req({
    id: 'SI.L1-b.1.xiii',
    far: 'xiii',
    aliases: ['SI.L1-3.14.2'],
    domain: 'SI',
    title: 'Malicious Code Protection',
    statement:
      'Provide protection from malicious code at appropriate locations within organizational information systems.',
    plain: 'Anti-malware at designated locations.',
    items: [
      {
        id: 'si13.locations',
        text: 'The places that need malware protection are named (every computer, the mail system).',
      },
      {
        id: 'si13.mail_filtering',
        text: 'Mail filtering for malware is on for the mail platform.',
        platformText: {
          m365: 'Microsoft Defender for Office 365 / Exchange Online Protection anti-malware policies are on.',
          google: 'Gmail attachment protection and malware scanning are on.',
        },
      },
    ],
    objectives: [
      ['a', 'Designated locations for malicious code protection are identified.', [], ['si13.locations']],
      [
        'b',
        'Protection from malicious code at designated locations is provided.',
        ['win.av_enabled', 'mac.xprotect', 'mac.gatekeeper', 'mac.sip'],
        ['si13.mail_filtering'],
      ],
    ],
  }),
  req({
    id: 'SI.L1-b.1.xiv',
    far: 'xiv',
    aliases: ['SI.L1-3.14.4'],
    domain: 'SI',
    title: 'Update Malicious Code Protection',
    statement: 'Update malicious code protection mechanisms when new releases are available.',
    plain: 'Update it when new releases are available.',
    items: [{ id: 'si14.auto_update', text: 'Anti-malware updates are installed automatically.' }],
    objectives: [
      [
        'a',
        'Malicious code protection mechanisms are updated when new releases are available.',
        ['win.av_signatures_current', 'mac.xprotect', 'mac.auto_update'],
        ['si14.auto_update'],
      ],
    ],
  }),
  req({
    id: 'SI.L1-b.1.xv',
    far: 'xv',
    aliases: ['SI.L1-3.14.5'],
    domain: 'SI',
    title: 'System & File Scanning',
    statement:
      'Perform periodic scans of the information system and real-time scans of files from external sources as files are downloaded, opened, or executed.',
    plain: 'Periodic scans, plus real-time scans of downloaded, opened or executed files.',
    items: [
      { id: 'si15.frequency', text: 'How often full or quick malware scans run is written down (e.g. weekly).' },
      {
        id: 'si15.attachments',
        text: 'E-mail attachments are scanned before they are opened.',
        platformText: {
          m365: 'Microsoft 365 scans e-mail attachments (Safe Attachments or EOP anti-malware).',
          google: 'Gmail scans e-mail attachments before delivery.',
        },
      },
    ],
    objectives: [
      ['a', 'The frequency for malicious code scans is defined.', [], ['si15.frequency']],
      ['b', 'Malicious code scans are performed with the defined frequency.', ['win.scan_recent'], ['si15.frequency']],
      [
        'c',
        'Real-time malicious code scans of files from external sources as files are downloaded, opened, or executed are performed.',
        ['win.realtime_protection', 'mac.gatekeeper', 'mac.xprotect'],
        ['si15.attachments'],
      ],
    ],
  }),
];

const byId = new Map<string, Requirement>();
for (const r of REQUIREMENTS) {
  byId.set(r.id, r);
  for (const a of r.aliases) byId.set(a, r);
}

/** A requirement by its CMMC id or a v2.0 alias (`AC.L1-3.1.1`). */
export function findRequirement(id: string): Requirement | undefined {
  return byId.get(id);
}

export const OBJECTIVES: readonly Objective[] = REQUIREMENTS.flatMap((r) => r.objectives);

export const ATTESTATION_ITEMS: readonly (AttestationItem & { requirementId: string })[] = REQUIREMENTS.flatMap((r) =>
  r.items.map((i) => ({ ...i, requirementId: r.id })),
);

/** The device checks that evidence a requirement (through its objectives). */
export function checksForRequirement(id: string): DeviceCheckId[] {
  const r = findRequirement(id);
  if (!r) return [];
  return [...new Set(r.objectives.flatMap((o) => o.checks))].filter((c) => c in DEVICE_CHECKS);
}
