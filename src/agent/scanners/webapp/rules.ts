// The passive rules: ZAP baseline equivalents run on every crawled answer. Rule ids are ZAP's
// alert references (pluginid, or pluginid-N where ZAP splits a rule into several alerts), the
// same ids the ZAP importer (src/workers/importers/zap.ts) stores, so a finding raised here and
// the same issue imported from a ZAP report line up.
// Over 500 lines on purpose: a rule table: one passive rule per ZAP baseline alert, with its advice and references.
import type { Severity } from '../../../findings/index.ts';
import type { CrawledPage } from './crawl.ts';
import { isHtml } from './crawl.ts';
import { resolveRef, type HtmlTag } from './html.ts';

export interface RuleInfo {
  id: string;
  title: string;
  severity: Severity;
  cwe: number;
  description: string;
  remediation: string;
  references: string[];
}

/** One occurrence of a rule; findings.ts folds occurrences into findings. */
export interface Alert {
  ruleId: string;
  url: string;
  param?: string;
  /** Tells apart several issues of one rule on one path (a cookie, a script host). */
  discriminator?: string;
  /** What was seen: the offending header or markup, secrets masked. */
  evidence: string;
  method?: string;
  /** The request and answer, for the active checks' evidence. */
  request?: string;
  response?: string;
}

const MDN = 'https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/';
const OWASP_CS = 'https://cheatsheetseries.owasp.org/cheatsheets/';

const rule = (
  id: string,
  title: string,
  severity: Severity,
  cwe: number,
  description: string,
  remediation: string,
  references: string[],
): RuleInfo => ({ id, title, severity, cwe, description, remediation, references });

export const RULES: Record<string, RuleInfo> = Object.fromEntries(
  [
    rule(
      '10020-1',
      'Missing Anti-clickjacking Header',
      'medium',
      1021,
      'The page sets neither X-Frame-Options nor a Content-Security-Policy frame-ancestors directive, so another site can frame it and trick users into clicking (clickjacking).',
      "Send Content-Security-Policy: frame-ancestors 'self' (or 'none'); X-Frame-Options: DENY or SAMEORIGIN covers older browsers.",
      [`${MDN}X-Frame-Options`, `${OWASP_CS}Clickjacking_Defense_Cheat_Sheet.html`],
    ),
    rule(
      '10021',
      'X-Content-Type-Options Header Missing',
      'low',
      693,
      'The answer lacks X-Content-Type-Options: nosniff, so browsers may sniff its type and treat it as something else (e.g. script).',
      'Send X-Content-Type-Options: nosniff on every answer and a correct Content-Type.',
      [`${MDN}X-Content-Type-Options`],
    ),
    rule(
      '10035-1',
      'Strict-Transport-Security Header Not Set',
      'low',
      319,
      'An HTTPS answer lacks Strict-Transport-Security, so a network attacker can downgrade a first visit to HTTP.',
      'Send Strict-Transport-Security: max-age=31536000; includeSubDomains on every HTTPS answer.',
      [`${MDN}Strict-Transport-Security`, `${OWASP_CS}HTTP_Strict_Transport_Security_Cheat_Sheet.html`],
    ),
    rule(
      '10038-1',
      'Content Security Policy (CSP) Header Not Set',
      'medium',
      693,
      'The page sets no Content-Security-Policy, the main browser-side mitigation against cross-site scripting and data injection.',
      "Define a Content-Security-Policy, starting from default-src 'self' and tightening per page.",
      [`${MDN}Content-Security-Policy`, `${OWASP_CS}Content_Security_Policy_Cheat_Sheet.html`],
    ),
    rule(
      '10055-4',
      'CSP: Wildcard Directive',
      'medium',
      693,
      'The Content-Security-Policy allows any source for some directives (a wildcard, a bare scheme, or a directive without fallback left undefined: frame-ancestors, form-action, base-uri).',
      'Restrict every fetch directive to the sources the page needs and define frame-ancestors, form-action and base-uri explicitly.',
      [`${MDN}Content-Security-Policy`, 'https://csp-evaluator.withgoogle.com/'],
    ),
    rule(
      '10055-5',
      'CSP: script-src unsafe-inline',
      'medium',
      693,
      "The Content-Security-Policy allows inline scripts ('unsafe-inline'), which removes most of its protection against cross-site scripting.",
      "Remove 'unsafe-inline' from script-src (and default-src); use nonces or hashes for the inline scripts you need.",
      [`${MDN}Content-Security-Policy/script-src`],
    ),
    rule(
      '10055-6',
      'CSP: style-src unsafe-inline',
      'medium',
      693,
      "The Content-Security-Policy allows inline styles ('unsafe-inline'), which enables CSS injection attacks.",
      "Remove 'unsafe-inline' from style-src; use nonces or hashes.",
      [`${MDN}Content-Security-Policy/style-src`],
    ),
    rule(
      '10055-10',
      'CSP: script-src unsafe-eval',
      'medium',
      693,
      "The Content-Security-Policy allows eval() and similar ('unsafe-eval'), which turns injected strings into code.",
      "Remove 'unsafe-eval' from script-src and default-src; refactor code that needs eval.",
      [`${MDN}Content-Security-Policy/script-src`],
    ),
    rule(
      '10063-1',
      'Permissions Policy Header Not Set',
      'low',
      693,
      'The page sets no Permissions-Policy, so it and any frame it embeds may use powerful features (camera, geolocation, ...) without restriction.',
      'Send a Permissions-Policy that disables the features the site does not use, e.g. camera=(), geolocation=(), microphone=().',
      [`${MDN}Permissions-Policy`],
    ),
    rule(
      '10019',
      'Content-Type Header Missing',
      'info',
      345,
      'An answer with a body has no Content-Type header, so browsers guess its type.',
      'Send an accurate Content-Type (with charset for text) on every answer with a body.',
      [`${MDN}Content-Type`],
    ),
    rule(
      '10010',
      'Cookie No HttpOnly Flag',
      'low',
      1004,
      'A cookie is set without HttpOnly, so scripts (including injected ones) can read it.',
      'Set HttpOnly on every cookie that scripts do not need, session cookies above all.',
      [`${MDN}Set-Cookie`, 'https://owasp.org/www-community/HttpOnly'],
    ),
    rule(
      '10011',
      'Cookie Without Secure Flag',
      'low',
      614,
      'A cookie is set over HTTPS without Secure, so the browser also sends it over plain HTTP where it can be intercepted.',
      'Set Secure on every cookie of an HTTPS site.',
      [`${MDN}Set-Cookie`],
    ),
    rule(
      '10054-1',
      'Cookie without SameSite Attribute',
      'low',
      1275,
      'A cookie is set without SameSite, so older browsers send it with cross-site requests (cross-site request forgery).',
      'Set SameSite=Lax or SameSite=Strict on every cookie.',
      [`${MDN}Set-Cookie/SameSite`],
    ),
    rule(
      '10054-2',
      'Cookie with SameSite Attribute None',
      'low',
      1275,
      'A cookie is set with SameSite=None, so browsers send it with cross-site requests.',
      'Use SameSite=Lax or Strict unless the cookie must be sent cross-site.',
      [`${MDN}Set-Cookie/SameSite`],
    ),
    rule(
      '90033',
      'Loosely Scoped Cookie',
      'info',
      565,
      'A cookie is scoped to a parent domain of the host, so every sibling subdomain receives it and can set it.',
      'Leave out the Domain attribute (host-only cookie) or scope it to the exact host.',
      [`${MDN}Set-Cookie#domaindomain-value`],
    ),
    rule(
      '10036-2',
      'Server Leaks Version Information via "Server" HTTP Response Header Field',
      'low',
      497,
      'The Server header names the server software and its version, which helps attackers pick known exploits.',
      'Configure the server to send a generic Server header (or none) without version numbers.',
      [
        'https://httpd.apache.org/docs/current/mod/core.html#servertokens',
        'https://nginx.org/en/docs/http/ngx_http_core_module.html#server_tokens',
      ],
    ),
    rule(
      '10037',
      'Server Leaks Information via "X-Powered-By" HTTP Response Header Field(s)',
      'low',
      497,
      'X-Powered-By names the framework (and often its version) behind the site.',
      'Stop sending X-Powered-By (e.g. app.disable("x-powered-by"), expose_php = Off).',
      [`${MDN}X-Powered-By`],
    ),
    rule(
      '10039',
      'X-Backend-Server Header Information Leak',
      'low',
      497,
      'X-Backend-Server names an internal server behind the proxy or load balancer.',
      'Remove X-Backend-Server at the proxy or in the application.',
      ['https://owasp.org/www-project-web-security-testing-guide/'],
    ),
    rule(
      '10061',
      'X-AspNet-Version Response Header',
      'low',
      933,
      'X-AspNet-Version (or X-AspNetMvc-Version) discloses the ASP.NET version.',
      'Set <httpRuntime enableVersionHeader="false" /> and MvcHandler.DisableMvcResponseHeader = true.',
      ['https://learn.microsoft.com/en-us/dotnet/api/system.web.configuration.httpruntimesection.enableversionheader'],
    ),
    rule(
      '10056',
      'X-Debug-Token Information Leak',
      'low',
      200,
      'X-Debug-Token or X-Debug-Token-Link reveals that the Symfony profiler is enabled; it exposes requests, configuration and secrets.',
      'Disable the Symfony profiler (web_profiler) in production.',
      ['https://symfony.com/doc/current/profiler.html'],
    ),
    rule(
      '10052',
      'X-ChromeLogger-Data (XCOLD) Header Information Leak',
      'medium',
      200,
      'X-ChromeLogger-Data (or X-ChromePhp-Data) carries server-side debug logs to the browser.',
      'Disable ChromeLogger / ChromePhp in production.',
      ['https://craig.is/writing/chrome-logger'],
    ),
    rule(
      '10023',
      'Information Disclosure - Debug Error Messages',
      'low',
      1295,
      'The page contains a debug or error message of the platform (PHP warnings, ASP.NET error pages, ...), which discloses internals.',
      'Turn off debug output in production and show a generic error page.',
      ['https://owasp.org/www-community/Improper_Error_Handling'],
    ),
    rule(
      '90022',
      'Application Error Disclosure',
      'medium',
      550,
      'The page contains a stack trace or a database error, which discloses code paths, file names, queries or library versions.',
      'Catch errors server-side, log the details and return a generic error page.',
      ['https://owasp.org/www-community/Improper_Error_Handling'],
    ),
    rule(
      '10024',
      'Information Disclosure - Sensitive Information in URL',
      'info',
      598,
      'A URL carries a parameter whose name suggests a credential, token or session; URLs end up in logs, history and Referer headers.',
      'Send credentials and tokens in the request body or headers (POST, Authorization), never in the URL.',
      ['https://owasp.org/www-community/vulnerabilities/Information_exposure_through_query_strings_in_url'],
    ),
    rule(
      '10027',
      'Information Disclosure - Suspicious Comments',
      'info',
      615,
      'A comment in the HTML or inline script mentions a note for developers (TODO, FIXME, ...) or credentials; comments are visible to everyone.',
      'Strip comments from production HTML and JavaScript; never put credentials in code.',
      ['https://cwe.mitre.org/data/definitions/615.html'],
    ),
    rule(
      '2',
      'Private IP Disclosure',
      'low',
      497,
      'The answer contains a private (RFC 1918) IP address, which reveals internal network layout.',
      'Remove internal addresses from pages, headers and error messages.',
      ['https://datatracker.ietf.org/doc/html/rfc1918'],
    ),
    rule(
      '3',
      'Session ID in URL Rewrite',
      'medium',
      598,
      'A session identifier is carried in a URL, where it leaks through logs, history and Referer headers and enables session fixation.',
      'Keep session identifiers in cookies only; disable URL rewriting of sessions.',
      [`${OWASP_CS}Session_Management_Cheat_Sheet.html`],
    ),
    rule(
      '10040',
      'Secure Pages Include Mixed Content',
      'medium',
      311,
      'An HTTPS page loads resources over plain HTTP, which a network attacker can read or replace.',
      'Load every resource over HTTPS (or protocol-relative); consider CSP upgrade-insecure-requests.',
      ['https://developer.mozilla.org/en-US/docs/Web/Security/Mixed_content'],
    ),
    rule(
      '10015',
      'Re-examine Cache-control Directives',
      'info',
      525,
      'A page that looks sensitive (a login or account page, or one that sets cookies) may be stored by browsers and proxies because Cache-Control lacks no-store.',
      'Send Cache-Control: no-store on pages with personal or sensitive content.',
      [`${MDN}Cache-Control`, `${OWASP_CS}Session_Management_Cheat_Sheet.html#web-content-caching`],
    ),
    rule(
      '10049-3',
      'Storable and Cacheable Content',
      'info',
      524,
      'The page is marked cacheable by shared caches (public, s-maxage or max-age without private), so a proxy may serve it to other users.',
      'Use Cache-Control: private or no-store on pages that may be personal; keep public caching for static assets.',
      [`${MDN}Cache-Control`, 'https://datatracker.ietf.org/doc/html/rfc9111'],
    ),
    rule(
      '90011',
      'Charset Mismatch',
      'info',
      436,
      'The charset in the Content-Type header differs from the one the page declares in a <meta> tag; browsers may decode it differently than intended.',
      'Declare one charset (UTF-8) consistently in the header and the page.',
      ['https://html.spec.whatwg.org/multipage/semantics.html#charset'],
    ),
    rule(
      '10033',
      'Directory Browsing',
      'medium',
      548,
      'The server lists the files of a directory, exposing files that were never meant to be linked.',
      'Disable directory listings (Options -Indexes, autoindex off) and add index pages.',
      [
        'https://owasp.org/www-project-web-security-testing-guide/latest/4-Web_Application_Security_Testing/02-Configuration_and_Deployment_Management_Testing/04-Review_Old_Backup_and_Unreferenced_Files_for_Sensitive_Information',
      ],
    ),
    rule(
      '10098',
      'Cross-Domain Misconfiguration',
      'medium',
      942,
      "Access-Control-Allow-Origin: * lets any web site read the answer from a visitor's browser.",
      'Allow only the origins that need access, or drop the CORS headers.',
      [`${MDN}Access-Control-Allow-Origin`],
    ),
    rule(
      '10202',
      'Absence of Anti-CSRF Tokens',
      'medium',
      352,
      'A form that submits with POST has no hidden field that looks like an anti-CSRF token, so another site may submit it on behalf of a logged-in user.',
      'Add a per-session or per-request anti-CSRF token to every state-changing form and check it server-side; SameSite cookies help as defence in depth.',
      [`${OWASP_CS}Cross-Site_Request_Forgery_Prevention_Cheat_Sheet.html`],
    ),
    rule(
      '10017',
      'Cross-Domain JavaScript Source File Inclusion',
      'low',
      829,
      'The page loads a script from another origin without Subresource Integrity, so whoever controls that origin controls the page.',
      'Host scripts yourself or add integrity and crossorigin attributes (Subresource Integrity).',
      ['https://developer.mozilla.org/en-US/docs/Web/Security/Subresource_Integrity'],
    ),
    rule(
      '10105-1',
      'Weak Authentication Method',
      'medium',
      326,
      'Credentials are requested over plain HTTP (HTTP Basic/Digest authentication or a password form), so they cross the network readable.',
      'Serve login pages and authenticated areas over HTTPS only, and redirect HTTP to HTTPS.',
      ['https://owasp.org/www-community/vulnerabilities/Insufficient_Transport_Layer_Protection'],
    ),
    rule(
      '10108',
      'Reverse Tabnabbing',
      'medium',
      1022,
      'A link to another site opens in a new window without rel="noopener", so that site can navigate this page (window.opener) to a phishing copy.',
      'Add rel="noopener noreferrer" to links with a target that point to other sites.',
      ['https://owasp.org/www-community/attacks/Reverse_Tabnabbing'],
    ),
    rule(
      '10044-1',
      'Big Redirect Detected (Potential Sensitive Information Leak)',
      'low',
      201,
      'A redirect answer carries a body far larger than a redirect needs; it may contain the page the user was not allowed to see.',
      'Send redirects with an empty or minimal body and stop processing after the redirect.',
      ['https://cwe.mitre.org/data/definitions/201.html'],
    ),
    // Light active checks (profile full).
    rule(
      '40012',
      'Cross Site Scripting (Reflected)',
      'high',
      79,
      "A parameter value is written back into the HTML page without escaping, so a crafted link runs script in the victim's session.",
      'Encode output for its context (HTML, attribute, JavaScript); validate input; add a strict Content-Security-Policy.',
      [`${OWASP_CS}Cross_Site_Scripting_Prevention_Cheat_Sheet.html`],
    ),
    rule(
      '20019',
      'External Redirect',
      'high',
      601,
      "A parameter decides where the page redirects, and it accepts another site: attackers use it to lend phishing links the site's name.",
      'Redirect only to relative paths or to an allow-list of destinations.',
      [`${OWASP_CS}Unvalidated_Redirects_and_Forwards_Cheat_Sheet.html`],
    ),
    rule(
      '40018',
      'SQL Injection (database error)',
      'high',
      89,
      'A quote in a parameter makes the page show a database error: the value reaches an SQL statement unescaped.',
      'Use parameterised queries everywhere; never build SQL from request data; hide database errors.',
      [`${OWASP_CS}SQL_Injection_Prevention_Cheat_Sheet.html`],
    ),
  ].map((r) => [r.id, r]),
);

/**
 * Rules about how the server is configured rather than about one page: missing or leaking
 * headers, cookie attributes, caching headers. One finding per site (and header, cookie or
 * policy) with the URLs it was seen on as its instances, not one per URL.
 */
export const SITE_WIDE_RULE_IDS: ReadonlySet<string> = new Set([
  '10020-1',
  '10021',
  '10035-1',
  '10038-1',
  '10055-4',
  '10055-5',
  '10055-6',
  '10055-10',
  '10063-1',
  '10036-2',
  '10037',
  '10039',
  '10061',
  '10056',
  '10052',
  '10098',
  '10010',
  '10011',
  '10054-1',
  '10054-2',
  '90033',
  '10015',
  '10049-3',
]);

/** The active checks' rules (the `full` profile); every other rule is passive. */
export const ACTIVE_RULE_IDS: readonly string[] = ['40012', '20019', '40018'];
export const PASSIVE_RULE_IDS = Object.keys(RULES).filter((id) => !ACTIVE_RULE_IDS.includes(id));

// ---- helpers ---------------------------------------------------------------------------------

interface SetCookie {
  name: string;
  attrs: Map<string, string>;
  /** The attributes as sent, the value left out. */
  shown: string;
  deleting: boolean;
}

function parseSetCookie(line: string): SetCookie {
  const [pair = '', ...rest] = line.split(';');
  const eq = pair.indexOf('=');
  const name = (eq < 0 ? pair : pair.slice(0, eq)).trim();
  const value = eq < 0 ? '' : pair.slice(eq + 1).trim();
  const attrs = new Map<string, string>();
  for (const a of rest) {
    const i = a.indexOf('=');
    attrs.set((i < 0 ? a : a.slice(0, i)).trim().toLowerCase(), i < 0 ? '' : a.slice(i + 1).trim());
  }
  const expires = attrs.get('expires');
  const deleting =
    value === '' || attrs.get('max-age') === '0' || (expires !== undefined && Date.parse(expires) < Date.now());
  return {
    name,
    attrs,
    shown: rest
      .map((a) => a.trim())
      .filter(Boolean)
      .join('; '),
    deleting,
  };
}

const cookieEvidence = (c: SetCookie) =>
  `Cookie "${c.name}" set with attributes: ${c.shown || '(none)'} (value not shown)`;

/** Directives of a CSP header value (first policy wins for a repeated directive). */
export function parseCsp(value: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of value.split(/[;,]/)) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name && !out.has(name.toLowerCase()))
      out.set(
        name.toLowerCase(),
        sources.map((s) => s.toLowerCase()),
      );
  }
  return out;
}

const FETCH_DIRECTIVES = [
  'script-src',
  'style-src',
  'img-src',
  'connect-src',
  'frame-src',
  'font-src',
  'media-src',
  'object-src',
];
const NO_FALLBACK = ['frame-ancestors', 'form-action', 'base-uri'];
const wide = (sources: string[]) =>
  sources.some((s) => s === '*' || s === 'http:' || s === 'https:' || s === 'http://*' || s === 'https://*');

/** The ZAP 10055 sub-alerts a policy earns: [alertRef, evidence]. */
export function cspWeaknesses(policy: string): [string, string][] {
  const csp = parseCsp(policy);
  const effective = (d: string) => csp.get(d) ?? csp.get('default-src');
  const out: [string, string][] = [];
  const wildcard = [
    ...FETCH_DIRECTIVES.filter((d) => {
      const s = effective(d);
      return s === undefined || wide(s);
    }),
    ...NO_FALLBACK.filter((d) => !csp.has(d) || wide(csp.get(d)!)),
  ];
  if (wildcard.length) out.push(['10055-4', `Directives allowing any source: ${wildcard.join(', ')}`]);
  const script = effective('script-src') ?? [];
  // 'unsafe-inline' is ignored by browsers when a nonce or hash is present.
  if (script.includes("'unsafe-inline'") && !script.some((s) => /^'(?:nonce|sha\d{3})-/.test(s)))
    out.push(['10055-5', `script-src: ${script.join(' ')}`]);
  const style = effective('style-src') ?? [];
  if (style.includes("'unsafe-inline'") && !style.some((s) => /^'(?:nonce|sha\d{3})-/.test(s)))
    out.push(['10055-6', `style-src: ${style.join(' ')}`]);
  if (script.includes("'unsafe-eval'")) out.push(['10055-10', `script-src: ${script.join(' ')}`]);
  return out;
}

/** True when Domain= names a parent of the host (label-wise), i.e. wider than the host. */
export function looselyScoped(domainAttr: string, host: string): boolean {
  const d = domainAttr.replace(/^\./, '').toLowerCase();
  const h = host.toLowerCase();
  return d !== '' && d !== h && h.endsWith(`.${d}`);
}

const DEBUG_MESSAGES = [
  /<b>(?:Warning|Notice|Fatal error|Parse error)<\/b>:\s+.{1,300}? in <b>[^<]{1,300}<\/b> on line <b>\d+/i,
  /\bPHP (?:Parse error|Warning|Fatal error|Notice):/,
  /Warning: Cannot modify header information - headers already sent/,
  /Server Error in '[^']{0,200}' Application/,
  /Error Occurred While Processing Request/,
  /Microsoft VBScript runtime error/,
  /Error Diagnostic Information/,
  /Division by zero in/,
  /Call to a member function .{1,100} on (?:null|a non-object)/,
];

const STACK_TRACES = [
  /Traceback \(most recent call last\):/,
  /\bat [\w$.]+\([\w$]+\.java:\d+\)/,
  /Exception in thread "[^"]*" [\w.]+/,
  /^\s+at (?:[\w$.<>]+ )?\(?\/?[\w./\\-]+\.(?:js|ts|mjs|cjs):\d+:\d+\)?$/m,
  /\bat System\.[\w.]+\(/,
  /Stack trace:\s*(?:<br \/>)?\s*#0 /,
  /[\w/\\-]+\.rb:\d+:in `/,
];

export const SQL_ERRORS: [string, RegExp][] = [
  [
    'MySQL',
    /You have an error in your SQL syntax|mysql_fetch_(?:array|assoc|row)\(|Warning: mysqli?_|MySQLSyntaxErrorException|SQLSTATE\[42000\]/i,
  ],
  [
    'PostgreSQL',
    /PostgreSQL query failed|pg_query\(\)|unterminated quoted string at or near|syntax error at or near "|PSQLException/i,
  ],
  [
    'SQLite',
    /SQLite(?:3)?::(?:query|SQLException)|SQLITE_ERROR|sqlite3\.OperationalError|unrecognized token: "|near "[^"]{0,40}": syntax error/i,
  ],
  [
    'Microsoft SQL Server',
    /Unclosed quotation mark after the character string|Microsoft OLE DB Provider for SQL Server|\[SQL Server\]|System\.Data\.SqlClient\.SqlException/i,
  ],
  ['Oracle', /\bORA-0\d{4}\b|Oracle error|quoted string not properly terminated/i],
];

/** The first stack trace or database error in a body: [kind, matched text]. */
export function applicationError(body: string): [string, string] | undefined {
  for (const re of STACK_TRACES) {
    const m = re.exec(body);
    if (m) return ['stack trace', m[0].trim()];
  }
  for (const [db, re] of SQL_ERRORS) {
    const m = re.exec(body);
    if (m) return [`${db} error`, m[0]];
  }
  return undefined;
}

export function sqlError(body: string): [string, string] | undefined {
  for (const [db, re] of SQL_ERRORS) {
    const m = re.exec(body);
    if (m) return [db, m[0]];
  }
  return undefined;
}

const SENSITIVE_PARAM =
  /^(?:pass(?:word|wd)?|pwd|passphrase|secret|client_secret|token|access_token|auth_token|id_token|refresh_token|api[_-]?key|apikey|auth|credentials?|session(?:id)?|sess(?:ion)?_?id|ssn|credit_?card|cc_?num)$/i;
const SESSION_PARAM =
  /^(?:jsessionid|phpsessid|aspsessionid\w*|sessionid|session_id|sid|cfid|cftoken|asp\.net_sessionid)$/i;
const SUSPICIOUS =
  /\b(TODO|FIXME|XXX|HACK|BUG|password|passwd|pwd|secret|api[_-]?key|credentials?|private[_ -]?key)\b/i;
const CSRF_FIELD =
  /csrf|xsrf|anti.?forgery|authenticity_token|requestverificationtoken|^_?token$|nonce|__viewstategenerator/i;
const PRIVATE_IP =
  /(?<![\d.])(?:10\.\d{1,3}\.\d{1,3}\.\d{1,3}|172\.(?:1[6-9]|2\d|3[01])\.\d{1,3}\.\d{1,3}|192\.168\.\d{1,3}\.\d{1,3})(?!\.?\d)/;
const TEXTUAL = /^\s*(?:text\/|application\/(?:json|javascript|xml|xhtml\+xml|x-javascript))/i;

/** A comment line around a keyword, with anything after `:` or `=` masked. */
function maskedLine(text: string, index: number): string {
  const start = text.lastIndexOf('\n', index) + 1;
  const endNl = text.indexOf('\n', index);
  const line = text
    .slice(start, endNl < 0 ? undefined : endNl)
    .trim()
    .slice(0, 200);
  return line.replace(/([:=]\s*)[^\s,;]+/g, '$1***');
}

function jsComments(script: string): string[] {
  const out: string[] = [];
  for (const m of script.matchAll(/\/\*([\s\S]*?)\*\/|(?<![:"'\\\w])\/\/([^\n]*)/g)) out.push(m[1] ?? m[2] ?? '');
  return out;
}

function cacheDirectives(res: { headers: Record<string, string> }): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (res.headers['cache-control'] ?? '').split(',')) {
    const [k, v = ''] = part.trim().split('=');
    if (k) out.set(k.toLowerCase(), v.replace(/"/g, ''));
  }
  return out;
}

const external = (u: URL | undefined, origin: string) => !!u && u.origin !== origin;
const tagAttr = (t: HtmlTag, a: string) => t.attrs.get(a) ?? '';

// ---- the rules -------------------------------------------------------------------------------

/** Every passive alert one crawled answer raises. */
export function passiveAlerts(p: CrawledPage): Alert[] {
  const { res } = p;
  const out: Alert[] = [];
  const add = (ruleId: string, evidence: string, extra: { param?: string; discriminator?: string } = {}) =>
    out.push({ ruleId, url: p.url, evidence, method: res.method, ...extra });
  const h = res.headers;
  const url = new URL(p.url);
  const https = url.protocol === 'https:';
  const html = isHtml(res);
  const redirect = res.status >= 300 && res.status < 400;
  const body = TEXTUAL.test(h['content-type'] ?? '') || html ? res.body.toString('utf8') : '';
  const doc = p.page?.doc;
  const metaCsp = doc?.tags
    .find((t) => t.name === 'meta' && tagAttr(t, 'http-equiv').toLowerCase() === 'content-security-policy')
    ?.attrs.get('content');
  const csp = h['content-security-policy'] ?? metaCsp;

  // Headers. A missing security header is judged on the pages a visitor gets: error answers
  // (the 404 of a probed path, a 500) are left out, as ZAP does above its LOW threshold.
  const errorPage = res.status >= 400;
  if (html && !redirect && !errorPage) {
    if (
      !h['x-frame-options'] &&
      !(h['content-security-policy'] && parseCsp(h['content-security-policy']).has('frame-ancestors'))
    )
      add('10020-1', 'Neither X-Frame-Options nor Content-Security-Policy frame-ancestors is set', {
        param: 'x-frame-options',
      });
    if (!csp) add('10038-1', 'No Content-Security-Policy header or meta tag', { param: 'content-security-policy' });
    else for (const [ref, ev] of cspWeaknesses(csp)) add(ref, ev, { param: 'content-security-policy' });
    if (!h['permissions-policy'] && !h['feature-policy'])
      add('10063-1', 'No Permissions-Policy header', { param: 'permissions-policy' });
  }
  if (
    !redirect &&
    !errorPage &&
    res.body.length > 0 &&
    (h['x-content-type-options'] ?? '').trim().toLowerCase() !== 'nosniff'
  )
    add('10021', `X-Content-Type-Options: ${h['x-content-type-options'] ?? '(missing)'}`, {
      param: 'x-content-type-options',
    });
  if (https && !errorPage && !h['strict-transport-security'])
    add('10035-1', 'No Strict-Transport-Security header on an HTTPS answer', { param: 'strict-transport-security' });
  if (res.body.length > 0 && !h['content-type'])
    add('10019', 'An answer with a body has no Content-Type header', { param: 'content-type' });

  // Cookies.
  for (const line of res.setCookies) {
    const c = parseSetCookie(line);
    if (!c.name || c.deleting) continue;
    const ev = cookieEvidence(c);
    if (!c.attrs.has('httponly')) add('10010', ev, { param: c.name });
    if (https && !c.attrs.has('secure')) add('10011', ev, { param: c.name });
    const sameSite = c.attrs.get('samesite');
    if (sameSite === undefined) add('10054-1', ev, { param: c.name });
    else if (sameSite.toLowerCase() === 'none') add('10054-2', ev, { param: c.name });
    const domain = c.attrs.get('domain');
    if (domain && looselyScoped(domain, url.hostname))
      add('90033', `${ev}; Domain=${domain} is wider than the host ${url.hostname}`, { param: c.name });
  }

  // Version and debug headers.
  if (h.server && /\d/.test(h.server)) add('10036-2', `Server: ${h.server}`, { param: 'server' });
  if (h['x-powered-by']) add('10037', `X-Powered-By: ${h['x-powered-by']}`, { param: 'x-powered-by' });
  if (h['x-backend-server']) add('10039', `X-Backend-Server: ${h['x-backend-server']}`, { param: 'x-backend-server' });
  for (const name of ['x-aspnet-version', 'x-aspnetmvc-version'])
    if (h[name]) add('10061', `${name}: ${h[name]}`, { param: name });
  for (const name of ['x-debug-token', 'x-debug-token-link'])
    if (h[name]) add('10056', `${name} header present`, { param: name });
  for (const name of ['x-chromelogger-data', 'x-chromephp-data'])
    if (h[name]) add('10052', `${name} header present (${h[name]!.length} characters)`, { param: name });
  if ((h['access-control-allow-origin'] ?? '').trim() === '*')
    add('10098', 'Access-Control-Allow-Origin: *', { param: 'access-control-allow-origin' });
  const auth = h['www-authenticate'];
  if (!https && auth && /\b(?:basic|digest)\b/i.test(auth))
    add('10105-1', `WWW-Authenticate: ${auth} over HTTP`, { discriminator: 'www-authenticate' });

  // Caching.
  const cc = cacheDirectives(res);
  if (html && res.status === 200) {
    const hasPassword = !!doc?.tags.some((t) => t.name === 'input' && tagAttr(t, 'type').toLowerCase() === 'password');
    const sensitive =
      hasPassword ||
      res.setCookies.length > 0 ||
      /\/(?:login|signin|account|profile|admin|settings)\b/i.test(url.pathname);
    if (sensitive && !cc.has('no-store'))
      add('10015', `Cache-Control: ${h['cache-control'] ?? '(missing)'}`, { param: 'cache-control' });
    const shared =
      !cc.has('no-store') &&
      !cc.has('private') &&
      (cc.has('public') || Number(cc.get('s-maxage')) > 0 || Number(cc.get('max-age')) > 0);
    if (shared) add('10049-3', `Cache-Control: ${h['cache-control']}`, { param: 'cache-control' });
  }

  // Redirects.
  if (redirect && h.location) {
    const limit = h.location.length + 300;
    if (res.body.length > limit)
      add(
        '10044-1',
        `A ${res.status} redirect to ${h.location.slice(0, 200)} carries a ${res.body.length}-byte body (a redirect needs about ${limit})`,
      );
  }

  // URL.
  for (const [name] of url.searchParams) {
    if (SESSION_PARAM.test(name)) add('3', `Session parameter "${name}" in the URL (value not shown)`, { param: name });
    else if (SENSITIVE_PARAM.test(name))
      add('10024', `Parameter "${name}" in the URL (value not shown)`, { param: name });
  }
  const matrix = /;(jsessionid|phpsessid|sessionid|sid)=/i.exec(url.pathname);
  if (matrix)
    add('3', `Session parameter ";${matrix[1]}=" rewritten into the path (value not shown)`, {
      param: matrix[1]!.toLowerCase(),
    });

  // Body content.
  if (body) {
    for (const re of DEBUG_MESSAGES) {
      const m = re.exec(body);
      if (m) {
        add('10023', m[0].slice(0, 300));
        break;
      }
    }
    const err = applicationError(body);
    if (err) add('90022', `${err[0]}: ${err[1].slice(0, 300)}`);
    const ip = PRIVATE_IP.exec(body);
    if (ip && ip[0] !== url.hostname) add('2', `Private address ${ip[0]} in the answer`);
    if (/<title>\s*(?:Index of \/|Directory listing for \/)|\[To Parent Directory\]/i.test(body))
      add('10033', 'The answer is a directory listing');
  }
  if (html) {
    const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(h['content-type'] ?? '')?.[1];
    const metaCharset = doc?.tags.find((t) => t.name === 'meta' && t.attrs.has('charset'))?.attrs.get('charset');
    const metaType = doc?.tags
      .find((t) => t.name === 'meta' && tagAttr(t, 'http-equiv').toLowerCase() === 'content-type')
      ?.attrs.get('content');
    const metaTypeCharset = metaType && /charset\s*=\s*([\w.:-]+)/i.exec(metaType)?.[1];
    for (const declared of [metaCharset, metaTypeCharset]) {
      if (charset && declared && declared.trim().toLowerCase() !== charset.toLowerCase()) {
        add('90011', `Content-Type header charset ${charset}, page declares ${declared.trim()}`);
        break;
      }
    }
  }

  // Markup.
  if (doc && p.page) {
    const origin = url.origin;
    for (const c of doc.comments) {
      const m = SUSPICIOUS.exec(c);
      if (m)
        add('10027', `HTML comment mentions "${m[1]}": ${maskedLine(c, m.index)}`, {
          discriminator: m[1]!.toLowerCase(),
        });
    }
    for (const s of doc.scripts) {
      for (const c of jsComments(s)) {
        const m = SUSPICIOUS.exec(c);
        if (m)
          add('10027', `Script comment mentions "${m[1]}": ${maskedLine(c, m.index)}`, {
            discriminator: m[1]!.toLowerCase(),
          });
      }
    }
    for (const f of p.page.forms) {
      const action = new URL(f.action);
      if (
        f.method === 'POST' &&
        action.origin === origin &&
        !f.fields.some((x) => x.type === 'hidden' && CSRF_FIELD.test(x.name))
      ) {
        add(
          '10202',
          `<form method="POST" action="${action.pathname}"> fields: ${f.fields.map((x) => x.name).join(', ') || '(none)'}`,
          { discriminator: action.pathname },
        );
      }
      if (f.fields.some((x) => x.type === 'password') && (!https || action.protocol === 'http:'))
        add('10105-1', `A password form posts to ${action.protocol}//${action.host}${action.pathname}`, {
          discriminator: 'password-form',
        });
    }
    for (const t of doc.tags) {
      if (t.name === 'script' && t.attrs.has('src')) {
        const u = resolveRef(tagAttr(t, 'src'), p.page.base);
        if (external(u, origin) && !t.attrs.has('integrity'))
          add('10017', `<script src="${u!.origin}${u!.pathname}"> without integrity`, {
            discriminator: `${u!.origin}${u!.pathname}`.slice(0, 200),
          });
      }
      if ((t.name === 'a' || t.name === 'area') && t.attrs.has('target')) {
        const target = tagAttr(t, 'target').toLowerCase();
        const rel = tagAttr(t, 'rel').toLowerCase().split(/\s+/);
        const u = resolveRef(tagAttr(t, 'href'), p.page.base);
        if (
          !['_self', '_top', '_parent', ''].includes(target) &&
          external(u, origin) &&
          !rel.includes('noopener') &&
          !rel.includes('noreferrer')
        )
          add('10108', `<${t.name} href="${u!.origin}${u!.pathname}" target="${target}"> without rel="noopener"`);
      }
      if (https) {
        const attr =
          t.name === 'link'
            ? 'href'
            : ['script', 'img', 'iframe', 'frame', 'source', 'embed', 'audio', 'video', 'object'].includes(t.name)
              ? t.name === 'object'
                ? 'data'
                : 'src'
              : undefined;
        const v = attr ? t.attrs.get(attr) : undefined;
        if (
          v &&
          /^http:\/\//i.test(v.trim()) &&
          (t.name !== 'link' || /stylesheet|icon|preload|modulepreload/i.test(tagAttr(t, 'rel')))
        )
          add('10040', `<${t.name} ${attr}="${v.trim().split('?')[0]!.slice(0, 200)}">`);
      }
    }
    for (const link of p.page.links) {
      const u = new URL(link);
      if (u.origin !== origin) continue;
      for (const [name] of u.searchParams)
        if (SESSION_PARAM.test(name))
          add('3', `A link carries the session parameter "${name}" (value not shown)`, { param: name });
    }
  }
  return out;
}
