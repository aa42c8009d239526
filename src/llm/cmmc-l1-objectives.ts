// What the offline evidence review looks for per assessment objective of the 15 CMMC Level 1
// requirements (objective ids of src/cmmc/cmmc-catalogue.ts). Each objective is a list of groups;
// a sentence addresses the objective when it holds a term of every group (whole words, not negated,
// `*` ends a stem, `~` starts a term that counts negated too). The groups pair the subject (users, media, the boundary, …) with what the
// objective asks of it (listed, limited, monitored, within a time frame, …), so a sentence that only
// names the subject ("our router's firewall and a VPN") does not address every objective.
// Over 500 lines on purpose: a data table: the 59 assessment objectives of CMMC Level 1 with their matching terms.

type Groups = readonly (readonly string[])[];

const USERS = ['authorized users', 'users', 'user', 'employees', 'staff', 'personnel', 'people', 'person', 'accounts'];
const USER_LIST = ['roster', 'user list', 'account list', 'list of users', 'list of accounts', 'user roster'];
const PROCS = [
  'service accounts',
  'service account',
  'processes',
  'automated processes',
  'scripts',
  'integrations',
  'api keys',
  'app passwords',
  'bots',
];
const DEVICES = [
  'devices',
  'device',
  'computers',
  'computer',
  'laptops',
  'workstations',
  'phones',
  'mobile devices',
  'endpoints',
  'device list',
  'device inventory',
  'other systems',
];
const LISTED = [
  'list',
  'listed',
  'lists',
  'roster',
  'inventory',
  'identified',
  'identify',
  'documented',
  'recorded',
  'register',
  'named',
];
const ACCESS = ['access', 'sign in', 'log in', 'login', 'logon', 'connect', 'connects', 'connected', 'connection'];
const LIMITED = [
  'only',
  'limited',
  'limit',
  'limits',
  'restricted',
  'restrict',
  'restricts',
  'authorized',
  'approved',
  'permitted',
  'allowed',
  'blocked',
  'blocks',
  'denied',
  'prohibited',
];
const EXT = [
  'external systems',
  'external system',
  'external connections',
  'external connection',
  'personal devices',
  'personal device',
  'personal phones',
  'byod',
  'cloud services',
  'cloud apps',
  'cloud applications',
  'removable media',
  'usb',
  'personal email',
  'personal e-mail',
  'third-party systems',
  'external',
];
const CONNECTIONS = ['connections', 'connection', 'connect', 'connects', 'connected', 'remote access', 'vpn'];
const USE = ['use', 'used', 'uses', 'usage', 'using'];
const VERIFIED = [
  'verified',
  'verify',
  'verifies',
  'checked',
  'approved',
  'approval',
  'reviewed',
  'assessed',
  'vetted',
];
const CONTROLLED = ['controlled', 'control', 'controls', ...LIMITED, 'forbidden', 'disabled'];
const PUBLIC = [
  'public website',
  'website',
  'social media',
  'publicly accessible',
  'public sites',
  'public site',
  'public systems',
  'public content',
  'linkedin',
  'blog',
];
// "No FCI is posted" is what these objectives ask for, so a negated mention counts.
const FCI = ['~fci', '~federal contract information', '~contract information'];
const POST = ['post', 'posts', 'posted', 'posting', 'publish', 'published', 'publishing', 'content'];
const REVIEW = ['review', 'reviews', 'reviewed', 'checked', 'approval', 'approved', 'audited', 'audit'];
const UNIQUE = [
  'unique',
  'own',
  'individual',
  'identifier',
  'identifiers',
  'user id',
  'username',
  'usernames',
  'named',
];
const AUTHN = [
  'password',
  'passwords',
  'passphrase',
  'multi-factor',
  'mfa',
  'two-factor',
  '2fa',
  'authenticate',
  'authenticated',
  'authentication',
  'authenticator',
];
const MEDIA = [
  'media',
  'drives',
  'drive',
  'hard drives',
  'disks',
  'disk',
  'usb',
  'laptops',
  'computers',
  'phones',
  'paper',
  'storage',
  'devices',
];
const SANITIZE = [
  'sanitize',
  'sanitized',
  'sanitization',
  'sanitizing',
  'destroy',
  'destroyed',
  'destruction',
  'shred',
  'shredded',
  'shredding',
  'wipe',
  'wiped',
  'wiping',
  'degauss',
  'degaussed',
  'erase',
  'erased',
  'nist 800-88',
];
const PREMISES = [
  'office',
  'offices',
  'premises',
  'building',
  'facility',
  'server room',
  'network closet',
  'closet',
  'home office',
  'home offices',
  'work area',
  'work areas',
];
const LOCKED = ['locked', 'lock', 'locks', 'badge', 'badges', 'key card', 'keycard', 'restricted', 'only authorized'];
const VISITORS = ['visitor', 'visitors', 'guest', 'guests', 'contractors'];
const KEYS = [
  'keys',
  'key',
  'badges',
  'badge',
  'key cards',
  'door codes',
  'door code',
  'codes',
  'fobs',
  'fob',
  'access cards',
  'physical access devices',
];
const EDGE = [
  'firewall',
  'firewalls',
  'router',
  'routers',
  'gateway',
  'perimeter',
  'boundary',
  'internet',
  'external boundary',
  'edge',
];
const EXT_BOUNDARY = [
  'external boundary',
  'external system boundary',
  'internet boundary',
  'network boundary',
  'perimeter',
  'internet edge',
  'boundary',
  'network diagram',
];
const INTERNAL = [
  'internal boundaries',
  'internal boundary',
  'guest wi-fi',
  'guest wifi',
  'guest network',
  'vlan',
  'vlans',
  'segment',
  'segments',
  'segmentation',
  'segmented',
  'internal network',
  'internal networks',
  'separate network',
  'subnet',
  'subnets',
];
const DEFINED = ['defined', 'define', 'documented', 'diagram', 'shows', 'shown', 'identified', 'described', 'drawn'];
const MONITORED = ['monitor', 'monitored', 'monitoring', 'logs', 'logged', 'logging', 'alerts', 'alerting', 'reviewed'];
const FILTERED = [
  'block',
  'blocks',
  'blocked',
  'deny',
  'denies',
  'filter',
  'filters',
  'filtered',
  'rules',
  'controlled',
  'controls',
  'restricted',
  'restricts',
  'isolated',
];
const PROTECTED = [
  'protected',
  'protect',
  'protects',
  'encrypted',
  'encryption',
  'vpn',
  'tls',
  'wpa2',
  'wpa3',
  'isolated',
];
const PUBLIC_PARTS = [
  'public website',
  'website',
  'web server',
  'publicly accessible',
  'public-facing',
  'guest wi-fi',
  'guest wifi',
  'guest network',
  'dmz',
  'demilitarized zone',
  'public systems',
  'public servers',
];
const FLAWS = [
  'flaws',
  'flaw',
  'vulnerabilit*',
  'patches',
  'patch',
  'updates',
  'update',
  'security updates',
  'advisories',
  'bugs',
  'firmware',
];
const TIME = [
  'days',
  'day',
  'hours',
  'weekly',
  'monthly',
  'daily',
  'within',
  'time frame',
  'time frames',
  'timeframe',
  'timeframes',
  'deadline',
];
const SPECIFIED = ['must', 'shall', 'required', 'policy', 'procedure', 'written', 'specified', 'defined', 'rule'];
const DONE = ['record', 'records', 'recorded', 'log', 'logs', 'logged', 'tracked', 'history', 'ticket', 'tickets'];
const IDENTIFY = [
  'identify',
  'identified',
  'identifying',
  'watch',
  'watches',
  'watched',
  'monitor',
  'monitors',
  'monitored',
  'check',
  'checks',
  'checked',
  'scan',
  'scanned',
  'reviewed',
];
const REPORT = ['report', 'reported', 'reports', 'reporting', 'notify', 'notified', 'escalate', 'escalated', 'inform'];
const CORRECT = [
  'correct',
  'corrected',
  'fix',
  'fixed',
  'remediate',
  'remediated',
  'remediation',
  'patch',
  'patched',
  'apply',
  'applied',
  'install',
  'installed',
];
const MALWARE = [
  'malware',
  'malicious code',
  'anti-malware',
  'antimalware',
  'antivirus',
  'anti-virus',
  'virus',
  'viruses',
  'endpoint protection',
  'defender',
  'xprotect',
  'edr',
];
const LOCATIONS = [
  'every computer',
  'all computers',
  'computers',
  'laptops',
  'workstations',
  'endpoints',
  'servers',
  'email',
  'e-mail',
  'mail',
  'mail system',
  'locations',
];
const SCANS = ['scan', 'scans', 'scanned', 'scanning'];
const FREQUENCY = ['weekly', 'daily', 'monthly', 'nightly', 'every', 'schedule', 'scheduled', 'frequency', 'each'];

const O = (id: string, letters: Record<string, Groups>) =>
  Object.entries(letters).map(([l, g]) => [`${id}[${l}]`, g] as const);

export const OBJECTIVE_TERMS: Readonly<Record<string, Groups>> = Object.fromEntries([
  ...O('AC.L1-b.1.i', {
    a: [
      [...USERS, ...USER_LIST],
      [...LISTED, ...USER_LIST],
    ],
    b: [PROCS, LISTED],
    c: [DEVICES, [...LISTED, 'approved']],
    d: [ACCESS, USERS, LIMITED],
    e: [ACCESS, PROCS, LIMITED],
    f: [ACCESS, DEVICES, LIMITED],
  }),
  ...O('AC.L1-b.1.ii', {
    a: [
      ['transactions', 'functions', 'permissions', 'roles', 'role', 'privileges', 'rights', 'permission matrix'],
      ['defined', 'define', 'documented', 'matrix', 'listed', 'specified', 'assigned', 'described'],
    ],
    b: [
      [
        'least privilege',
        'standard user',
        'standard users',
        'standard account',
        'standard accounts',
        'non-administrator',
      ],
      ['access', 'accounts', 'rights', 'privileges', 'permissions', 'functions', 'work', 'daily'],
    ],
  }),
  ...O('AC.L1-b.1.iii', {
    a: [CONNECTIONS, EXT, LISTED],
    b: [USE, EXT, LISTED],
    c: [CONNECTIONS, EXT, VERIFIED],
    d: [USE, EXT, VERIFIED],
    e: [CONNECTIONS, EXT, CONTROLLED],
    f: [[...USE, 'may'], EXT, CONTROLLED],
  }),
  ...O('AC.L1-b.1.iv', {
    a: [PUBLIC, POST, ['named', 'authorized', 'designated', 'identified', 'only', 'listed', 'allowed']],
    b: [FCI, [...PUBLIC, ...POST], ['never', 'procedure', 'rule', 'rules', 'prohibited', 'policy', 'forbidden']],
    c: [REVIEW, ['before', 'prior to', 'pre-posting'], [...POST, ...PUBLIC]],
    d: [REVIEW, PUBLIC, FCI],
    e: [
      ['remove', 'removed', 'removal', 'take down', 'takedown', 'taken down', 'delete', 'deleted'],
      [...FCI, ...POST],
    ],
  }),
  ...O('IA.L1-b.1.v', {
    a: [USERS, UNIQUE],
    b: [PROCS, [...UNIQUE, 'listed', 'identified', 'list']],
    c: [DEVICES, ['identified', 'named', 'name', 'serial number', 'asset tag', 'inventory', 'listed', 'hostname']],
  }),
  ...O('IA.L1-b.1.vi', {
    a: [[...USERS, 'sign-in', 'login', 'log in'], AUTHN],
    b: [
      PROCS,
      ['key', 'keys', 'app passwords', 'credentials', 'certificate', 'certificates', 'token', 'tokens', ...AUTHN],
    ],
    c: [
      [...DEVICES, 'router', 'routers', 'printers', 'wi-fi', 'wifi'],
      ['certificate', 'certificates', 'authenticated', 'default passwords', 'wpa2', 'wpa3', 'enrolled', 'registered'],
    ],
  }),
  ...O('MP.L1-b.1.vii', {
    a: [
      MEDIA,
      SANITIZE,
      ['disposal', 'dispose', 'disposed', 'discard', 'discarded', 'recycle', 'recycled', 'thrown away', 'retired'],
    ],
    b: [MEDIA, SANITIZE, ['reuse', 'reused', 're-use', 'reissued', 'reissue', 'reassigned', 'redeployed']],
  }),
  ...O('PE.L1-b.1.viii', {
    a: [
      ['list', 'listed', 'named', 'roster', 'identified'],
      ['physical access', ...PREMISES, 'enter', 'keys', 'badges'],
      ['people', 'persons', 'personnel', 'individuals', 'employees', 'staff'],
    ],
    b: [
      ['physical access', ...PREMISES],
      [...LOCKED, 'authorized'],
    ],
    c: [
      ['equipment', 'servers', 'server', 'network equipment', 'router', 'switch', 'rack', 'server room', 'closet'],
      [...LOCKED, 'authorized', 'cabinet'],
    ],
    d: [
      [...PREMISES, 'operating environment'],
      [...LOCKED, 'authorized', 'unattended'],
    ],
  }),
  ...O('PE.L1-b.1.ix', {
    a: [VISITORS, ['escort', 'escorted', 'escorts', 'accompanied', 'accompany']],
    b: [VISITORS, ['monitor', 'monitored', 'monitoring', 'watched', 'observed', 'supervised', 'supervision', 'camera']],
    c: [
      ['log', 'logs', 'logged', 'sign-in sheet', 'visitor log', 'access log', 'records', 'register'],
      [...VISITORS, 'physical access', 'entry', 'entries', 'door'],
      ['kept', 'retained', 'maintained', 'retention', 'stored', 'archived', 'keep', 'keeps'],
    ],
    d: [KEYS, ['list', 'listed', 'inventory', 'identified', 'recorded', 'register', 'tracked']],
    e: [KEYS, ['collected', 'returned', 'revoked', 'changed', 'deactivated', 'disabled', 'controlled', 'issued']],
    f: [
      KEYS,
      ['managed', 'management', 'inventory', 'reviewed', 'audited', 'rekeyed', 're-keyed', 'reconciled', 'changed'],
    ],
  }),
  ...O('SC.L1-b.1.x', {
    a: [EXT_BOUNDARY, DEFINED],
    b: [INTERNAL, DEFINED],
    c: [MONITORED, EDGE],
    d: [MONITORED, INTERNAL],
    e: [FILTERED, EDGE],
    f: [[...FILTERED, 'separated', 'firewall'], INTERNAL],
    g: [PROTECTED, ['external boundary', 'internet', 'perimeter', 'boundary', 'remote workers', 'remote access']],
    h: [[...PROTECTED, 'firewall', 'firewalled'], INTERNAL],
  }),
  ...O('SC.L1-b.1.xi', {
    a: [PUBLIC_PARTS, ['identified', 'listed', 'list', 'inventory', 'named', 'documented', 'hosted', 'include']],
    b: [
      PUBLIC_PARTS,
      ['separate', 'separated', 'separation', 'segmented', 'segmentation', 'subnet', 'vlan', 'dmz', 'isolated'],
      ['internal', 'internal network', 'internal networks', 'office network', 'company network', 'office'],
    ],
  }),
  ...O('SI.L1-b.1.xii', {
    a: [IDENTIFY, FLAWS, TIME, SPECIFIED],
    b: [IDENTIFY, FLAWS, TIME, DONE],
    c: [REPORT, FLAWS, TIME, SPECIFIED],
    d: [REPORT, FLAWS, TIME, DONE],
    e: [CORRECT, FLAWS, TIME, SPECIFIED],
    f: [CORRECT, FLAWS, TIME, DONE],
  }),
  ...O('SI.L1-b.1.xiii', {
    a: [MALWARE, LOCATIONS, ['designated', 'identified', 'listed', 'named', 'required', 'must', 'every', 'all']],
    b: [MALWARE, LOCATIONS, ['installed', 'enabled', 'running', 'active', 'protects', 'protected', 'filters', 'scans']],
  }),
  ...O('SI.L1-b.1.xiv', {
    a: [
      [...MALWARE, 'definitions', 'signatures'],
      ['updated', 'updates', 'update', 'updating'],
      ['automatically', 'automatic', 'auto-update', 'new releases', 'when available', 'as soon as', 'hourly', 'daily'],
    ],
  }),
  ...O('SI.L1-b.1.xv', {
    a: [SCANS, FREQUENCY, [...MALWARE, 'full', 'quick'], [...SPECIFIED, 'configured', 'set']],
    b: [SCANS, FREQUENCY, [...MALWARE, 'full', 'quick'], ['run', 'runs', 'performed', 'completed', ...DONE, 'results']],
    c: [
      ['real-time', 'real time', 'realtime', 'on-access', 'on access'],
      ['files', 'downloads', 'downloaded', 'attachments', 'opened', 'executed', 'usb', 'removable media'],
    ],
  }),
]);
