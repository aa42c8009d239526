// The requirement list of the evidence review: the 15 safeguards of FAR 52.204-21(b)(1) from the
// CMMC catalogue (ids and titles), with what the offline analyzer looks for. `phrases` are matched
// in the documents (case-insensitive, whole words; `*` ends a stem) and ground a model's citations;
// the objectives (cmmc-l1-objectives.ts) decide the offline verdict; `documentation` is what an
// assessor expects.
import { REQUIREMENTS } from '../cmmc/cmmc-catalogue.ts';
import { OBJECTIVE_TERMS } from './cmmc-l1-objectives.ts';
import type { ReviewRequirement } from './llm-schemas.ts';

const VOCABULARY: Record<string, Pick<ReviewRequirement, 'phrases' | 'documentation'>> = {
  'AC.L1-b.1.i': {
    phrases: [
      'authorized users',
      'access control',
      'user accounts',
      'account list',
      'user list',
      'authorized devices',
      'onboarding',
      'offboarding',
      'access is granted',
      'least privilege',
      'remove access',
    ],
    documentation: [
      'Access control policy naming who authorizes access',
      'Roster of authorized users, service accounts and devices',
      'Onboarding and offboarding procedure',
    ],
  },
  'AC.L1-b.1.ii': {
    phrases: [
      'role-based',
      'roles and permissions',
      'permission matrix',
      'administrator accounts',
      'admin rights',
      'administrative privileges',
      'standard user',
      'separation of duties',
      'least privilege',
    ],
    documentation: ['Role and permission matrix', 'Rule that daily work uses standard (non-administrator) accounts'],
  },
  'AC.L1-b.1.iii': {
    phrases: [
      'external systems',
      'external connections',
      'personal devices',
      'byod',
      'removable media',
      'usb',
      'cloud services',
      'remote access',
      'personal email',
      'third-party systems',
    ],
    documentation: [
      'List of external systems and connections (cloud apps, personal devices, removable media)',
      'Limits and verification for each external connection',
    ],
  },
  'AC.L1-b.1.iv': {
    phrases: [
      'publicly accessible',
      'public website',
      'social media',
      'posting',
      'review before',
      'federal contract information',
      'fci',
      'authorized to post',
      'takedown',
    ],
    documentation: [
      'Named people authorized to post public content',
      'Pre-posting review procedure that keeps FCI off public systems',
      'Periodic review and takedown process',
    ],
  },
  'IA.L1-b.1.v': {
    phrases: [
      'unique user',
      'unique id',
      'unique identifier',
      'shared accounts',
      'generic accounts',
      'user identification',
      'device identification',
      'service accounts',
      'naming convention',
    ],
    documentation: [
      'Rule that every person, process and device has a unique identifier',
      'Inventory of accounts and devices',
    ],
  },
  'IA.L1-b.1.vi': {
    phrases: [
      'password',
      'multi-factor',
      'mfa',
      'two-factor',
      'authentication',
      'default passwords',
      'passphrase',
      'password length',
      'authenticator',
    ],
    documentation: [
      'Password and multi-factor authentication policy',
      'Procedure to change default passwords on new devices (routers, printers)',
    ],
  },
  'MP.L1-b.1.vii': {
    phrases: [
      'media disposal',
      'sanitize',
      'sanitization',
      'destroy',
      'shred',
      'wipe',
      'disposal log',
      'degauss',
      'nist 800-88',
      'reuse',
    ],
    documentation: ['Media sanitization and destruction procedure', 'Disposal or reuse log'],
  },
  'PE.L1-b.1.viii': {
    phrases: [
      'physical access',
      'locked',
      'badge',
      'key card',
      'server room',
      'office access',
      'authorized personnel',
      'facility access',
      'locks',
    ],
    documentation: [
      'List of people authorized to enter the office, server room or closet',
      'Physical protection of systems (locks, badges), including home offices',
    ],
  },
  'PE.L1-b.1.ix': {
    phrases: [
      'visitor',
      'visitors',
      'escort',
      'visitor log',
      'sign-in sheet',
      'access log',
      'physical access devices',
      'keys and badges',
      'badge inventory',
    ],
    documentation: [
      'Visitor escort and monitoring rule',
      'Visitor and physical-access logs with retention',
      'Key and badge inventory with revocation',
    ],
  },
  'SC.L1-b.1.x': {
    phrases: [
      'firewall',
      'boundary',
      'network diagram',
      'router',
      'perimeter',
      'inbound traffic',
      'outbound traffic',
      'intrusion',
      'network monitoring',
      'vpn',
    ],
    documentation: [
      'Network boundary diagram',
      'Firewall configuration and monitoring procedure (office and remote work)',
    ],
  },
  'SC.L1-b.1.xi': {
    phrases: [
      'dmz',
      'demilitarized',
      'subnetwork',
      'subnet',
      'segmentation',
      'segmented',
      'separate network',
      'guest wi-fi',
      'guest network',
      'hosted website',
      'vlan',
    ],
    documentation: ['How public-facing systems (website, guest Wi-Fi) are separated from internal networks'],
  },
  'SI.L1-b.1.xii': {
    phrases: [
      'patch',
      'patching',
      'updates',
      'vulnerabilit*',
      'flaw remediation',
      'security advisories',
      'firmware',
      'within days',
      'remediat*',
    ],
    documentation: [
      'Patch management procedure with time frames to identify, report and correct flaws',
      'Record of applied updates',
    ],
  },
  'SI.L1-b.1.xiii': {
    phrases: [
      'antivirus',
      'anti-virus',
      'anti-malware',
      'antimalware',
      'malware',
      'malicious code',
      'endpoint protection',
      'defender',
      'email filtering',
    ],
    documentation: ['Malicious-code protection at designated locations (endpoints, e-mail)'],
  },
  'SI.L1-b.1.xiv': {
    phrases: [
      'signature updates',
      'definitions',
      'automatic updates',
      'auto-update',
      'updated automatically',
      'antivirus updates',
      'signatures',
    ],
    documentation: ['Configuration showing anti-malware updates automatically when new releases are available'],
  },
  'SI.L1-b.1.xv': {
    phrases: [
      'scan',
      'scans',
      'real-time',
      'real time',
      'on-access',
      'full scan',
      'quick scan',
      'downloaded files',
      'attachments',
      'scheduled scan',
    ],
    documentation: ['Periodic system scan schedule', 'Real-time scanning of files downloaded, opened or executed'],
  },
};

export const CMMC_L1_REQUIREMENTS: readonly ReviewRequirement[] = REQUIREMENTS.map((r) => {
  const vocabulary = VOCABULARY[r.id];
  if (!vocabulary) throw new Error(`no evidence-review vocabulary for ${r.id}`);
  const objectives = r.objectives.map((o) => {
    const terms = OBJECTIVE_TERMS[o.id];
    if (!terms) throw new Error(`no evidence-review terms for ${o.id}`);
    return { id: o.id, text: o.text, terms: terms.map((g) => [...g]) };
  });
  return { id: r.id, title: r.title, ...vocabulary, objectives };
});
