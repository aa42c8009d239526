// NIST Cybersecurity Framework 2.0 core (NIST CSWP 29, February 2024): 6 functions, 22 categories,
// 106 subcategories. A work of the US Government (public domain), so the outcome statements are
// included. Source: usnistgov/oscal-content NIST_CSF_v2.0_catalog (withdrawn CSF 1.1 entries left out).
import type { Catalogue, CatalogueControl, CatalogueGroup } from './catalogue-types.ts';

type Category = [id: string, title: string, statement: string, subcategories: [number, string][]];
type Fn = [id: string, title: string, statement: string, categories: Category[]];

const CORE: Fn[] = [
  [
    'GV',
    'Govern',
    "The organization's cybersecurity risk management strategy, expectations, and policy are established, communicated, and monitored",
    [
      [
        'GV.OC',
        'Organizational Context',
        "The circumstances - mission, stakeholder expectations, dependencies, and legal, regulatory, and contractual requirements - surrounding the organization's cybersecurity risk management decisions are understood",
        [
          [1, 'The organizational mission is understood and informs cybersecurity risk management'],
          [
            2,
            'Internal and external stakeholders are understood, and their needs and expectations regarding cybersecurity risk management are understood and considered',
          ],
          [
            3,
            'Legal, regulatory, and contractual requirements regarding cybersecurity - including privacy and civil liberties obligations - are understood and managed',
          ],
          [
            4,
            'Critical objectives, capabilities, and services that external stakeholders depend on or expect from the organization are understood and communicated',
          ],
          [5, 'Outcomes, capabilities, and services that the organization depends on are understood and communicated'],
        ],
      ],
      [
        'GV.RM',
        'Risk Management Strategy',
        "The organization's priorities, constraints, risk tolerance and appetite statements, and assumptions are established, communicated, and used to support operational risk decisions",
        [
          [1, 'Risk management objectives are established and agreed to by organizational stakeholders'],
          [2, 'Risk appetite and risk tolerance statements are established, communicated, and maintained'],
          [
            3,
            'Cybersecurity risk management activities and outcomes are included in enterprise risk management processes',
          ],
          [4, 'Strategic direction that describes appropriate risk response options is established and communicated'],
          [
            5,
            'Lines of communication across the organization are established for cybersecurity risks, including risks from suppliers and other third parties',
          ],
          [
            6,
            'A standardized method for calculating, documenting, categorizing, and prioritizing cybersecurity risks is established and communicated',
          ],
          [
            7,
            'Strategic opportunities (i.e., positive risks) are characterized and are included in organizational cybersecurity risk discussions',
          ],
        ],
      ],
      [
        'GV.RR',
        'Roles, Responsibilities, and Authorities',
        'Cybersecurity roles, responsibilities, and authorities to foster accountability, performance assessment, and continuous improvement are established and communicated',
        [
          [
            1,
            'Organizational leadership is responsible and accountable for cybersecurity risk and fosters a culture that is risk-aware, ethical, and continually improving',
          ],
          [
            2,
            'Roles, responsibilities, and authorities related to cybersecurity risk management are established, communicated, understood, and enforced',
          ],
          [
            3,
            'Adequate resources are allocated commensurate with the cybersecurity risk strategy, roles, responsibilities, and policies',
          ],
          [4, 'Cybersecurity is included in human resources practices'],
        ],
      ],
      [
        'GV.PO',
        'Policy',
        'Organizational cybersecurity policy is established, communicated, and enforced',
        [
          [
            1,
            'Policy for managing cybersecurity risks is established based on organizational context, cybersecurity strategy, and priorities and is communicated and enforced',
          ],
          [
            2,
            'Policy for managing cybersecurity risks is reviewed, updated, communicated, and enforced to reflect changes in requirements, threats, technology, and organizational mission',
          ],
        ],
      ],
      [
        'GV.OV',
        'Oversight',
        'Results of organization-wide cybersecurity risk management activities and performance are used to inform, improve, and adjust the risk management strategy',
        [
          [
            1,
            'Cybersecurity risk management strategy outcomes are reviewed to inform and adjust strategy and direction',
          ],
          [
            2,
            'The cybersecurity risk management strategy is reviewed and adjusted to ensure coverage of organizational requirements and risks',
          ],
          [
            3,
            'Organizational cybersecurity risk management performance is evaluated and reviewed for adjustments needed',
          ],
        ],
      ],
      [
        'GV.SC',
        'Cybersecurity Supply Chain Risk Management',
        'Cyber supply chain risk management processes are identified, established, managed, monitored, and improved by organizational stakeholders',
        [
          [
            1,
            'A cybersecurity supply chain risk management program, strategy, objectives, policies, and processes are established and agreed to by organizational stakeholders',
          ],
          [
            2,
            'Cybersecurity roles and responsibilities for suppliers, customers, and partners are established, communicated, and coordinated internally and externally',
          ],
          [
            3,
            'Cybersecurity supply chain risk management is integrated into cybersecurity and enterprise risk management, risk assessment, and improvement processes',
          ],
          [4, 'Suppliers are known and prioritized by criticality'],
          [
            5,
            'Requirements to address cybersecurity risks in supply chains are established, prioritized, and integrated into contracts and other types of agreements with suppliers and other relevant third parties',
          ],
          [
            6,
            'Planning and due diligence are performed to reduce risks before entering into formal supplier or other third-party relationships',
          ],
          [
            7,
            'The risks posed by a supplier, their products and services, and other third parties are understood, recorded, prioritized, assessed, responded to, and monitored over the course of the relationship',
          ],
          [
            8,
            'Relevant suppliers and other third parties are included in incident planning, response, and recovery activities',
          ],
          [
            9,
            'Supply chain security practices are integrated into cybersecurity and enterprise risk management programs, and their performance is monitored throughout the technology product and service life cycle',
          ],
          [
            10,
            'Cybersecurity supply chain risk management plans include provisions for activities that occur after the conclusion of a partnership or service agreement',
          ],
        ],
      ],
    ],
  ],
  [
    'ID',
    'Identify',
    "The organization's current cybersecurity risks are understood",
    [
      [
        'ID.AM',
        'Asset Management',
        "Assets (e.g., data, hardware, software, systems, facilities, services, people) that enable the organization to achieve business purposes are identified and managed consistent with their relative importance to organizational objectives and the organization's risk strategy",
        [
          [1, 'Inventories of hardware managed by the organization are maintained'],
          [2, 'Inventories of software, services, and systems managed by the organization are maintained'],
          [
            3,
            "Representations of the organization's authorized network communication and internal and external network data flows are maintained",
          ],
          [4, 'Inventories of services provided by suppliers are maintained'],
          [5, 'Assets are prioritized based on classification, criticality, resources, and impact on the mission'],
          [7, 'Inventories of data and corresponding metadata for designated data types are maintained'],
          [8, 'Systems, hardware, software, services, and data are managed throughout their life cycles'],
        ],
      ],
      [
        'ID.RA',
        'Risk Assessment',
        'The cybersecurity risk to the organization, assets, and individuals is understood by the organization',
        [
          [1, 'Vulnerabilities in assets are identified, validated, and recorded'],
          [2, 'Cyber threat intelligence is received from information sharing forums and sources'],
          [3, 'Internal and external threats to the organization are identified and recorded'],
          [4, 'Potential impacts and likelihoods of threats exploiting vulnerabilities are identified and recorded'],
          [
            5,
            'Threats, vulnerabilities, likelihoods, and impacts are used to understand inherent risk and inform risk response prioritization',
          ],
          [6, 'Risk responses are chosen, prioritized, planned, tracked, and communicated'],
          [7, 'Changes and exceptions are managed, assessed for risk impact, recorded, and tracked'],
          [8, 'Processes for receiving, analyzing, and responding to vulnerability disclosures are established'],
          [9, 'The authenticity and integrity of hardware and software are assessed prior to acquisition and use'],
          [10, 'Critical suppliers are assessed prior to acquisition'],
        ],
      ],
      [
        'ID.IM',
        'Improvement',
        'Improvements to organizational cybersecurity risk management processes, procedures and activities are identified across all CSF Functions',
        [
          [1, 'Improvements are identified from evaluations'],
          [
            2,
            'Improvements are identified from security tests and exercises, including those done in coordination with suppliers and relevant third parties',
          ],
          [3, 'Improvements are identified from execution of operational processes, procedures, and activities'],
          [
            4,
            'Incident response plans and other cybersecurity plans that affect operations are established, communicated, maintained, and improved',
          ],
        ],
      ],
    ],
  ],
  [
    'PR',
    'Protect',
    "Safeguards to manage the organization's cybersecurity risks are used",
    [
      [
        'PR.AA',
        'Identity Management, Authentication, and Access Control',
        'Access to physical and logical assets is limited to authorized users, services, and hardware and managed commensurate with the assessed risk of unauthorized access',
        [
          [
            1,
            'Identities and credentials for authorized users, services, and hardware are managed by the organization',
          ],
          [2, 'Identities are proofed and bound to credentials based on the context of interactions'],
          [3, 'Users, services, and hardware are authenticated'],
          [4, 'Identity assertions are protected, conveyed, and verified'],
          [
            5,
            'Access permissions, entitlements, and authorizations are defined in a policy, managed, enforced, and reviewed, and incorporate the principles of least privilege and separation of duties',
          ],
          [6, 'Physical access to assets is managed, monitored, and enforced commensurate with risk'],
        ],
      ],
      [
        'PR.AT',
        'Awareness and Training',
        "The organization's personnel are provided with cybersecurity awareness and training so that they can perform their cybersecurity-related tasks",
        [
          [
            1,
            'Personnel are provided with awareness and training so that they possess the knowledge and skills to perform general tasks with cybersecurity risks in mind',
          ],
          [
            2,
            'Individuals in specialized roles are provided with awareness and training so that they possess the knowledge and skills to perform relevant tasks with cybersecurity risks in mind',
          ],
        ],
      ],
      [
        'PR.DS',
        'Data Security',
        "Data are managed consistent with the organization's risk strategy to protect the confidentiality, integrity, and availability of information",
        [
          [1, 'The confidentiality, integrity, and availability of data-at-rest are protected'],
          [2, 'The confidentiality, integrity, and availability of data-in-transit are protected'],
          [10, 'The confidentiality, integrity, and availability of data-in-use are protected'],
          [11, 'Backups of data are created, protected, maintained, and tested'],
        ],
      ],
      [
        'PR.PS',
        'Platform Security',
        "The hardware, software (e.g., firmware, operating systems, applications), and services of physical and virtual platforms are managed consistent with the organization's risk strategy to protect their confidentiality, integrity, and availability",
        [
          [1, 'Configuration management practices are established and applied'],
          [2, 'Software is maintained, replaced, and removed commensurate with risk'],
          [3, 'Hardware is maintained, replaced, and removed commensurate with risk'],
          [4, 'Log records are generated and made available for continuous monitoring'],
          [5, 'Installation and execution of unauthorized software are prevented'],
          [
            6,
            'Secure software development practices are integrated, and their performance is monitored throughout the software development life cycle',
          ],
        ],
      ],
      [
        'PR.IR',
        'Technology Infrastructure Resilience',
        "Security architectures are managed with the organization's risk strategy to protect asset confidentiality, integrity, and availability, and organizational resilience",
        [
          [1, 'Networks and environments are protected from unauthorized logical access and usage'],
          [2, "The organization's technology assets are protected from environmental threats"],
          [3, 'Mechanisms are implemented to achieve resilience requirements in normal and adverse situations'],
          [4, 'Adequate resource capacity to ensure availability is maintained'],
        ],
      ],
    ],
  ],
  [
    'DE',
    'Detect',
    'Possible cybersecurity attacks and compromises are found and analyzed',
    [
      [
        'DE.CM',
        'Continuous Monitoring',
        'Assets are monitored to find anomalies, indicators of compromise, and other potentially adverse events',
        [
          [1, 'Networks and network services are monitored to find potentially adverse events'],
          [2, 'The physical environment is monitored to find potentially adverse events'],
          [3, 'Personnel activity and technology usage are monitored to find potentially adverse events'],
          [6, 'External service provider activities and services are monitored to find potentially adverse events'],
          [
            9,
            'Computing hardware and software, runtime environments, and their data are monitored to find potentially adverse events',
          ],
        ],
      ],
      [
        'DE.AE',
        'Adverse Event Analysis',
        'Anomalies, indicators of compromise, and other potentially adverse events are analyzed to characterize the events and detect cybersecurity incidents',
        [
          [2, 'Potentially adverse events are analyzed to better understand associated activities'],
          [3, 'Information is correlated from multiple sources'],
          [4, 'The estimated impact and scope of adverse events are understood'],
          [6, 'Information on adverse events is provided to authorized staff and tools'],
          [7, 'Cyber threat intelligence and other contextual information are integrated into the analysis'],
          [8, 'Incidents are declared when adverse events meet the defined incident criteria'],
        ],
      ],
    ],
  ],
  [
    'RS',
    'Respond',
    'Actions regarding a detected cybersecurity incident are taken',
    [
      [
        'RS.MA',
        'Incident Management',
        'Responses to detected cybersecurity incidents are managed',
        [
          [
            1,
            'The incident response plan is executed in coordination with relevant third parties once an incident is declared',
          ],
          [2, 'Incident reports are triaged and validated'],
          [3, 'Incidents are categorized and prioritized'],
          [4, 'Incidents are escalated or elevated as needed'],
          [5, 'The criteria for initiating incident recovery are applied'],
        ],
      ],
      [
        'RS.AN',
        'Incident Analysis',
        'Investigations are conducted to ensure effective response and support forensics and recovery activities',
        [
          [
            3,
            'Analysis is performed to establish what has taken place during an incident and the root cause of the incident',
          ],
          [
            6,
            "Actions performed during an investigation are recorded, and the records' integrity and provenance are preserved",
          ],
          [7, 'Incident data and metadata are collected, and their integrity and provenance are preserved'],
          [8, "An incident's magnitude is estimated and validated"],
        ],
      ],
      [
        'RS.CO',
        'Incident Response Reporting and Communication',
        'Response activities are coordinated with internal and external stakeholders as required by laws, regulations, or policies',
        [
          [2, 'Internal and external stakeholders are notified of incidents'],
          [3, 'Information is shared with designated internal and external stakeholders'],
        ],
      ],
      [
        'RS.MI',
        'Incident Mitigation',
        'Activities are performed to prevent expansion of an event and mitigate its effects',
        [
          [1, 'Incidents are contained'],
          [2, 'Incidents are eradicated'],
        ],
      ],
    ],
  ],
  [
    'RC',
    'Recover',
    'Assets and operations affected by a cybersecurity incident are restored',
    [
      [
        'RC.RP',
        'Incident Recovery Plan Execution',
        'Restoration activities are performed to ensure operational availability of systems and services affected by cybersecurity incidents',
        [
          [
            1,
            'The recovery portion of the incident response plan is executed once initiated from the incident response process',
          ],
          [2, 'Recovery actions are selected, scoped, prioritized, and performed'],
          [3, 'The integrity of backups and other restoration assets is verified before using them for restoration'],
          [
            4,
            'Critical mission functions and cybersecurity risk management are considered to establish post-incident operational norms',
          ],
          [
            5,
            'The integrity of restored assets is verified, systems and services are restored, and normal operating status is confirmed',
          ],
          [
            6,
            'The end of incident recovery is declared based on criteria, and incident-related documentation is completed',
          ],
        ],
      ],
      [
        'RC.CO',
        'Incident Recovery Communication',
        'Restoration activities are coordinated with internal and external parties',
        [
          [
            3,
            'Recovery activities and progress in restoring operational capabilities are communicated to designated internal and external stakeholders',
          ],
          [4, 'Public updates on incident recovery are shared using approved methods and messaging'],
        ],
      ],
    ],
  ],
];

const groups: CatalogueGroup[] = [];
const controls: CatalogueControl[] = [];
for (const [fnId, fnTitle, fnStatement, categories] of CORE) {
  groups.push({ id: fnId, title: fnTitle, parentId: null, kind: 'function', description: fnStatement });
  for (const [catId, catTitle, catStatement, subs] of categories) {
    groups.push({ id: catId, title: catTitle, parentId: fnId, kind: 'category', description: catStatement });
    for (const [n, statement] of subs) {
      // Subcategories have no titles of their own; the outcome statement is both.
      controls.push({
        id: `${catId}-${String(n).padStart(2, '0')}`,
        title: statement,
        groupId: catId,
        description: statement,
      });
    }
  }
}

export const NIST_CSF: Catalogue = {
  id: 'nist-csf',
  name: 'NIST Cybersecurity Framework 2.0',
  shortName: 'NIST CSF 2.0',
  edition: 'CSF 2.0 (NIST CSWP 29, 2024)',
  catalogueVersion: 'nist-csf-2.0.1',
  publisher: 'National Institute of Standards and Technology',
  licence: {
    name: 'Public domain (US Government work)',
    textIncluded: true,
    note: 'Outcome statements reproduced from the NIST CSF 2.0 core.',
  },
  controlNoun: 'subcategory',
  groups,
  controls,
};
