// A real HTTP target for the template scanner's tests and benchmark. `vulnerable` exposes every
// issue a built-in template looks for; `clean` is a catch-all single-page app: every path and
// method answers 200 with the same HTML, every security header set and CORS strict, which is
// what makes naive "path exists" templates report false positives.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type TargetMode = 'vulnerable' | 'clean';

const SPA = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme Portal</title>
<link rel="stylesheet" href="/assets/app.css"></head>
<body><div id="root">Loading…</div><script src="/assets/app.js"></script></body></html>
`;

const SECURITY_HEADERS: Record<string, string> = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'content-security-policy': "default-src 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

interface Page {
  status?: number;
  type: string;
  body: string | Buffer;
  headers?: Record<string, string>;
}

const text = (body: string, type = 'text/plain'): Page => ({ type, body });

const LISTING = `<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">
<html><head><title>Index of /</title></head><body><h1>Index of /</h1>
<table><tr><th><a href="?C=N;O=D">Name</a></th></tr>
<tr><td><a href="/">Parent Directory</a></td></tr>
<tr><td><a href="backup.zip">backup.zip</a></td></tr></table>
<address>Apache/2.4.41 (Ubuntu) Server at target Port 80</address></body></html>
`;

/** Every path the vulnerable mode serves; anything else is a plain 404. */
const VULNERABLE: Record<string, Page> = {
  '/': { type: 'text/html', body: LISTING },
  '/.git/config': text('[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:acme/portal.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'),
  '/.git/HEAD': text('ref: refs/heads/main\n'),
  '/.svn/entries': text('10\n\ndir\n1234\nhttps://svn.acme.test/repos/portal/trunk\n'),
  '/.svn/wc.db': { type: 'application/octet-stream', body: Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), Buffer.alloc(84)]) },
  '/.env': text('APP_NAME=Portal\nAPP_ENV=production\nAPP_KEY=base64:c2VjcmV0c2VjcmV0c2VjcmV0\nDB_HOST=10.0.0.5\nDB_PASSWORD=hunter2\n'),
  '/.DS_Store': { type: 'application/octet-stream', body: Buffer.concat([Buffer.from([0, 0, 0, 1]), Buffer.from('Bud1', 'latin1'), Buffer.alloc(24)]) },
  '/index.php.bak': text("<?php\n$db = new PDO('mysql:host=localhost;dbname=portal', 'portal', 'hunter2');\n", 'application/x-trash'),
  '/backup.zip': { type: 'application/zip', body: Buffer.concat([Buffer.from('504b0304140000000800', 'hex'), Buffer.alloc(40)]) },
  '/backup.tar.gz': { type: 'application/gzip', body: Buffer.concat([Buffer.from('1f8b0800000000000003', 'hex'), Buffer.alloc(40)]) },
  '/dump.sql': text('-- MySQL dump 10.13  Distrib 8.0.36\n--\nCREATE TABLE `users` (\n  `id` int NOT NULL\n);\nINSERT INTO `users` VALUES (1);\n', 'application/sql'),
  '/phpinfo.php': { type: 'text/html', body: '<html><head><title>phpinfo()</title></head><body><h1 class="p">PHP Version 7.4.3</h1></body></html>' },
  '/server-status': { type: 'text/html', body: '<html><head><title>Apache Status</title></head><body><h1>Apache Server Status for target (via 10.0.0.2)</h1><dl><dt>Server uptime: 12 days</dt></dl></body></html>' },
  '/nginx_status': text('Active connections: 3 \nserver accepts handled requests\n 10 10 20 \nReading: 0 Writing: 1 Waiting: 2 \n'),
  '/actuator/env': { type: 'application/vnd.spring-boot.actuator.v3+json', body: '{"activeProfiles":["prod"],"propertySources":[{"name":"systemEnvironment","properties":{"DB_PASSWORD":{"value":"******"}}}]}' },
  '/actuator/heapdump': { type: 'application/octet-stream', body: Buffer.concat([Buffer.from('JAVA PROFILE 1.0.2\0', 'latin1'), Buffer.alloc(64)]) },
  '/actuator/health': { type: 'application/json', body: '{"status":"UP"}' },
  '/v3/api-docs': { type: 'application/json', body: '{"openapi":"3.0.1","info":{"title":"Portal API","version":"1"},"paths":{"/users":{}}}' },
  '/swagger-ui/index.html': { type: 'text/html', body: '<!DOCTYPE html><html><head><title>Swagger UI</title><script src="./swagger-ui-bundle.js"></script></head><body><div id="swagger-ui"></div></body></html>' },
  '/phpmyadmin/': { type: 'text/html', body: '<!DOCTYPE HTML><html><head><title>phpMyAdmin</title></head><body><form><input type="text" name="pma_username" id="input_username"></form></body></html>' },
  '/manager/html': { status: 401, type: 'text/html', body: '<html><body><h1>401 Unauthorized</h1></body></html>', headers: { 'www-authenticate': 'Basic realm="Tomcat Manager Application"' } },
  '/jenkins/login': { type: 'text/html', body: '<html><head><title>Sign in [Jenkins]</title></head><body>Welcome to Jenkins!</body></html>', headers: { 'x-jenkins': '2.426.1', 'x-hudson': '1.395' } },
  '/login': { type: 'text/html', body: '<!DOCTYPE html><html><head><title>Grafana</title></head><body><script>window.grafanaBootData = {"settings":{"appSubUrl":"","buildInfo":{"version":"10.2.3"}}};</script></body></html>' },
  '/app/kibana': { type: 'text/html', body: '<!DOCTYPE html><html><head><title>Elastic</title></head><body><kbn-injected-metadata data="{}"></kbn-injected-metadata>kibana</body></html>', headers: { 'kbn-name': 'kibana', 'kbn-version': '8.11.0' } },
  '/docker-compose.yml': text('version: "3.8"\nservices:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: hunter2\n', 'application/x-yaml'),
  '/.aws/credentials': text('[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n'),
  '/web.config': text('<?xml version="1.0"?>\n<configuration>\n  <system.webServer>\n    <handlers/>\n  </system.webServer>\n  <connectionStrings><add name="db" connectionString="Server=db;Password=hunter2"/></connectionStrings>\n</configuration>\n', 'application/xml'),
  '/.htpasswd': text('admin:$apr1$abcdefgh$0123456789abcdefghijkl\n'),
  '/crossdomain.xml': text('<?xml version="1.0"?>\n<cross-domain-policy>\n  <allow-access-from domain="*" />\n</cross-domain-policy>\n', 'application/xml'),
  '/metrics': text('# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5\n'),
  '/debug/pprof/': { type: 'text/html', body: '<html><head><title>/debug/pprof/</title></head><body>Types of profiles available: <a href="goroutine?debug=1">goroutine</a> <a href="heap?debug=1">heap</a></body></html>' },
  '/rampart-debug-probe-404': { status: 404, type: 'text/html', body: '<html><head><title>Page not found at /rampart-debug-probe-404</title></head><body><p>You\'re seeing this error because you have <code>DEBUG = True</code> in your Django settings file.</p></body></html>' },
  '/_ignition/health-check': { type: 'application/json', body: '{"can_execute_commands":true}' },
  '/wp-config.php.bak': text("<?php\ndefine( 'DB_NAME', 'wordpress' );\ndefine( 'DB_PASSWORD', 'hunter2' );\n"),
};

function vulnerable(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
  // GraphQL with introspection on, at the usual path, for POSTs only.
  if (path === '/graphql' && req.method === 'POST') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"data":{"__schema":{"queryType":{"name":"Query"}}}}');
    return;
  }
  const page = VULNERABLE[path];
  const headers: Record<string, string> = { server: 'Apache/2.4.41 (Ubuntu)', 'x-powered-by': 'PHP/7.4.3' };
  // CORS that reflects any origin and allows credentials.
  const origin = req.headers.origin;
  if (origin) Object.assign(headers, { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true' });
  if (!page || (req.method !== 'GET' && req.method !== 'HEAD')) {
    res.writeHead(404, { ...headers, 'content-type': 'text/html' });
    res.end('<html><body><h1>Not Found</h1></body></html>');
    return;
  }
  res.writeHead(page.status ?? 200, { ...headers, ...page.headers, 'content-type': page.type });
  res.end(req.method === 'HEAD' ? undefined : page.body);
}

function clean(req: http.IncomingMessage, res: http.ServerResponse): void {
  const headers: Record<string, string> = { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', vary: 'Origin' };
  if (req.headers.origin === 'https://portal.acme.test') headers['access-control-allow-origin'] = 'https://portal.acme.test';
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : SPA);
}

/** The request handler of one mode. */
export function targetHandler(mode: TargetMode): http.RequestListener {
  return (req, res) => {
    req.resume();
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://target').pathname;
      if (mode === 'clean') clean(req, res);
      else vulnerable(req, res, path);
    });
  };
}

export interface TestTarget {
  url: string;
  port: number;
  /** Requests received, in order (method and path with query). */
  hits: string[];
  close(): Promise<void>;
}

/** Starts a target on 127.0.0.1 on a free port; `extra` may answer a request first (synchronously). */
export async function startTestTarget(mode: TargetMode, extra?: http.RequestListener): Promise<TestTarget> {
  const hits: string[] = [];
  const base = targetHandler(mode);
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    if (extra) {
      extra(req, res);
      if (res.headersSent || res.writableEnded) return;
    }
    base(req, res);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
