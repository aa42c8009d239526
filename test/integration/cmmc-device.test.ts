// CMMC Level 1, part 1: the profile (Scope), device-check tokens, signed scripts (verified with
// openssl), the macOS script run for real against stub macOS commands and real curl posting to
// this server, and the public verify route (token, validation, rate limit across two app
// instances on one database). Runs on PGlite and, with DATABASE_URL, on PostgreSQL.
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey, hkdfSync } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/lib.ts';
import {
  checkIdsFor,
  DEVICE_CHECKS,
  lazySigner,
  SCRIPT_VERSION,
  SIGNATURE_PREFIX,
  verifySignedScript,
  type DeviceListDto,
  type IssuedTokenDto,
  type ProfileResponse,
} from '../../src/cmmc/index.ts';
import { withService } from '../../src/db/tenant.ts';
import { isAppError } from '../../src/lib/errors.ts';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';

const SEED = 'cmmc-test-seed-0123456789-abcdefghij';

/** A Client whose Origin is this server's PUBLIC_BASE_URL (the app listens on a real port). */
class OriginClient extends Client {
  origin = '';
  override request(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
    return super.request(method, url, body, { origin: this.origin, ...headers });
  }
}

let t: TestApp;
let baseUrl: string;
let work: string;

async function client(): Promise<OriginClient> {
  const c = new OriginClient(t.app);
  c.origin = baseUrl;
  return c;
}

async function cast(label: string) {
  const owner = await client();
  await owner.signUp(uniqueEmail(`${label}-owner`));
  const tenant = await owner.createTenant(`${label} Co`);
  await owner.me();
  const member = await client();
  const m = await member.signUp(uniqueEmail(`${label}-member`));
  await t.database.db
    .insertInto('member')
    .values({ organizationId: tenant, userId: m.user.id, role: 'member', createdAt: new Date() })
    .execute();
  await member.me();
  const other = await client();
  await other.signUp(uniqueEmail(`${label}-other`));
  await other.createTenant(`Other ${label} Co`);
  await other.me();
  return { owner, member, other, tenant, base: `/api/v1/tenants/${tenant}/cmmc` };
}

const profileBody = (over: Record<string, unknown> = {}) => ({
  cageCode: ' 1ab2c ',
  additionalCageCodes: ['9ZZ99'],
  companyName: 'Acme Machining LLC',
  companyAddress: '1 Main St, Dayton OH',
  uei: 'ABCDEF123456',
  scopeDescription: 'Office network, 4 laptops, Microsoft 365 tenant',
  biddingUsers: [{ name: 'Alice Able', email: 'Alice@Acme.test', role: 'Owner' }],
  mailPlatform: 'm365',
  affirmingOfficial: { name: 'Alice Able', title: 'President', email: 'alice@acme.test' },
  ...over,
});

async function setUpProfile(c: Client, base: string): Promise<IssuedTokenDto> {
  const put = await c.put(`${base}/profile`, profileBody());
  expect(put.statusCode, put.body).toBe(200);
  const res = await c.post(`${base}/device-token`);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as IssuedTokenDto;
}

const verifyPost = (token: string | null, body: unknown, app = t.app) =>
  app.inject({
    method: 'POST',
    url: '/api/public/compliance/verify',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    payload: JSON.stringify(body),
  });

const winRun = (hostname = 'FRONT-DESK-01', over: Record<string, unknown> = {}) => ({
  scriptVersion: '1.0.0',
  os: 'windows',
  hostname,
  osVersion: 'Microsoft Windows 11 Pro 10.0.22631',
  results: Object.fromEntries(checkIdsFor('windows').map((id, i) => [id, i % 5 === 0 ? 'fail' : 'pass'])),
  details: { 'win.firewall_enabled': 'Domain, Private and Public profiles on' },
  ...over,
});

beforeAll(async () => {
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  t = await createTestApp({ env: { PUBLIC_BASE_URL: baseUrl, CMMC_SCRIPT_SIGNING_SEED: SEED } });
  await t.app.listen({ port, host: '127.0.0.1' });
  work = mkdtempSync(join(tmpdir(), 'rampart-cmmc-'));
});
afterAll(async () => {
  await t?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('signing key', () => {
  it('publishes the Ed25519 key derived from CMMC_SCRIPT_SIGNING_SEED by HKDF-SHA256 (docs/cmmc.md)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/public/cmmc/signing-key' });
    expect(res.statusCode).toBe(200);
    const key = res.json() as { algorithm: string; publicKey: string; publicKeyPem: string; fingerprint: string };
    expect(Object.keys(key).sort()).toEqual(['algorithm', 'fingerprint', 'publicKey', 'publicKeyPem']);
    expect(key.algorithm).toBe('Ed25519');
    const raw = Buffer.from(key.publicKey, 'base64');
    expect(raw).toHaveLength(32);
    expect(key.fingerprint).toBe(createHash('sha256').update(raw).digest('hex'));
    // Independent derivation: HKDF(ikm = seed, salt = "rampart", info = "cmmc-script-signing v1").
    const seed = Buffer.from(hkdfSync('sha256', SEED, 'rampart', 'cmmc-script-signing v1', 32));
    const priv = createPrivateKey({
      key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: raw.toString('base64url') },
      format: 'jwk',
    });
    const expected = createPublicKey(priv).export({ format: 'jwk' }) as { x: string };
    expect(Buffer.from(expected.x, 'base64url').equals(raw)).toBe(true);
    expect(createPublicKey(key.publicKeyPem).export({ format: 'jwk' })).toMatchObject({
      kty: 'OKP',
      crv: 'Ed25519',
      x: raw.toString('base64url'),
    });
  });

  it('generates a seed into DATA_DIR in embedded mode and refuses to sign without a seed otherwise', () => {
    const dir = mkdtempSync(join(work, 'seed-'));
    const warnings: string[] = [];
    const a = lazySigner({ seed: undefined, embedded: true, dataDir: dir, warn: (m) => warnings.push(m) })();
    expect(existsSync(join(dir, 'cmmc-script-signing-seed'))).toBe(true);
    expect(warnings.join()).toMatch(/CMMC_SCRIPT_SIGNING_SEED not set/);
    // Same key on the next start (read back, no new warning).
    const b = lazySigner({ seed: undefined, embedded: true, dataDir: dir, warn: (m) => warnings.push(m) })();
    expect(b.keyInfo().fingerprint).toBe(a.keyInfo().fingerprint);
    expect(warnings).toHaveLength(1);
    let code = '';
    try {
      lazySigner({ seed: undefined, embedded: false, dataDir: dir, warn: () => {} })();
    } catch (e) {
      code = isAppError(e) ? e.code : String(e);
    }
    expect(code).toBe('cmmc_signing_unavailable');
  });
});

describe('profile (Scope)', () => {
  it('validates the CAGE code and fields, starts in_progress, and lets only owners and admins write', async () => {
    const { owner, member, other, base } = await cast('cmmc-profile');
    const empty = await member.get(`${base}/profile`);
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({ profile: null, canManage: false });

    const bad = await owner.put(
      `${base}/profile`,
      profileBody({
        cageCode: '1AB',
        additionalCageCodes: ['ok', 'ABCDEF'],
        biddingUsers: [],
        mailPlatform: 'yahoo',
        affirmingOfficial: { name: '', title: 'x', email: 'nope' },
      }),
    );
    expect(bad.statusCode).toBe(400);
    const paths = (bad.json() as { details: { path: string }[] }).details.map((d) => d.path);
    for (const p of [
      'body.cageCode',
      'body.additionalCageCodes.0',
      'body.additionalCageCodes.1',
      'body.biddingUsers',
      'body.mailPlatform',
      'body.affirmingOfficial.name',
      'body.affirmingOfficial.email',
    ])
      expect(paths).toContain(p);
    for (const cage of ['1AB2-', '1AB 2', 'ÄAB12', '1AB2CD'])
      expect((await owner.put(`${base}/profile`, profileBody({ cageCode: cage }))).statusCode, cage).toBe(400);
    // CAGE codes never use the letters I and O (they read as 1 and 0), primary or further.
    for (const cage of ['1AI2C', '1ABO2', 'o1234']) {
      const res = await owner.put(`${base}/profile`, profileBody({ cageCode: cage }));
      expect(res.statusCode, cage).toBe(400);
      expect((res.json() as { details: { path: string; message: string }[] }).details[0]).toMatchObject({
        path: 'body.cageCode',
        message: expect.stringMatching(/I and O/),
      });
    }
    expect((await owner.put(`${base}/profile`, profileBody({ additionalCageCodes: ['9ZZI9'] }))).statusCode).toBe(400);
    for (const cage of ['1HJN2', 'Z9P8Q', '00000'])
      expect((await owner.put(`${base}/profile`, profileBody({ cageCode: cage }))).statusCode, cage).toBe(200);

    expect((await member.put(`${base}/profile`, profileBody())).json()).toMatchObject({ error: 'tenant_forbidden' });
    expect((await other.get(`${base}/profile`)).statusCode).toBe(403);

    const saved = await owner.put(`${base}/profile`, profileBody());
    expect(saved.statusCode, saved.body).toBe(200);
    const p = (saved.json() as ProfileResponse).profile!;
    expect(p).toMatchObject({
      cageCode: '1AB2C',
      additionalCageCodes: ['9ZZ99'],
      status: 'in_progress',
      statusDate: null,
      mailPlatform: 'm365',
      biddingUsers: [{ name: 'Alice Able', email: 'alice@acme.test', role: 'Owner' }],
      affirmingOfficial: { name: 'Alice Able', title: 'President', email: 'alice@acme.test' },
      deviceToken: { issued: false, issuedAt: null, scripts: [] },
    });
    const updated = await owner.put(
      `${base}/profile`,
      profileBody({ mailPlatform: 'google', companyName: 'Acme Two' }),
    );
    expect((updated.json() as ProfileResponse).profile).toMatchObject({
      id: p.id,
      mailPlatform: 'google',
      companyName: 'Acme Two',
      status: 'in_progress',
    });
    expect((await member.get(`${base}/profile`)).json()).toMatchObject({ canManage: false, profile: { id: p.id } });
  });

  it('issues device tokens only for a saved profile, to owners and admins', async () => {
    const { owner, member, base } = await cast('cmmc-token-roles');
    expect((await owner.post(`${base}/device-token`)).json()).toMatchObject({ error: 'cmmc_profile_not_found' });
    await owner.put(`${base}/profile`, profileBody());
    expect((await member.post(`${base}/device-token`)).json()).toMatchObject({ error: 'tenant_forbidden' });
    const res = await owner.post(`${base}/device-token`);
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const profile = ((await member.get(`${base}/profile`)).json() as ProfileResponse).profile!;
    expect(profile.deviceToken.issued).toBe(true);
    expect(JSON.stringify(profile)).not.toContain((res.json() as IssuedTokenDto).token);
  });
});

describe('signed scripts', () => {
  let issued: IssuedTokenDto;
  let pem: string;
  let owner: Client;
  let base: string;

  beforeAll(async () => {
    const c = await cast('cmmc-scripts');
    owner = c.owner;
    base = c.base;
    issued = await setUpProfile(owner, base);
    pem = (
      (await t.app.inject({ method: 'GET', url: '/api/public/cmmc/signing-key' })).json() as { publicKeyPem: string }
    ).publicKeyPem;
    writeFileSync(join(work, 'pub.pem'), pem);
  });

  function opensslVerify(content: string | Buffer, name: string): { ok: boolean; out: string } {
    const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
    const text = bytes.toString('utf8');
    const start = text.lastIndexOf(SIGNATURE_PREFIX);
    const body = bytes.subarray(0, Buffer.byteLength(text.slice(0, start), 'utf8'));
    const sig = Buffer.from(text.slice(start + SIGNATURE_PREFIX.length).trim(), 'base64');
    writeFileSync(join(work, `${name}.body`), body);
    writeFileSync(join(work, `${name}.sig`), sig);
    const r = spawnSync(
      'openssl',
      [
        'pkeyutl',
        '-verify',
        '-pubin',
        '-inkey',
        join(work, 'pub.pem'),
        '-rawin',
        '-in',
        join(work, `${name}.body`),
        '-sigfile',
        join(work, `${name}.sig`),
      ],
      { encoding: 'utf8' },
    );
    return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
  }

  it('returns both scripts with the token, the URL, a fingerprint, and a signature line openssl verifies', () => {
    expect(issued.token).toMatch(/^rcd_[A-Za-z0-9_-]{43}$/);
    expect(issued.scripts.map((s) => [s.os, s.fileName])).toEqual([
      ['windows', 'rampart-cmmc-check-windows.ps1'],
      ['macos', 'rampart-cmmc-check-macos.sh'],
    ]);
    expect(issued.verifyUrl).toBe(`${baseUrl}/verify-script`);
    for (const s of issued.scripts) {
      expect(s.sha256).toBe(createHash('sha256').update(s.content).digest('hex'));
      expect(s.content).toContain(issued.token);
      expect(s.content).toContain(`${baseUrl}/api/public/compliance/verify`);
      expect(/^[\x20-\x7e\n]*$/.test(s.content), `${s.os} script is printable ASCII with LF endings`).toBe(true);
      const lines = s.content.trimEnd().split('\n');
      expect(lines.at(-1)).toMatch(/^# RAMPART-SIGNATURE v1 ed25519 [A-Za-z0-9+/]{86}==$/);
      expect(lines.filter((l) => l.startsWith('# RAMPART-SIGNATURE'))).toHaveLength(1);
      const v = opensslVerify(s.content, s.os);
      expect(v.ok, v.out).toBe(true);
      expect(v.out).toMatch(/Signature Verified Successfully/);
      expect(verifySignedScript(s.content, pem)).toBe(true);
    }
  });

  it('fails verification when a single byte is changed, and tolerates CRLF line endings', () => {
    for (const s of issued.scripts) {
      const bytes = Buffer.from(s.content, 'utf8');
      const i = bytes.indexOf('RAMPART_URL') > 0 ? bytes.indexOf('RAMPART_URL') + 2 : bytes.indexOf('$RampartUrl') + 2;
      bytes[i] = bytes[i]! ^ 0x01;
      const v = opensslVerify(bytes, `${s.os}-tampered`);
      expect(v.ok).toBe(false);
      expect(verifySignedScript(bytes.toString('utf8'), pem)).toBe(false);
      expect(verifySignedScript(s.content.replace(/\n/g, '\r\n'), pem)).toBe(true);
      expect(verifySignedScript(s.content.replace(/\n# RAMPART-SIGNATURE.*\n$/, '\n'), pem)).toBe(false);
    }
  });

  it('the PowerShell script reads every Windows check and posts JSON with the bearer token (pwsh is not installed here)', () => {
    const ps = issued.scripts.find((s) => s.os === 'windows')!.content;
    for (const id of checkIdsFor('windows')) expect(ps).toContain(`Write-Check '${id}'`);
    expect(ps).toContain(`$RampartToken = '${issued.token}'`);
    expect(ps).toContain(`$RampartUrl = '${baseUrl}/api/public/compliance/verify'`);
    expect(ps).toMatch(
      /Invoke-RestMethod -Method Post -Uri \$RampartUrl -Headers @\{ Authorization = "Bearer \$RampartToken" \} -ContentType 'application\/json'/,
    );
    expect(ps).toMatch(/os = 'windows'/);
    // Third-party anti-malware: scan recency is unknown with the reason code, sent in "reasons".
    expect(ps).toContain("$Reasons['win.scan_recent'] = 'third_party_av'");
    expect(ps).toMatch(/results = \$Results; details = \$Details; reasons = \$Reasons \}/);
    // The administrator check looks at the signed-in console user, so "Run as administrator" (which
    // the header recommends) does not fail it by itself.
    expect(ps).toContain('(Get-CimInstance Win32_ComputerSystem).UserName');
    expect(ps).not.toMatch(/IsInRole|runs as an administrator/);
    expect(ps).toMatch(
      /as administrator for the most complete results; the administrator check\n# looks at the person signed in/,
    );
    expect(ps).toContain(`$ScriptVersion = '${SCRIPT_VERSION}'`);
    expect(SCRIPT_VERSION).toBe('1.2.0');
    // Over Remote Desktop (no console user) the daily user is the owner of the session's desktop,
    // and only then the script's own account; nobody signed in is an explained unknown.
    const admins = ps.slice(ps.indexOf("# 'win.local_admins'"), ps.indexOf("# 'win.guest_disabled'"));
    expect(admins.indexOf('Win32_ComputerSystem).UserName')).toBeLessThan(
      admins.indexOf('Win32_Process -Filter "Name=\'explorer.exe\'"'),
    );
    expect(admins).toContain('Invoke-CimMethod -InputObject $proc -MethodName GetOwnerSid');
    expect(admins).toMatch(/\$pick = @\(\$owners \| Where-Object \{ \$_\.Session -eq \$session \}/);
    expect(admins.indexOf('GetOwnerSid')).toBeLessThan(admins.indexOf('$daily = $me.Name'));
    expect(admins).toContain("$Reasons['win.local_admins'] = 'no_signed_in_user'");
    // Nested membership: the script's own sign-in groups answer when it runs as the daily user
    // (whoami lists deny-only Administrators too); as another account, a group member that could
    // hold the daily user (domain group, Entra role) leaves it unknown with a reason, never pass.
    expect(admins).toContain('whoami /groups /fo csv /nh');
    expect(admins).toContain(`$viaToken = $groups -match '"S-1-5-32-544"'`);
    expect(admins).toContain("$Reasons['win.local_admins'] = 'admin_groups_unresolved'");
    expect(admins).toMatch(/elseif \(\$unresolved\.Count -gt 0\) \{\n\s+Write-Check 'win\.local_admins' 'unknown'/);
    // The unresolved branch comes before the membership-only pass, and after every fail.
    const order = [
      "if ($direct) { Write-Check 'win.local_admins' 'fail'",
      "elseif ($viaToken -eq $true) { Write-Check 'win.local_admins' 'fail'",
      "elseif ($everyone.Count -gt 0) { Write-Check 'win.local_admins' 'fail'",
      "elseif ($enabled.Count -gt 2) { Write-Check 'win.local_admins' 'fail'",
      "elseif ($viaToken -eq $false) { Write-Check 'win.local_admins' 'pass'",
      'elseif ($unresolved.Count -gt 0) {',
      "else { Write-Check 'win.local_admins' 'pass'",
    ].map((x) => admins.indexOf(x));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // Everyone, Interactive and Authenticated Users in the group make everyone an administrator.
    expect(admins).toContain("$broad = @('S-1-1-0', 'S-1-5-4', 'S-1-5-11')");
    // Get-LocalGroupMember fails on unresolvable Entra SIDs: the WinNT provider is the fallback.
    expect(admins).toContain('[ADSI]"WinNT://$env:COMPUTERNAME/$groupName,group"');
    expect(admins).toContain(".Value.Split('\\')[-1]");
    // The only method called on a process is GetOwnerSid (read only).
    expect([...ps.matchAll(/-MethodName (\w+)/g)].map((m) => m[1])).toEqual(['GetOwnerSid']);
    // The computer name is reduced to the set the server accepts.
    expect(ps).toContain(`-replace '[^A-Za-z0-9 ._''()&,+#!@-]', '-'`);
    // Read only: no cmdlet that changes settings.
    expect(ps).not.toMatch(/\b(Set-|Enable-|Disable-|New-ItemProperty|Remove-|Stop-|Start-Service|Restart-)/);
    // Balanced braces and parentheses (a cheap syntax sanity check without pwsh).
    const code = ps
      .replace(/^\s*#.*$/gm, '')
      .replace(/'[^'\n]*'/g, "''")
      .replace(/"[^"\n]*"/g, '""');
    expect((code.match(/\{/g) ?? []).length).toBe((code.match(/\}/g) ?? []).length);
    expect((code.match(/\(/g) ?? []).length).toBe((code.match(/\)/g) ?? []).length);
    if (spawnSync('pwsh', ['-v']).status === 0) {
      writeFileSync(join(work, 'check.ps1'), ps);
      const r = spawnSync('pwsh', [
        '-NoProfile',
        '-Command',
        `$null = [System.Management.Automation.Language.Parser]::ParseFile('${join(work, 'check.ps1')}', [ref]$null, [ref]$errs); if ($errs) { exit 1 }`,
      ]);
      expect(r.status).toBe(0);
    }
  });

  it('the macOS script passes bash -n and sh -n', () => {
    const sh = issued.scripts.find((s) => s.os === 'macos')!.content;
    const file = join(work, 'syntax.sh');
    writeFileSync(file, sh);
    expect(spawnSync('bash', ['-n', file], { encoding: 'utf8' }).stderr).toBe('');
    expect(spawnSync('bash', ['-n', file]).status).toBe(0);
    expect(spawnSync('sh', ['-n', file]).status).toBe(0);
    // It is a bash script and says so everywhere (no zsh instructions).
    expect(sh.startsWith('#!/bin/bash\n')).toBe(true);
    expect(sh).not.toMatch(/zsh/);
    expect(
      Object.values(DEVICE_CHECKS)
        .filter((c) => c.os === 'macos')
        .every((c) => !c.recheck.includes('zsh') && c.recheck.includes('bash rampart-cmmc-check-macos.sh')),
    ).toBe(true);
  });

  it('the macOS script runs against stub macOS commands and real curl, and the server stores its results', async () => {
    const sh = issued.scripts.find((s) => s.os === 'macos')!.content;
    const stubs = mkdtempSync(join(work, 'stubs-'));
    const lastUpdate = execFileSync('date', ['-u', '-d', '3 days ago', '+%Y-%m-%d %H:%M:%S +0000'], {
      encoding: 'utf8',
    }).trim();
    const stub = (name: string, body: string) => {
      writeFileSync(join(stubs, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(stubs, name), 0o755);
    };
    stub('sw_vers', `[ "$1" = -productVersion ] && echo 14.5`);
    // A real-world ComputerName: curly quotes and an en dash (not ASCII: dropped), a slash (becomes
    // -), parentheses, an ampersand and commas (kept; the server accepts them).
    stub('scutil', `[ "$2" = ComputerName ] && echo "\u201cAlice\u2019s\u201d MacBook Pro (2) / Smith & Sons, Inc."`);
    stub('fdesetup', 'echo "FileVault is On."');
    stub('spctl', 'echo "assessments enabled"');
    stub('csrutil', 'echo "System Integrity Protection status: disabled."');
    stub('socketfilterfw', 'echo "Firewall is enabled. (State = 1)"');
    stub('sysadminctl', 'echo "screenLock delay is immediate" >&2');
    stub('pwpolicy', `echo "<string>policyAttributePassword matches '.{12,}+'</string>"`);
    stub('systemsetup', 'echo "You need administrator access to run this tool... exiting!"');
    stub(
      'dscl',
      `case "$*" in
  *"/Groups/admin GroupMembership"*) echo "GroupMembership: root itadmin" ;;
  *"/Users UniqueID"*) printf '_mbsetupuser 248\\nalice 501\\nitadmin 502\\noffice 503\\n' ;;
  *) exit 1 ;;
esac`,
    );
    stub(
      'defaults',
      `case "$*" in
  *XProtect.meta*Version*) echo 5287 ;;
  *"Managed Preferences"*) echo "The domain/default pair of ($2, $3) does not exist" >&2; exit 1 ;;
  *SoftwareUpdate*LastFullSuccessfulDate*) echo "${lastUpdate}" ;;
  *SoftwareUpdate*AutomaticCheckEnabled*|*SoftwareUpdate*CriticalUpdateInstall*|*SoftwareUpdate*ConfigDataInstall*) echo 1 ;;
  *SoftwareUpdate*) echo "does not exist" >&2; exit 1 ;;
  *loginwindow*GuestEnabled*) echo 0 ;;
  *loginwindow*autoLoginUser*) echo "The domain/default pair of (/Library/Preferences/com.apple.loginwindow, autoLoginUser) does not exist" >&2; exit 1 ;;
  *"-currentHost read com.apple.screensaver idleTime"*) echo 600 ;;
  *) echo "The domain/default pair does not exist" >&2; exit 1 ;;
esac`,
    );
    const file = join(work, issued.scripts[1]!.fileName);
    writeFileSync(file, sh);
    // Asynchronously: the server answering curl runs in this process.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('bash', [file], {
        env: { PATH: `${stubs}:${process.env.PATH}`, SUDO_USER: 'alice', HOME: work, TMPDIR: work },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/Results sent to Rampart \(2 failing checks\)/);

    const devices = (await owner.get(`${base}/devices`)).json() as DeviceListDto;
    const mac = devices.devices.find((d) => d.hostname === 'Alices MacBook Pro (2) - Smith & Sons, Inc.');
    expect(mac, JSON.stringify(devices.devices.map((d) => d.hostname))).toBeDefined();
    expect(mac).toMatchObject({
      os: 'macos',
      osVersion: '14.5',
      scriptVersion: SCRIPT_VERSION,
      pending: false,
      retired: null,
      reasons: {},
    });
    expect(Object.keys(mac!.results).sort()).toEqual(checkIdsFor('macos').sort());
    expect(mac!.results).toEqual({
      'mac.filevault': 'pass',
      'mac.gatekeeper': 'pass',
      'mac.sip': 'fail',
      'mac.xprotect': 'pass',
      'mac.firewall': 'pass',
      'mac.patch_recent': 'pass',
      'mac.auto_update': 'pass',
      'mac.os_supported': 'pass',
      'mac.screen_lock': 'pass',
      'mac.password_policy': 'pass',
      'mac.guest_disabled': 'pass',
      'mac.autologin_disabled': 'pass',
      'mac.admins': 'pass',
      'mac.named_accounts': 'fail',
      'mac.remote_login': 'unknown',
    });
    expect(mac!.summary).toEqual({ pass: 12, fail: 2, unknown: 1 });
    expect(mac!.details['mac.named_accounts']).toMatch(/generic accounts: office/);
    expect(mac!.details['mac.password_policy']).toBe('minimum length 12');
    expect(run.stdout.split('\n').filter((l) => l.startsWith('fail ')).length).toBe(2);
  });
});

describe('POST /api/public/compliance/verify', () => {
  it('refuses a missing, malformed, unknown or revoked token with 401', async () => {
    const { owner, base } = await cast('cmmc-verify-auth');
    const first = await setUpProfile(owner, base);
    for (const token of [null, 'nope', `rcd_${'A'.repeat(43)}`]) {
      const res = await verifyPost(token, winRun());
      expect(res.statusCode, String(token)).toBe(401);
      expect(res.json()).toMatchObject({ error: 'cmmc_device_token_invalid' });
    }
    // A bad token with a bad body: still 401 (the body is not looked at for strangers).
    expect((await verifyPost(`rcd_${'B'.repeat(43)}`, { nonsense: true })).statusCode).toBe(401);
    expect((await verifyPost(first.token, winRun())).statusCode).toBe(201);
    // Re-issuing revokes the old token.
    const second = (await owner.post(`${base}/device-token`)).json() as IssuedTokenDto;
    expect(second.token).not.toBe(first.token);
    expect((await verifyPost(first.token, winRun())).json()).toMatchObject({ error: 'cmmc_device_token_invalid' });
    expect((await verifyPost(second.token, winRun())).statusCode).toBe(201);
  });

  it('validates the body strictly and names each bad field', async () => {
    const { owner, base } = await cast('cmmc-verify-input');
    const { token } = await setUpProfile(owner, base);
    const bad = await verifyPost(token, {
      ...winRun(''),
      scriptVersion: 'latest',
      results: { 'win.firewall_enabled': 'maybe', 'mac.filevault': 'pass', 'win.bogus': 'pass' },
      details: { 'win.rdp_disabled': 'x'.repeat(1001) },
      extra: 1,
    });
    expect(bad.statusCode).toBe(400);
    const body = bad.json() as { error: string; details: { path: string; message: string }[] };
    expect(body.error).toBe('validation_failed');
    const paths = body.details.map((d) => d.path);
    for (const p of [
      'body.scriptVersion',
      'body.hostname',
      'body.results.win.firewall_enabled',
      'body.results.mac.filevault',
      'body.results.win.bogus',
      'body.details.win.rdp_disabled',
      'body.extra',
    ])
      expect(paths, JSON.stringify(body.details)).toContain(p);
    for (const b of [
      {},
      { ...winRun(), os: 'linux' },
      { ...winRun(), results: {} },
      { ...winRun(), hostname: 'x'.repeat(254) },
      [],
    ]) {
      const res = await verifyPost(token, b);
      expect(res.statusCode, JSON.stringify(b).slice(0, 80)).toBe(400);
      expect(res.json()).toMatchObject({ error: 'validation_failed' });
    }
    // A NUL is refused by the one input rule at the edge, before the route's schema.
    const nul = await verifyPost(token, { ...winRun(), hostname: 'a\u0000b' });
    expect(nul.statusCode).toBe(400);
    expect(nul.json()).toMatchObject({ error: 'invalid_characters' });
    // Hostnames: the printable set macOS computer names use is accepted; quotes, slashes, angle
    // brackets and control characters are not.
    for (const h of ['MacBook Pro (2)', 'Smith & Sons, Inc. #3', "Bob's iMac!", 'PC+1@front'])
      expect((await verifyPost(token, winRun(h))).statusCode, h).toBe(201);
    for (const h of ['a<b', 'say "hi"', 'a/b', 'a\\b', '(leading)', 'tab\there']) {
      const res = await verifyPost(token, winRun(h));
      expect(res.statusCode, h).toBe(400);
      expect((res.json() as { details: { path: string }[] }).details.map((d) => d.path)).toContain('body.hostname');
    }
    const big = await t.app.inject({
      method: 'POST',
      url: '/api/public/compliance/verify',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      payload: JSON.stringify({ ...winRun(), pad: 'x'.repeat(70_000) }),
    });
    expect(big.statusCode).toBe(413);
    const text = await t.app.inject({
      method: 'POST',
      url: '/api/public/compliance/verify',
      headers: { 'content-type': 'text/plain', authorization: `Bearer ${token}` },
      payload: 'hello',
    });
    expect(text.json()).toMatchObject({ error: 'validation_failed' });
    const ok = await verifyPost(token, winRun());
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json()).toMatchObject({
      ok: true,
      hostname: 'FRONT-DESK-01',
      summary: { pass: 12, fail: 4, unknown: 0 },
    });
  });

  it('accepts 30 runs per hour per profile, counted in the database across two app instances; the 31st gets 429 with Retry-After', async () => {
    const { owner, base } = await cast('cmmc-verify-rate');
    const { token } = await setUpProfile(owner, base);
    const second = await createTestApp({
      database: t.database,
      env: { PUBLIC_BASE_URL: baseUrl, CMMC_SCRIPT_SIGNING_SEED: SEED },
    });
    try {
      const results = await Promise.all(
        Array.from({ length: 34 }, (_, i) => verifyPost(token, winRun(`PC-${i % 5}`), i % 2 ? second.app : t.app)),
      );
      const codes = results.map((r) => r.statusCode);
      expect(codes.filter((c) => c === 201)).toHaveLength(30);
      expect(codes.filter((c) => c === 429)).toHaveLength(4);
      const limited = results.find((r) => r.statusCode === 429)!;
      expect(limited.json()).toMatchObject({
        error: 'cmmc_verify_rate_limited',
        details: { limit: 30, windowSeconds: 3600 },
      });
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(3000);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      const left = results
        .filter((r) => r.statusCode === 201)
        .map((r) => (r.json() as { runsLeftThisHour: number }).runsLeftThisHour)
        .sort((a, b) => a - b);
      expect(left).toEqual(Array.from({ length: 30 }, (_, i) => i));
      expect((await verifyPost(token, winRun())).statusCode).toBe(429);
      // Another profile is not affected.
      const o = await cast('cmmc-verify-rate-other');
      const other = await setUpProfile(o.owner, o.base);
      expect((await verifyPost(other.token, winRun())).statusCode).toBe(201);
    } finally {
      await second.app.close();
    }
  });

  it('accepts the third_party_av reason only with an unknown win.scan_recent result, and explains it in the device list', async () => {
    const { owner, base } = await cast('cmmc-verify-reasons');
    const { token } = await setUpProfile(owner, base);
    const unknownScan = {
      ...Object.fromEntries(checkIdsFor('windows').map((id) => [id, 'pass'])),
      'win.scan_recent': 'unknown',
    };
    for (const [label, body, path] of [
      [
        'reason with a pass',
        winRun('PC-R', { reasons: { 'win.scan_recent': 'third_party_av' } }),
        'body.reasons.win.scan_recent',
      ],
      [
        'reason code unknown to the catalogue',
        winRun('PC-R', { results: unknownScan, reasons: { 'win.scan_recent': 'snoozed' } }),
        'body.reasons.win.scan_recent',
      ],
      [
        'reason on a check without a rule',
        winRun('PC-R', {
          results: { ...unknownScan, 'win.firewall_enabled': 'unknown' },
          reasons: { 'win.firewall_enabled': 'third_party_av' },
        }),
        'body.reasons.win.firewall_enabled',
      ],
    ] as const) {
      const res = await verifyPost(token, body);
      expect(res.statusCode, label).toBe(400);
      expect(
        (res.json() as { details: { path: string }[] }).details.map((d) => d.path),
        label,
      ).toContain(path);
    }
    const macReason = await verifyPost(token, {
      scriptVersion: '1.1.0',
      os: 'macos',
      hostname: 'mac-r',
      results: { 'mac.filevault': 'unknown' },
      reasons: { 'mac.filevault': 'third_party_av' },
    });
    expect(macReason.statusCode).toBe(400);
    expect(
      (
        await verifyPost(
          token,
          winRun('PC-R', { results: unknownScan, reasons: { 'win.scan_recent': 'third_party_av' } }),
        )
      ).statusCode,
    ).toBe(201);
    const dev = ((await owner.get(`${base}/devices`)).json() as DeviceListDto).devices.find(
      (d) => d.hostname === 'PC-R',
    )!;
    expect(dev.results['win.scan_recent']).toBe('unknown');
    expect(dev.reasons['win.scan_recent']).toMatchObject({ code: 'third_party_av', attestItem: 'si15.frequency' });
    expect(dev.reasons['win.scan_recent']!.explanation).toMatch(/third-party anti-malware/i);
    expect(dev.reasons['win.scan_recent']!.attestItem).toBe('si15.frequency');
    // An older script's plain unknown (no reason) carries no explanation.
    expect((await verifyPost(token, winRun('PC-OLD', { results: unknownScan }))).statusCode).toBe(201);
    expect(
      ((await owner.get(`${base}/devices`)).json() as DeviceListDto).devices.find((d) => d.hostname === 'PC-OLD')!
        .reasons,
    ).toEqual({});
  });

  it('accepts the administrator check reasons (admin_groups_unresolved, no_signed_in_user) only with an unknown win.local_admins, explains them, and no attestation settles them', async () => {
    const { owner, base } = await cast('cmmc-verify-admin-reasons');
    const { token } = await setUpProfile(owner, base);
    const allPass = Object.fromEntries(checkIdsFor('windows').map((id) => [id, 'pass']));
    const unknownAdmin = { ...allPass, 'win.local_admins': 'unknown' };
    for (const [label, body, path] of [
      [
        'with a pass',
        winRun('PC-A', {
          scriptVersion: '1.2.0',
          results: allPass,
          reasons: { 'win.local_admins': 'admin_groups_unresolved' },
        }),
        'body.reasons.win.local_admins',
      ],
      [
        'with a fail',
        winRun('PC-A', {
          scriptVersion: '1.2.0',
          results: { ...allPass, 'win.local_admins': 'fail' },
          reasons: { 'win.local_admins': 'no_signed_in_user' },
        }),
        'body.reasons.win.local_admins',
      ],
      [
        'the anti-malware reason on the admin check',
        winRun('PC-A', {
          scriptVersion: '1.2.0',
          results: unknownAdmin,
          reasons: { 'win.local_admins': 'third_party_av' },
        }),
        'body.reasons.win.local_admins',
      ],
      [
        'an admin reason on the scan check',
        winRun('PC-A', {
          scriptVersion: '1.2.0',
          results: { ...allPass, 'win.scan_recent': 'unknown' },
          reasons: { 'win.scan_recent': 'admin_groups_unresolved' },
        }),
        'body.reasons.win.scan_recent',
      ],
    ] as const) {
      const res = await verifyPost(token, body);
      expect(res.statusCode, label).toBe(400);
      expect(
        (res.json() as { details: { path: string }[] }).details.map((d) => d.path),
        label,
      ).toContain(path);
    }
    expect(
      (
        await verifyPost(
          token,
          winRun('PC-A', {
            scriptVersion: '1.2.0',
            results: unknownAdmin,
            details: {
              'win.local_admins': 'signed-in user ACME\\bob may be an administrator through ACME\\Domain Admins',
            },
            reasons: { 'win.local_admins': 'admin_groups_unresolved' },
          }),
        )
      ).statusCode,
    ).toBe(201);
    expect(
      (
        await verifyPost(
          token,
          winRun('PC-B', {
            scriptVersion: '1.2.0',
            results: unknownAdmin,
            reasons: { 'win.local_admins': 'no_signed_in_user' },
          }),
        )
      ).statusCode,
    ).toBe(201);
    const devices = ((await owner.get(`${base}/devices`)).json() as DeviceListDto).devices;
    const a = devices.find((d) => d.hostname === 'PC-A')!;
    expect(a.reasons['win.local_admins']).toMatchObject({ code: 'admin_groups_unresolved', attestItem: null });
    expect(a.reasons['win.local_admins']!.explanation).toMatch(/cannot be settled by an attestation/);
    expect(devices.find((d) => d.hostname === 'PC-B')!.reasons['win.local_admins']).toMatchObject({
      code: 'no_signed_in_user',
      attestItem: null,
    });
  });

  it('lists the latest run per hostname and flags runs older than 30 days as pending', async () => {
    const { owner, member, other, base } = await cast('cmmc-devices');
    const { token } = await setUpProfile(owner, base);
    expect(
      (await verifyPost(token, winRun('LAPTOP-1', { results: { 'win.firewall_enabled': 'fail' } }))).statusCode,
    ).toBe(201);
    expect(
      (await verifyPost(token, winRun('laptop-1', { results: { 'win.firewall_enabled': 'pass' } }))).statusCode,
    ).toBe(201);
    expect((await verifyPost(token, winRun('LAPTOP-2'))).statusCode).toBe(201);
    const profile = ((await owner.get(`${base}/profile`)).json() as ProfileResponse).profile!;
    const tenantId = base.split('/')[4]!;
    await withService(t.database.db, (tx) =>
      tx
        .insertInto('endpoint_audit_runs' as never)
        .values({
          tenant_id: tenantId,
          profile_id: profile.id,
          hostname: 'OLD-MAC',
          os: 'macos',
          results: JSON.stringify({ 'mac.filevault': 'pass' }),
          details: '{}',
          script_version: '1.0.0',
          received_at: new Date(Date.now() - 31 * 86_400_000),
        } as never)
        .execute(),
    );
    const list = (await member.get(`${base}/devices`)).json() as DeviceListDto;
    expect(list.staleDays).toBe(30);
    expect(list.devices.map((d) => [d.hostname, d.pending])).toEqual([
      ['LAPTOP-2', false],
      ['laptop-1', false],
      ['OLD-MAC', true],
    ]);
    expect(list.devices[1]!.results).toEqual({ 'win.firewall_enabled': 'pass' });
    expect(list.checks.find((c) => c.id === 'mac.filevault')).toMatchObject({
      os: 'macos',
      title: 'FileVault disk encryption is on',
      supporting: true,
    });
    expect((await other.get(`${base}/devices`)).statusCode).toBe(403);
  });
});
