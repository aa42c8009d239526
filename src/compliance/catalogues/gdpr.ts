// GDPR (Regulation (EU) 2016/679): the articles that put obligations on how personal data are
// processed and secured, with their official titles. EU legislation may be reused (Commission
// Decision 2011/833/EU); the one-line summaries are ours.
import type { Catalogue, CatalogueControl, CatalogueGroup } from './catalogue-types.ts';

const CHAPTERS: [id: string, title: string, articles: [n: number, title: string, summary?: string][]][] = [
  [
    'II',
    'Principles',
    [
      [
        5,
        'Principles relating to processing of personal data',
        'Lawfulness, fairness, transparency, purpose limitation, data minimisation, accuracy, storage limitation, integrity and confidentiality, and accountability.',
      ],
      [6, 'Lawfulness of processing', 'Processing needs one of the listed legal bases.'],
      [
        7,
        'Conditions for consent',
        'Consent must be demonstrable, distinguishable and as easy to withdraw as to give.',
      ],
      [9, 'Processing of special categories of personal data'],
      [10, 'Processing of personal data relating to criminal convictions and offences'],
    ],
  ],
  [
    'III',
    'Rights of the data subject',
    [
      [12, 'Transparent information, communication and modalities for the exercise of the rights of the data subject'],
      [13, 'Information to be provided where personal data are collected from the data subject'],
      [14, 'Information to be provided where personal data have not been obtained from the data subject'],
      [15, 'Right of access by the data subject'],
      [16, 'Right to rectification'],
      [17, "Right to erasure ('right to be forgotten')"],
      [18, 'Right to restriction of processing'],
      [19, 'Notification obligation regarding rectification or erasure of personal data or restriction of processing'],
      [20, 'Right to data portability'],
      [21, 'Right to object'],
      [22, 'Automated individual decision-making, including profiling'],
    ],
  ],
  [
    'IV',
    'Controller and processor',
    [
      [
        24,
        'Responsibility of the controller',
        'Appropriate technical and organisational measures, reviewed and updated, and the ability to demonstrate them.',
      ],
      [
        25,
        'Data protection by design and by default',
        'Build data protection into processing and process only what each purpose needs by default.',
      ],
      [26, 'Joint controllers'],
      [27, 'Representatives of controllers or processors not established in the Union'],
      [28, 'Processor', 'Use only processors with sufficient guarantees, bound by a contract with the required terms.'],
      [29, 'Processing under the authority of the controller or processor'],
      [30, 'Records of processing activities', 'Keep written records of processing activities.'],
      [31, 'Cooperation with the supervisory authority'],
      [
        32,
        'Security of processing',
        'Security appropriate to the risk: e.g. pseudonymisation and encryption, ongoing confidentiality, integrity, availability and resilience, timely restore, and regular testing of the measures.',
      ],
      [
        33,
        'Notification of a personal data breach to the supervisory authority',
        'Notify the supervisory authority without undue delay and, where feasible, within 72 hours; document every breach.',
      ],
      [
        34,
        'Communication of a personal data breach to the data subject',
        'Tell affected people without undue delay when a breach is likely to result in a high risk to them.',
      ],
      [35, 'Data protection impact assessment', 'Assess high-risk processing before it starts.'],
      [36, 'Prior consultation'],
      [37, 'Designation of the data protection officer'],
      [38, 'Position of the data protection officer'],
      [39, 'Tasks of the data protection officer'],
    ],
  ],
  [
    'V',
    'Transfers of personal data to third countries or international organisations',
    [
      [44, 'General principle for transfers', 'Transfers outside the EU/EEA only under the conditions of Chapter V.'],
      [45, 'Transfers on the basis of an adequacy decision'],
      [46, 'Transfers subject to appropriate safeguards'],
      [47, 'Binding corporate rules'],
      [49, 'Derogations for specific situations'],
    ],
  ],
];

const groups: CatalogueGroup[] = CHAPTERS.map(([id, title]) => ({
  id: `Chapter ${id}`,
  title,
  parentId: null,
  kind: 'chapter',
}));
const controls: CatalogueControl[] = CHAPTERS.flatMap(([chapter, , articles]) =>
  articles.map(([n, title, summary]) => ({
    id: `Art. ${n}`,
    title,
    groupId: `Chapter ${chapter}`,
    ...(summary ? { description: summary } : {}),
  })),
);

export const GDPR: Catalogue = {
  id: 'gdpr',
  name: 'General Data Protection Regulation',
  shortName: 'GDPR',
  edition: 'Regulation (EU) 2016/679',
  catalogueVersion: 'gdpr-2016-679.1',
  publisher: 'European Union',
  licence: {
    name: 'EU legislation (reuse permitted)',
    textIncluded: true,
    note: 'Official article titles; the summaries are plain-language aids, not the legal text.',
  },
  controlNoun: 'article',
  groups,
  controls,
};
