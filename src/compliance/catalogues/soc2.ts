// SOC 2: the AICPA 2017 Trust Services Criteria (criteria numbering unchanged by the 2022 revised
// points of focus). The criteria text is © AICPA, so each criterion carries its number and a short
// title of our own wording; no criteria text or points of focus are bundled.
import type { Catalogue, CatalogueControl, CatalogueGroup } from './catalogue-types.ts';

type Series = [id: string, title: string, category: string, criteria: string[]];

const CATEGORIES: [id: string, title: string][] = [
  ['security', 'Security (Common Criteria)'],
  ['availability', 'Availability'],
  ['confidentiality', 'Confidentiality'],
  ['processing-integrity', 'Processing Integrity'],
  ['privacy', 'Privacy'],
];

const SERIES: Series[] = [
  [
    'CC1',
    'Control Environment',
    'security',
    [
      'Commitment to integrity and ethical values',
      'Board independence and oversight of internal control',
      'Structures, reporting lines, authorities and responsibilities',
      'Commitment to attract, develop and retain competent individuals',
      'Accountability for internal control responsibilities',
    ],
  ],
  [
    'CC2',
    'Communication and Information',
    'security',
    [
      'Relevant, quality information to support internal control',
      'Internal communication of objectives and responsibilities',
      'Communication with external parties',
    ],
  ],
  [
    'CC3',
    'Risk Assessment',
    'security',
    [
      'Objectives specified clearly enough to identify risks',
      'Risk identification and analysis',
      'Consideration of fraud risk',
      'Identification and assessment of significant changes',
    ],
  ],
  [
    'CC4',
    'Monitoring Activities',
    'security',
    ['Ongoing and separate evaluations of controls', 'Evaluation and communication of control deficiencies'],
  ],
  [
    'CC5',
    'Control Activities',
    'security',
    [
      'Control activities that mitigate risks',
      'General control activities over technology',
      'Control activities deployed through policies and procedures',
    ],
  ],
  [
    'CC6',
    'Logical and Physical Access Controls',
    'security',
    [
      'Logical access security software, infrastructure and architectures',
      'User registration, authorization and removal',
      'Role-based access, least privilege and segregation of duties',
      'Physical access restrictions',
      'Protection of data when assets are disposed of',
      'Protection against threats from outside system boundaries',
      'Restriction and protection of information in transmission',
      'Prevention and detection of unauthorized or malicious software',
    ],
  ],
  [
    'CC7',
    'System Operations',
    'security',
    [
      'Detection of configuration changes and new vulnerabilities',
      'Monitoring of system components for anomalies',
      'Evaluation of security events',
      'Response to security incidents',
      'Recovery from security incidents',
    ],
  ],
  ['CC8', 'Change Management', 'security', ['Authorization, testing and approval of changes']],
  [
    'CC9',
    'Risk Mitigation',
    'security',
    ['Mitigation of business disruption risks', 'Vendor and business partner risk management'],
  ],
  [
    'A1',
    'Additional Criteria for Availability',
    'availability',
    [
      'Capacity management',
      'Environmental protections, backup and recovery infrastructure',
      'Testing of recovery plan procedures',
    ],
  ],
  [
    'C1',
    'Additional Criteria for Confidentiality',
    'confidentiality',
    ['Identification and maintenance of confidential information', 'Disposal of confidential information'],
  ],
  [
    'PI1',
    'Additional Criteria for Processing Integrity',
    'processing-integrity',
    [
      'Information about processing objectives and specifications',
      'Complete and accurate system inputs',
      'Complete, accurate and timely processing',
      'Complete, accurate and timely outputs',
      'Storage of inputs, items in processing and outputs',
    ],
  ],
  ['P1', 'Notice and Communication of Objectives Related to Privacy', 'privacy', ['Privacy notice']],
  ['P2', 'Choice and Consent', 'privacy', ['Choice and consent']],
  [
    'P3',
    'Collection',
    'privacy',
    ['Collection consistent with privacy objectives', 'Explicit consent for sensitive personal information'],
  ],
  [
    'P4',
    'Use, Retention, and Disposal',
    'privacy',
    ['Use limited to privacy objectives', 'Retention of personal information', 'Disposal of personal information'],
  ],
  ['P5', 'Access', 'privacy', ['Data subject access to personal information', 'Correction of personal information']],
  [
    'P6',
    'Disclosure and Notification',
    'privacy',
    [
      'Disclosure to third parties with consent',
      'Record of authorized disclosures',
      'Record of unauthorized disclosures',
      'Privacy commitments of vendors and third parties',
      'Notification of unauthorized disclosures by third parties',
      'Notification of breaches and incidents',
      'Accounting of disclosed personal information',
    ],
  ],
  ['P7', 'Quality', 'privacy', ['Accurate, complete and relevant personal information']],
  ['P8', 'Monitoring and Enforcement', 'privacy', ['Handling of privacy inquiries, complaints and disputes']],
];

const groups: CatalogueGroup[] = [
  ...CATEGORIES.map(([id, title]) => ({ id, title, parentId: null, kind: 'category' })),
  ...SERIES.map(([id, title, category]) => ({ id, title, parentId: category, kind: 'criteria series' })),
];
const controls: CatalogueControl[] = SERIES.flatMap(([id, , , titles]) =>
  titles.map((title, i) => ({ id: `${id}.${i + 1}`, title, groupId: id })),
);

export const SOC2: Catalogue = {
  id: 'soc2',
  name: 'SOC 2 Trust Services Criteria',
  shortName: 'SOC 2',
  edition: 'TSC 2017 (revised points of focus 2022)',
  catalogueVersion: 'soc2-2017.1',
  publisher: 'AICPA',
  licence: {
    name: '© AICPA, all rights reserved',
    textIncluded: false,
    note: 'Criterion numbers with short titles in our own words; the criteria text and points of focus are not included.',
  },
  controlNoun: 'criterion',
  groups,
  controls,
};
