// Finding classes → framework controls. A finding is classed by its CWE ids and by its rule id
// (longest matching prefix); when neither says anything, by the kind of scanner that found it.
// The table stores control identifiers only, never control text. Pure functions: the findings
// module and the web app (through the API) use the same answers.
import { controlIndex, findControl, FRAMEWORK_IDS, type FrameworkId } from './catalogues.ts';

export interface ControlRef {
  framework: FrameworkId;
  controlId: string;
}

export interface FindingClass {
  id: string;
  title: string;
  controls: Readonly<Partial<Record<FrameworkId, readonly string[]>>>;
}

export interface FindingToMap {
  /** CWE numbers (e.g. 319 for CWE-319); may be empty. */
  cwe?: readonly number[] | null;
  ruleId?: string | null;
  /** Scanner kind: port, template, webapp, container, edge. */
  scanner?: string | null;
}

/** The finding classes and the controls each one bears on. */
export const FINDING_CLASSES: readonly FindingClass[] = [
  {
    id: 'cleartext-transport',
    title: 'Data sent in cleartext or without enforced HTTPS',
    controls: {
      soc2: ['CC6.1', 'CC6.7'],
      gdpr: ['Art. 32'],
      iso27001: ['A.8.24', 'A.5.14', 'A.8.20'],
      'nist-csf': ['PR.DS-02'],
      'cis-v8': ['3.10', '12.6'],
    },
  },
  {
    id: 'weak-transport-crypto',
    title: 'Weak TLS protocols, cipher suites or keys',
    controls: {
      soc2: ['CC6.1', 'CC6.7'],
      gdpr: ['Art. 32'],
      iso27001: ['A.8.24', 'A.8.20'],
      'nist-csf': ['PR.DS-02', 'PR.PS-01'],
      'cis-v8': ['3.10', '4.1'],
    },
  },
  {
    id: 'certificate',
    title: 'Expired, untrusted, mismatched or weak TLS certificates',
    controls: {
      soc2: ['CC6.1', 'CC6.7'],
      gdpr: ['Art. 32'],
      iso27001: ['A.8.24', 'A.5.17'],
      'nist-csf': ['PR.DS-02', 'PR.AA-01'],
      'cis-v8': ['3.10', '4.6'],
    },
  },
  {
    id: 'weak-crypto-storage',
    title: 'Sensitive data stored without (adequate) encryption',
    controls: {
      soc2: ['CC6.1', 'C1.1'],
      gdpr: ['Art. 32'],
      iso27001: ['A.8.24', 'A.5.33'],
      'nist-csf': ['PR.DS-01'],
      'cis-v8': ['3.11'],
    },
  },
  {
    id: 'information-exposure',
    title: 'Sensitive information or files exposed',
    controls: {
      soc2: ['CC6.1', 'C1.1'],
      gdpr: ['Art. 5', 'Art. 32'],
      iso27001: ['A.8.3', 'A.8.12', 'A.5.12'],
      'nist-csf': ['PR.DS-01', 'PR.AA-05'],
      'cis-v8': ['3.3', '4.1'],
    },
  },
  {
    id: 'version-disclosure',
    title: 'Software version and system details disclosed',
    controls: { soc2: ['CC6.1'], iso27001: ['A.8.9'], 'nist-csf': ['PR.PS-01'], 'cis-v8': ['4.1', '16.7'] },
  },
  {
    id: 'security-misconfiguration',
    title: 'Missing security headers, cookie flags and other hardening',
    controls: {
      soc2: ['CC6.1', 'CC8.1'],
      gdpr: ['Art. 25', 'Art. 32'],
      iso27001: ['A.8.9', 'A.8.26'],
      'nist-csf': ['PR.PS-01'],
      'cis-v8': ['4.1', '16.7'],
    },
  },
  {
    id: 'cors',
    title: 'Permissive cross-origin resource sharing',
    controls: {
      soc2: ['CC6.1', 'CC6.6'],
      gdpr: ['Art. 32'],
      iso27001: ['A.8.9', 'A.8.26'],
      'nist-csf': ['PR.PS-01', 'PR.AA-05'],
      'cis-v8': ['4.1', '16.7'],
    },
  },
  {
    id: 'directory-listing',
    title: 'Directory listing enabled',
    controls: {
      soc2: ['CC6.1'],
      gdpr: ['Art. 32'],
      iso27001: ['A.8.9', 'A.8.3'],
      'nist-csf': ['PR.PS-01', 'PR.DS-01'],
      'cis-v8': ['4.1', '4.8'],
    },
  },
  {
    id: 'hardcoded-credentials',
    title: 'Hard-coded, leaked or weakly protected credentials',
    controls: {
      soc2: ['CC6.1'],
      gdpr: ['Art. 32'],
      iso27001: ['A.5.17', 'A.8.4', 'A.8.28'],
      'nist-csf': ['PR.AA-01', 'PR.PS-06'],
      'cis-v8': ['5.2', '16.1'],
    },
  },
  {
    id: 'default-credentials',
    title: 'Default or weak credentials accepted',
    controls: {
      soc2: ['CC6.1', 'CC6.2'],
      gdpr: ['Art. 32'],
      iso27001: ['A.5.17', 'A.8.5'],
      'nist-csf': ['PR.AA-01', 'PR.AA-03'],
      'cis-v8': ['4.7', '5.2'],
    },
  },
  {
    id: 'authentication',
    title: 'Missing or broken authentication',
    controls: {
      soc2: ['CC6.1', 'CC6.2'],
      gdpr: ['Art. 32'],
      iso27001: ['A.8.5', 'A.5.17'],
      'nist-csf': ['PR.AA-03'],
      'cis-v8': ['6.3', '6.5'],
    },
  },
  {
    id: 'access-control',
    title: 'Broken access control or authorization',
    controls: {
      soc2: ['CC6.1', 'CC6.3'],
      gdpr: ['Art. 25', 'Art. 32'],
      iso27001: ['A.5.15', 'A.8.3'],
      'nist-csf': ['PR.AA-05'],
      'cis-v8': ['3.3', '6.8'],
    },
  },
  {
    id: 'application-vulnerability',
    title: 'Application flaws: injection, XSS, SSRF, CSRF, open redirect',
    controls: {
      soc2: ['CC7.1', 'CC8.1'],
      gdpr: ['Art. 25', 'Art. 32'],
      iso27001: ['A.8.28', 'A.8.26', 'A.8.8'],
      'nist-csf': ['ID.RA-01', 'PR.PS-06'],
      'cis-v8': ['16.1', '7.7'],
    },
  },
  {
    id: 'vulnerable-component',
    title: 'Vulnerable or unsupported software components',
    controls: {
      soc2: ['CC7.1'],
      gdpr: ['Art. 32'],
      iso27001: ['A.8.8', 'A.8.19'],
      'nist-csf': ['ID.RA-01', 'PR.PS-02'],
      'cis-v8': ['7.4', '7.7', '16.5', '2.2'],
    },
  },
  {
    id: 'vulnerable-os-package',
    title: 'Vulnerable operating-system packages',
    controls: {
      soc2: ['CC7.1'],
      gdpr: ['Art. 32'],
      iso27001: ['A.8.8'],
      'nist-csf': ['ID.RA-01', 'PR.PS-02'],
      'cis-v8': ['7.3', '7.7'],
    },
  },
  {
    id: 'exposed-service',
    title: 'Exposed network services and open ports',
    controls: {
      soc2: ['CC6.6'],
      gdpr: ['Art. 32'],
      iso27001: ['A.8.20', 'A.8.21', 'A.8.22'],
      'nist-csf': ['PR.IR-01', 'ID.AM-03'],
      'cis-v8': ['4.4', '4.8', '12.2'],
    },
  },
  {
    id: 'availability',
    title: 'Resource exhaustion and denial of service',
    controls: { soc2: ['A1.1'], gdpr: ['Art. 32'], iso27001: ['A.8.6'], 'nist-csf': ['PR.IR-04'], 'cis-v8': ['16.1'] },
  },
  {
    id: 'email-authentication',
    title: 'Missing or weak e-mail sender authentication (SPF, DKIM, DMARC)',
    controls: { soc2: ['CC6.6'], iso27001: ['A.5.14', 'A.8.21'], 'nist-csf': ['PR.PS-01'], 'cis-v8': ['9.5'] },
  },
];

/** CWE → finding classes. Only weaknesses our scanners report or commonly carry. */
const CWE_CLASSES: Readonly<Record<number, readonly string[]>> = {
  // cleartext transport
  319: ['cleartext-transport'],
  523: ['cleartext-transport'],
  5: ['cleartext-transport'],
  614: ['cleartext-transport', 'security-misconfiguration'],
  // crypto
  311: ['weak-crypto-storage', 'cleartext-transport'],
  312: ['weak-crypto-storage'],
  313: ['weak-crypto-storage'],
  316: ['weak-crypto-storage'],
  326: ['weak-transport-crypto'],
  327: ['weak-transport-crypto'],
  328: ['weak-crypto-storage'],
  330: ['weak-crypto-storage'],
  757: ['weak-transport-crypto'],
  916: ['weak-crypto-storage'],
  1240: ['weak-transport-crypto'],
  // certificates
  295: ['certificate'],
  296: ['certificate'],
  297: ['certificate'],
  298: ['certificate'],
  299: ['certificate'],
  324: ['certificate'],
  599: ['certificate'],
  // information exposure
  200: ['information-exposure'],
  201: ['information-exposure'],
  209: ['information-exposure'],
  212: ['information-exposure'],
  215: ['information-exposure'],
  359: ['information-exposure'],
  532: ['information-exposure'],
  538: ['information-exposure'],
  540: ['information-exposure'],
  541: ['information-exposure'],
  552: ['information-exposure'],
  615: ['information-exposure'],
  219: ['information-exposure'],
  527: ['information-exposure'],
  530: ['information-exposure'],
  497: ['version-disclosure'],
  // misconfiguration and missing protections
  16: ['security-misconfiguration'],
  693: ['security-misconfiguration'],
  1021: ['security-misconfiguration'],
  1004: ['security-misconfiguration'],
  1275: ['security-misconfiguration'],
  525: ['security-misconfiguration'],
  524: ['security-misconfiguration'],
  565: ['security-misconfiguration'],
  1032: ['security-misconfiguration'],
  2: ['security-misconfiguration'],
  250: ['security-misconfiguration'],
  942: ['cors'],
  346: ['cors'],
  183: ['cors'],
  548: ['directory-listing'],
  // credentials
  798: ['hardcoded-credentials'],
  259: ['hardcoded-credentials'],
  321: ['hardcoded-credentials'],
  522: ['hardcoded-credentials'],
  256: ['hardcoded-credentials'],
  257: ['hardcoded-credentials'],
  260: ['hardcoded-credentials'],
  1391: ['default-credentials'],
  1392: ['default-credentials'],
  1393: ['default-credentials'],
  521: ['default-credentials'],
  262: ['default-credentials'],
  // authentication and access control
  287: ['authentication'],
  288: ['authentication'],
  290: ['authentication'],
  306: ['authentication'],
  307: ['authentication'],
  308: ['authentication'],
  384: ['authentication'],
  613: ['authentication'],
  620: ['authentication'],
  640: ['authentication'],
  1390: ['authentication'],
  284: ['access-control'],
  285: ['access-control'],
  862: ['access-control'],
  863: ['access-control'],
  639: ['access-control'],
  269: ['access-control'],
  732: ['access-control'],
  276: ['access-control'],
  425: ['access-control'],
  668: ['access-control', 'exposed-service'],
  // application flaws
  20: ['application-vulnerability'],
  22: ['application-vulnerability'],
  74: ['application-vulnerability'],
  77: ['application-vulnerability'],
  78: ['application-vulnerability'],
  79: ['application-vulnerability'],
  89: ['application-vulnerability'],
  90: ['application-vulnerability'],
  91: ['application-vulnerability'],
  94: ['application-vulnerability'],
  98: ['application-vulnerability'],
  113: ['application-vulnerability'],
  352: ['application-vulnerability'],
  434: ['application-vulnerability'],
  502: ['application-vulnerability'],
  601: ['application-vulnerability'],
  611: ['application-vulnerability'],
  643: ['application-vulnerability'],
  917: ['application-vulnerability'],
  918: ['application-vulnerability'],
  943: ['application-vulnerability'],
  1236: ['application-vulnerability'],
  1333: ['application-vulnerability'],
  // components
  1104: ['vulnerable-component'],
  937: ['vulnerable-component'],
  1035: ['vulnerable-component'],
  1395: ['vulnerable-component'],
  1329: ['vulnerable-component'],
  // exposure of services
  1327: ['exposed-service'],
  1188: ['security-misconfiguration'],
  // availability
  400: ['availability'],
  770: ['availability'],
  799: ['availability'],
  405: ['availability'],
};

/** Rule-id prefixes → class. The longest matching prefix wins; matching ignores case. */
const RULE_PREFIXES: readonly [prefix: string, classId: string][] = [
  ['port.', 'exposed-service'],
  ['service.', 'exposed-service'],
  ['tls.cert', 'certificate'],
  ['cert.', 'certificate'],
  ['tls.', 'weak-transport-crypto'],
  ['ssl.', 'weak-transport-crypto'],
  ['edge.cert', 'certificate'],
  ['edge.tls', 'weak-transport-crypto'],
  ['edge.redirect', 'cleartext-transport'],
  ['edge.hsts', 'cleartext-transport'],
  ['edge.header', 'security-misconfiguration'],
  ['http.cleartext', 'cleartext-transport'],
  ['http.no-https', 'cleartext-transport'],
  ['header.hsts', 'cleartext-transport'],
  ['header.strict-transport-security', 'cleartext-transport'],
  ['header.server', 'version-disclosure'],
  ['header.x-powered-by', 'version-disclosure'],
  ['header.', 'security-misconfiguration'],
  ['headers.', 'security-misconfiguration'],
  ['cookie.', 'security-misconfiguration'],
  ['cors.', 'cors'],
  ['dirlist', 'directory-listing'],
  ['directory-listing', 'directory-listing'],
  ['exposure.', 'information-exposure'],
  ['exposed.', 'information-exposure'],
  ['secret.', 'hardcoded-credentials'],
  ['secrets.', 'hardcoded-credentials'],
  ['container.secret', 'hardcoded-credentials'],
  ['container.cve.os', 'vulnerable-os-package'],
  ['container.cve.', 'vulnerable-component'],
  ['container.os.', 'vulnerable-os-package'],
  ['container.pkg.', 'vulnerable-component'],
  ['container.config', 'security-misconfiguration'],
  ['cve.', 'vulnerable-component'],
  ['cve-', 'vulnerable-component'],
  ['default-login', 'default-credentials'],
  ['default-credentials', 'default-credentials'],
  ['auth.', 'authentication'],
  ['dns.spf', 'email-authentication'],
  ['dns.dmarc', 'email-authentication'],
  ['dns.dkim', 'email-authentication'],
  ['email.', 'email-authentication'],
  ['tech.outdated', 'vulnerable-component'],
  ['outdated.', 'vulnerable-component'],
  ['version.', 'version-disclosure'],
];

/** When neither CWE nor rule id classes a finding: what its scanner usually means. */
const SCANNER_FALLBACK: Readonly<Record<string, string>> = {
  port: 'exposed-service',
  container: 'vulnerable-component',
  edge: 'weak-transport-crypto',
  webapp: 'security-misconfiguration',
  template: 'security-misconfiguration',
};

const CLASS_BY_ID = new Map(FINDING_CLASSES.map((c) => [c.id, c]));
const SORTED_PREFIXES = [...RULE_PREFIXES].sort((a, b) => b[0].length - a[0].length);

/** The finding classes of one finding, most specific evidence first. */
export function classifyFinding(f: FindingToMap): string[] {
  const classes = new Set<string>();
  for (const cwe of f.cwe ?? []) for (const c of CWE_CLASSES[cwe] ?? []) classes.add(c);
  const rule = f.ruleId?.trim().toLowerCase();
  if (rule) {
    const hit = SORTED_PREFIXES.find(([p]) => rule.startsWith(p));
    if (hit) classes.add(hit[1]);
  }
  if (classes.size === 0 && f.scanner) {
    const fallback = SCANNER_FALLBACK[f.scanner.toLowerCase()];
    if (fallback) classes.add(fallback);
  }
  return [...classes];
}

const frameworkOrder = new Map(FRAMEWORK_IDS.map((id, i) => [id, i]));

/** Controls of every framework that a finding bears on, in framework then catalogue order, without repeats. */
export function mapFindingToControls(f: FindingToMap): ControlRef[] {
  const seen = new Set<string>();
  const out: ControlRef[] = [];
  for (const classId of classifyFinding(f)) {
    const cls = CLASS_BY_ID.get(classId);
    if (!cls) continue;
    for (const framework of FRAMEWORK_IDS) {
      for (const controlId of cls.controls[framework] ?? []) {
        const key = `${framework}\u0000${controlId}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ framework, controlId });
      }
    }
  }
  return out.sort(
    (a, b) =>
      frameworkOrder.get(a.framework)! - frameworkOrder.get(b.framework)! ||
      controlIndex(a.framework, a.controlId) - controlIndex(b.framework, b.controlId),
  );
}

/** Every control id the mapping names that is missing from its catalogue (a unit test keeps this empty). */
export function unknownMappedControls(): ControlRef[] {
  const bad: ControlRef[] = [];
  for (const cls of FINDING_CLASSES)
    for (const framework of FRAMEWORK_IDS)
      for (const controlId of cls.controls[framework] ?? [])
        if (!findControl(framework, controlId)) bad.push({ framework, controlId });
  return bad;
}

/** Classes named in the CWE and rule tables that are not defined (a unit test keeps this empty). */
export function undefinedClassReferences(): string[] {
  const named = [
    ...Object.values(CWE_CLASSES).flat(),
    ...RULE_PREFIXES.map(([, c]) => c),
    ...Object.values(SCANNER_FALLBACK),
  ];
  return [...new Set(named.filter((c) => !CLASS_BY_ID.has(c)))];
}
