// Generators of the read-only device-check scripts (Windows PowerShell 5.1+, macOS bash).
// Each script reads settings (never changes them), prints a pass / fail / unknown line per check,
// and POSTs the results as JSON to POST /api/public/compliance/verify with the profile's bearer
// token. The token and the public base URL are embedded; the caller signs the text
// (cmmc-signing.ts), so the scripts are pure ASCII with LF line endings.
// Over 500 lines on purpose: the two device-check scripts are generated text; their templates read best whole.
import { BlockList, isIP } from 'node:net';
import { checkIdsFor, type DeviceOs } from './cmmc-checks.ts';

export const SCRIPT_VERSION = '1.2.0';
export const VERIFY_PATH = '/api/public/compliance/verify';

export interface ScriptInput {
  token: string;
  baseUrl: string;
  /** Shown in the header comment. */
  generatedAt: Date;
  cageCode: string;
  /** From baseUrlWarning(): repeated in the header comment. */
  warning?: string | null;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addSubnet('0.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addAddress('::', 'ipv6');
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['169.254.0.0', 16],
  ['100.64.0.0', 10],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv4');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');
PRIVATE.addSubnet('fe80::', 10, 'ipv6');

/**
 * Why the company's laptops may not reach the address the scripts post to (PUBLIC_BASE_URL), or
 * null: a loopback name or address reaches only the server itself, a private or link-local one only
 * computers on that network. Shown with the issued scripts, in their header and in the API answer.
 */
export function baseUrlWarning(baseUrl: string): string | null {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return `The scripts send their results to "${baseUrl}", which is not a valid address.`;
  }
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host)?.[1];
  const ip = mapped ?? host;
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  const fix =
    "Set PUBLIC_BASE_URL to the address the company's computers use to reach Rampart, then issue new scripts.";
  if (host === 'localhost' || host.endsWith('.localhost') || (isIP(ip) && LOOPBACK.check(ip, family)))
    return `The scripts send their results to ${baseUrl}, a loopback address: only this server can reach it, not the company's computers. ${fix}`;
  if (isIP(ip) && PRIVATE.check(ip, family))
    return `The scripts send their results to ${baseUrl}, a private network address: only computers on that network (or its VPN) can reach it; laptops elsewhere cannot. ${fix}`;
  if (!isIP(ip) && (!host.includes('.') || host.endsWith('.local') || host.endsWith('.internal')))
    return `The scripts send their results to ${baseUrl}, a name that resolves only inside a local network: laptops elsewhere cannot reach it. ${fix}`;
  return null;
}

/** The warning as header comment lines (ASCII, wrapped at about 96 characters). */
function warningLines(warning: string | null | undefined): string {
  if (!warning) return '';
  const words = asciiOnly(warning).split(' ');
  const lines: string[] = [];
  let line = '# WARNING:';
  for (const w of words) {
    if (line.length + w.length + 1 > 96) {
      lines.push(line);
      line = '#  ';
    }
    line += ` ${w}`;
  }
  lines.push(line);
  return `#\n${lines.join('\n')}\n`;
}

export const SCRIPT_FILE_NAMES: Readonly<Record<DeviceOs, string>> = {
  windows: 'rampart-cmmc-check-windows.ps1',
  macos: 'rampart-cmmc-check-macos.sh',
};

const asciiOnly = (s: string) => s.replace(/[^\x20-\x7e]/g, '?');
const shQuote = (s: string) => `'${asciiOnly(s).replace(/'/g, `'\\''`)}'`;
const psQuote = (s: string) => `'${asciiOnly(s).replace(/'/g, "''")}'`;

function assertCovers(os: DeviceOs, text: string): void {
  const missing = checkIdsFor(os).filter((id) => !text.includes(`'${id}'`));
  if (missing.length) throw new Error(`the ${os} script does not report ${missing.join(', ')}`);
}

export function generateMacScript(input: ScriptInput): string {
  const url = `${input.baseUrl.replace(/\/+$/, '')}${VERIFY_PATH}`;
  const verifyUrl = `${input.baseUrl.replace(/\/+$/, '')}/verify-script`;
  const text = `#!/bin/bash
# Rampart CMMC Level 1 device check for macOS (read only: nothing on this Mac is changed).
# Version ${SCRIPT_VERSION}, generated ${input.generatedAt.toISOString()} for CAGE ${asciiOnly(input.cageCode)}.
#
# Before running it, check this file's signature at ${asciiOnly(verifyUrl)}
${warningLines(input.warning)}# Run in Terminal:  bash ${SCRIPT_FILE_NAMES.macos}
# (sudo bash ${SCRIPT_FILE_NAMES.macos} gives the most complete results.)
# It reads security settings, prints pass / fail / unknown per check, and sends the results
# (with this computer's name and macOS version) to Rampart. Keep this file private: it holds your
# company's device-check token.

RAMPART_URL=${shQuote(url)}
RAMPART_TOKEN=${shQuote(input.token)}
SCRIPT_VERSION='${SCRIPT_VERSION}'
LC_ALL=C
export LC_ALL
PATH="$PATH:/usr/bin:/bin:/usr/sbin:/sbin:/usr/libexec/ApplicationFirewall"
export PATH

RESULTS=''
DETAILS=''
FAILS=0

have() { command -v "$1" >/dev/null 2>&1; }

# One line of printable ASCII, at most 300 characters, escaped for a JSON string.
clean() {
  printf '%s' "$1" | tr '\\n\\t\\r' '   ' | tr -cd ' -~' | cut -c1-300 | sed -e 's/\\\\/\\\\\\\\/g' -e 's/"/\\\\"/g'
}

record() {
  d=$(clean "$3")
  if [ -n "$RESULTS" ]; then RESULTS="$RESULTS,"; DETAILS="$DETAILS,"; fi
  RESULTS="$RESULTS\\"$1\\":\\"$2\\""
  DETAILS="$DETAILS\\"$1\\":\\"$d\\""
  if [ "$2" = fail ]; then FAILS=$((FAILS + 1)); fi
  printf '%-8s %-24s %s\\n' "$2" "$1" "$d"
}

# defaults read <domain> <key>: prints the value, or __missing__ when the key is not set,
# or __error__ when it could not be read.
pref() {
  out=$(defaults read "$1" "$2" 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then printf '%s' "$out"
  else case "$out" in *"does not exist"*) printf '__missing__' ;; *) printf '__error__' ;; esac
  fi
}

to_epoch() {
  date -j -u -f '%Y-%m-%d %H:%M:%S %z' "$1" +%s 2>/dev/null || date -u -d "$1" +%s 2>/dev/null
}

# The computer name as sent: printable ASCII letters, digits, spaces and . _ ' - ( ) & , + # ! @
# (characters that are not ASCII, e.g. a typographic apostrophe, are dropped; other ASCII ones
# become -), starting with a letter or digit, at most 200 characters. The server accepts this set.
safe_host() {
  printf '%s' "$1" | tr '\\n\\t\\r' '   ' | tr -cd ' -~' | tr -c "A-Za-z0-9 ._'()&,+#!@-" '-' | sed -e 's/^[^A-Za-z0-9]*//' | cut -c1-200 | sed -e 's/ *$//'
}
HOST=$(safe_host "$(scutil --get ComputerName 2>/dev/null)")
[ -n "$HOST" ] || HOST=$(safe_host "$(hostname 2>/dev/null)")
[ -n "$HOST" ] || HOST='unknown-mac'
OSVER=$(sw_vers -productVersion 2>/dev/null)
ME=\${SUDO_USER:-$(id -un 2>/dev/null)}

echo "Rampart CMMC device check $SCRIPT_VERSION on $HOST (macOS $OSVER)"
echo

# 'mac.filevault'
if have fdesetup; then
  out=$(fdesetup status 2>&1)
  case "$out" in
    *"FileVault is On"*) record mac.filevault pass "$out" ;;
    *"FileVault is Off"*) record mac.filevault fail "$out" ;;
    *) record mac.filevault unknown "$out" ;;
  esac
else record mac.filevault unknown 'fdesetup not found'; fi

# 'mac.gatekeeper'
if have spctl; then
  out=$(spctl --status 2>&1)
  case "$out" in
    *"assessments enabled"*) record mac.gatekeeper pass "$out" ;;
    *"assessments disabled"*) record mac.gatekeeper fail "$out" ;;
    *) record mac.gatekeeper unknown "$out" ;;
  esac
else record mac.gatekeeper unknown 'spctl not found'; fi

# 'mac.sip'
if have csrutil; then
  out=$(csrutil status 2>&1)
  case "$out" in
    *"status: enabled."*) record mac.sip pass "$out" ;;
    *"status: disabled"*|*"Custom Configuration"*) record mac.sip fail "$out" ;;
    *) record mac.sip unknown "$out" ;;
  esac
else record mac.sip unknown 'csrutil not found'; fi

# 'mac.xprotect'
xp=$(pref /Library/Apple/System/Library/CoreServices/XProtect.bundle/Contents/Resources/XProtect.meta Version)
case "$xp" in
  ''|*[!0-9]*) record mac.xprotect unknown "XProtect version not readable ($xp)" ;;
  *) record mac.xprotect pass "XProtect version $xp" ;;
esac

# 'mac.firewall'
if have socketfilterfw; then
  out=$(socketfilterfw --getglobalstate 2>&1)
  case "$out" in
    *"enabled"*) record mac.firewall pass "$out" ;;
    *"disabled"*) record mac.firewall fail "$out" ;;
    *) record mac.firewall unknown "$out" ;;
  esac
else
  fw=$(pref /Library/Preferences/com.apple.alf globalstate)
  case "$fw" in
    1|2) record mac.firewall pass "com.apple.alf globalstate $fw" ;;
    0) record mac.firewall fail "com.apple.alf globalstate 0" ;;
    *) record mac.firewall unknown "firewall state not readable" ;;
  esac
fi

# 'mac.patch_recent'
last=$(pref /Library/Preferences/com.apple.SoftwareUpdate LastFullSuccessfulDate)
case "$last" in
  __missing__|__error__|'') record mac.patch_recent unknown 'LastFullSuccessfulDate not readable' ;;
  *)
    ts=$(to_epoch "$last")
    if [ -n "$ts" ]; then
      age=$(( ($(date +%s) - ts) / 86400 ))
      if [ "$age" -le 30 ]; then record mac.patch_recent pass "last full update $last ($age days ago)"
      else record mac.patch_recent fail "last full update $last ($age days ago)"; fi
    else record mac.patch_recent unknown "unreadable date $last"; fi
    ;;
esac

# 'mac.auto_update'
au_off=''
au_on=''
au_seen=''
for key in AutomaticCheckEnabled AutomaticDownload CriticalUpdateInstall ConfigDataInstall; do
  v=$(pref '/Library/Managed Preferences/com.apple.SoftwareUpdate' "$key")
  case "$v" in 0|1) ;; *) v=$(pref /Library/Preferences/com.apple.SoftwareUpdate "$key") ;; esac
  au_seen="$au_seen $key=$v"
  case "$v" in 0) au_off="$au_off $key" ;; 1) au_on="$au_on $key" ;; esac
done
if [ -n "$au_off" ]; then record mac.auto_update fail "turned off:$au_off"
elif [ -n "$au_on" ]; then record mac.auto_update pass "$au_seen"
else record mac.auto_update unknown "no update preferences set:$au_seen"; fi

# 'mac.os_supported'
major=$(printf '%s' "$OSVER" | cut -d. -f1)
case "$major" in
  ''|*[!0-9]*) record mac.os_supported unknown "macOS version not readable" ;;
  *) if [ "$major" -ge 13 ]; then record mac.os_supported pass "macOS $OSVER"; else record mac.os_supported fail "macOS $OSVER is no longer supported"; fi ;;
esac

# 'mac.screen_lock'
sl=''
if have sysadminctl; then sl=$(sysadminctl -screenLock status 2>&1); fi
delay=''
case "$sl" in
  *"immediate"*) delay=0 ;;
  *"is off"*) delay=off ;;
  *"delay is "*) delay=$(printf '%s' "$sl" | sed -n 's/.*delay is \\([0-9][0-9]*\\) seconds.*/\\1/p') ;;
esac
idle=$(defaults -currentHost read com.apple.screensaver idleTime 2>/dev/null)
if [ "$delay" = off ] || [ "$idle" = 0 ]; then record mac.screen_lock fail "screen lock: $sl; idleTime: $idle"
elif [ -n "$delay" ] && [ -n "$idle" ] && [ "$delay" -le 300 ] 2>/dev/null && [ "$idle" -le 900 ] 2>/dev/null; then record mac.screen_lock pass "screen lock delay $delay s; screen saver after $idle s"
elif [ -n "$idle" ] && [ "$idle" -gt 900 ] 2>/dev/null; then record mac.screen_lock fail "screen saver starts after $idle s (more than 15 minutes)"
else record mac.screen_lock unknown "screen lock: $sl; idleTime: $idle"; fi

# 'mac.password_policy'
if have pwpolicy; then
  pp=$(pwpolicy -getaccountpolicies 2>/dev/null)
  min=$(printf '%s' "$pp" | grep -o '\\.{[0-9][0-9]*,' | head -n 1 | tr -cd '0-9')
  [ -n "$min" ] || min=$(printf '%s' "$pp" | grep -o 'minChars=[0-9][0-9]*' | head -n 1 | tr -cd '0-9')
  if [ -z "$min" ]; then record mac.password_policy unknown 'no minimum length found in the account policies'
  elif [ "$min" -ge 8 ]; then record mac.password_policy pass "minimum length $min"
  else record mac.password_policy fail "minimum length $min"; fi
else record mac.password_policy unknown 'pwpolicy not found'; fi

# 'mac.guest_disabled'
g=$(pref '/Library/Managed Preferences/com.apple.MCX' DisableGuestAccount)
if [ "$g" = 1 ]; then record mac.guest_disabled pass 'guest account disabled by profile'
else
  g=$(pref /Library/Preferences/com.apple.loginwindow GuestEnabled)
  case "$g" in
    0|__missing__) record mac.guest_disabled pass "GuestEnabled=$g" ;;
    1) record mac.guest_disabled fail 'GuestEnabled=1' ;;
    *) record mac.guest_disabled unknown 'GuestEnabled not readable' ;;
  esac
fi

# 'mac.autologin_disabled'
al=$(pref /Library/Preferences/com.apple.loginwindow autoLoginUser)
case "$al" in
  __missing__) record mac.autologin_disabled pass 'no automatic login user' ;;
  __error__) record mac.autologin_disabled unknown 'autoLoginUser not readable' ;;
  *) record mac.autologin_disabled fail "automatic login as $al" ;;
esac

# 'mac.admins'
if have dscl; then
  gm=$(dscl . -read /Groups/admin GroupMembership 2>/dev/null | sed 's/^GroupMembership://')
  if [ -z "$gm" ]; then record mac.admins unknown 'admin group not readable'
  else
    list=$(printf '%s' "$gm" | tr ' ' '\\n' | grep .)
    others=$(printf '%s\\n' "$list" | grep -v '^root$' | grep -c .)
    if printf '%s\\n' "$list" | grep -qx "$ME"; then record mac.admins fail "$ME is an administrator (admins:$gm)"
    elif [ "$others" -gt 2 ]; then record mac.admins fail "$others administrators:$gm"
    else record mac.admins pass "admins:$gm"; fi
  fi
else record mac.admins unknown 'dscl not found'; fi

# 'mac.named_accounts'
if have dscl; then
  users=$(dscl . -list /Users UniqueID 2>/dev/null | awk '$2 >= 500 { print $1 }')
  if [ -z "$users" ]; then record mac.named_accounts unknown 'local users not readable'
  else
    generic=$(printf '%s\\n' "$users" | grep -Ei '^(office|shared|share|user|users|staff|reception|front|frontdesk|temp|test|admin1)[0-9]*$' | tr '\\n' ' ')
    if [ -n "$generic" ]; then record mac.named_accounts fail "generic accounts: $generic"
    else record mac.named_accounts pass "accounts: $(printf '%s' "$users" | tr '\\n' ' ')"; fi
  fi
else record mac.named_accounts unknown 'dscl not found'; fi

# 'mac.remote_login'
if have systemsetup; then
  rl=$(systemsetup -getremotelogin 2>&1)
  case "$rl" in
    *"Remote Login: Off"*) record mac.remote_login pass "$rl" ;;
    *"Remote Login: On"*) record mac.remote_login fail "$rl" ;;
    *) record mac.remote_login unknown "$rl" ;;
  esac
else record mac.remote_login unknown 'systemsetup not found'; fi

echo
BODY="{\\"scriptVersion\\":\\"$SCRIPT_VERSION\\",\\"os\\":\\"macos\\",\\"hostname\\":\\"$(clean "$HOST")\\",\\"osVersion\\":\\"$(clean "$OSVER")\\",\\"results\\":{$RESULTS},\\"details\\":{$DETAILS}}"

if ! have curl; then echo 'curl not found: cannot send the results.'; exit 2; fi
tmp=$(mktemp -d "\${TMPDIR:-/tmp}/rampart-cmmc.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
printf '%s' "$BODY" > "$tmp/body.json"
# The token travels in a curl config read from stdin, so it never shows in the process list.
code=$(printf 'header = "Authorization: Bearer %s"\\n' "$RAMPART_TOKEN" | curl -sS --max-time 60 -K - -H 'Content-Type: application/json' --data-binary @"$tmp/body.json" -o "$tmp/response.json" -w '%{http_code}' "$RAMPART_URL")
case "$code" in
  2??) echo "Results sent to Rampart ($FAILS failing checks). Open the Device check tab to see them."; exit 0 ;;
  *) echo "Rampart did not accept the results (HTTP $code):"; cat "$tmp/response.json" 2>/dev/null; echo; exit 1 ;;
esac
`;
  assertCovers('macos', text);
  return text;
}

export function generateWindowsScript(input: ScriptInput): string {
  const url = `${input.baseUrl.replace(/\/+$/, '')}${VERIFY_PATH}`;
  const verifyUrl = `${input.baseUrl.replace(/\/+$/, '')}/verify-script`;
  const text = `# Rampart CMMC Level 1 device check for Windows (read only: nothing on this computer is changed).
# Version ${SCRIPT_VERSION}, generated ${input.generatedAt.toISOString()} for CAGE ${asciiOnly(input.cageCode)}.
#
# Before running it, check this file's signature at ${asciiOnly(verifyUrl)}
${warningLines(input.warning)}# Run in PowerShell (as administrator for the most complete results; the administrator check
# looks at the person signed in to this computer, not at the account that elevated PowerShell):
#   powershell -NoProfile -ExecutionPolicy Bypass -File .\\${SCRIPT_FILE_NAMES.windows}
# If that check comes back unknown (admin_groups_unresolved), run it again signed in as the daily
# user without entering another account's password: their own groups then answer it.
# It reads security settings, prints pass / fail / unknown per check, and sends the results
# (with this computer's name and Windows version) to Rampart. Keep this file private: it holds
# your company's device-check token.
#Requires -Version 5.1

$RampartUrl = ${psQuote(url)}
$RampartToken = ${psQuote(input.token)}
$ScriptVersion = '${SCRIPT_VERSION}'
$ErrorActionPreference = 'Stop'
$Results = [ordered]@{}
$Details = [ordered]@{}
# Reason codes of unknown results the script can explain: third_party_av (win.scan_recent), and
# admin_groups_unresolved or no_signed_in_user (win.local_admins).
$Reasons = [ordered]@{}

function Write-Check([string]$Id, [string]$Status, [string]$Detail) {
  $d = ($Detail -replace '[^\\x20-\\x7e]', ' ')
  if ($d.Length -gt 300) { $d = $d.Substring(0, 300) }
  $Results[$Id] = $Status
  $Details[$Id] = $d
  Write-Host ('{0,-8} {1,-26} {2}' -f $Status, $Id, $d)
}

function Invoke-Check([string]$Id, [scriptblock]$Block) {
  try { & $Block } catch { Write-Check $Id 'unknown' ("could not read: " + $_.Exception.Message) }
}

function Get-RegValue([string]$Path, [string]$Name) {
  $item = Get-ItemProperty -Path $Path -Name $Name -ErrorAction SilentlyContinue
  if ($null -eq $item) { return $null }
  return $item.$Name
}

$os = Get-CimInstance Win32_OperatingSystem
# The computer name as sent: printable ASCII letters, digits, spaces and . _ ' - ( ) & , + # ! @
# (anything else becomes -), starting with a letter or digit, at most 200 characters.
$HostName = (($env:COMPUTERNAME -replace '[^A-Za-z0-9 ._''()&,+#!@-]', '-') -replace '^[^A-Za-z0-9]+', '').Trim()
if ($HostName.Length -gt 200) { $HostName = $HostName.Substring(0, 200).Trim() }
if (-not $HostName) { $HostName = 'unknown-pc' }
$OsVersion = "$($os.Caption) $($os.Version)"
Write-Host "Rampart CMMC device check $ScriptVersion on $HostName ($OsVersion)"
Write-Host ''

$mp = $null
try { $mp = Get-MpComputerStatus } catch { $mp = $null }
$av = @()
try { $av = @(Get-CimInstance -Namespace root/SecurityCenter2 -ClassName AntiVirusProduct) } catch { $av = @() }
# productState: second byte 0x10/0x11 = on; third byte 0x00 = definitions up to date.
$avOn = @($av | Where-Object { ('{0:X6}' -f $_.productState).Substring(2, 2) -in @('10', '11') })
$avCurrent = @($avOn | Where-Object { ('{0:X6}' -f $_.productState).Substring(4, 2) -eq '00' })
$thirdParty = @($avOn | Where-Object { $_.displayName -notmatch 'Windows Defender|Microsoft Defender' })

# 'win.av_enabled'
Invoke-Check 'win.av_enabled' {
  if ($avOn.Count -gt 0) { Write-Check 'win.av_enabled' 'pass' ('on: ' + (($avOn | ForEach-Object { $_.displayName }) -join ', ')) }
  elseif ($mp -and $mp.AMServiceEnabled -and $mp.AntivirusEnabled) { Write-Check 'win.av_enabled' 'pass' 'Microsoft Defender antivirus enabled' }
  elseif ($mp -or $av.Count -gt 0) { Write-Check 'win.av_enabled' 'fail' 'no enabled anti-malware product' }
  else { Write-Check 'win.av_enabled' 'unknown' 'Security Center and Defender status unavailable' }
}

# 'win.av_signatures_current'
Invoke-Check 'win.av_signatures_current' {
  if ($thirdParty.Count -gt 0) {
    if (@($thirdParty | Where-Object { ('{0:X6}' -f $_.productState).Substring(4, 2) -eq '00' }).Count -gt 0) { Write-Check 'win.av_signatures_current' 'pass' 'third-party definitions up to date (Security Center)' }
    else { Write-Check 'win.av_signatures_current' 'fail' 'third-party definitions out of date (Security Center)' }
  } elseif ($mp) {
    if (-not $mp.DefenderSignaturesOutOfDate -and $mp.AntivirusSignatureAge -le 7) { Write-Check 'win.av_signatures_current' 'pass' ("definitions $($mp.AntivirusSignatureAge) days old") }
    else { Write-Check 'win.av_signatures_current' 'fail' ("definitions $($mp.AntivirusSignatureAge) days old, out of date: $($mp.DefenderSignaturesOutOfDate)") }
  } elseif ($avCurrent.Count -gt 0) { Write-Check 'win.av_signatures_current' 'pass' 'definitions up to date (Security Center)' }
  else { Write-Check 'win.av_signatures_current' 'unknown' 'definition state unavailable' }
}

# 'win.realtime_protection'
Invoke-Check 'win.realtime_protection' {
  if ($thirdParty.Count -gt 0) { Write-Check 'win.realtime_protection' 'pass' ('third-party product on: ' + (($thirdParty | ForEach-Object { $_.displayName }) -join ', ')) }
  elseif ($mp) {
    if ($mp.RealTimeProtectionEnabled -and $mp.OnAccessProtectionEnabled -and $mp.IoavProtectionEnabled) { Write-Check 'win.realtime_protection' 'pass' 'real-time, on-access and download scanning on' }
    else { Write-Check 'win.realtime_protection' 'fail' ("real-time $($mp.RealTimeProtectionEnabled), on-access $($mp.OnAccessProtectionEnabled), downloads $($mp.IoavProtectionEnabled)") }
  } else { Write-Check 'win.realtime_protection' 'unknown' 'Defender status unavailable' }
}

# 'win.scan_recent'
Invoke-Check 'win.scan_recent' {
  if ($thirdParty.Count -gt 0) {
    # Windows does not expose a third-party product's scan history: say so with a reason code, so
    # the scan-frequency attestation (si15.frequency) can stand in for this computer.
    Write-Check 'win.scan_recent' 'unknown' ('third-party anti-malware on (' + (($thirdParty | ForEach-Object { $_.displayName }) -join ', ') + '): its scan history is not readable; answer the scan-frequency attestation (si15.frequency)')
    $Reasons['win.scan_recent'] = 'third_party_av'
  }
  elseif (-not $mp) { Write-Check 'win.scan_recent' 'unknown' 'Defender scan history not readable' }
  else {
    $age = [Math]::Min([int]$mp.QuickScanAge, [int]$mp.FullScanAge)
    if ($age -le 7 -and -not $mp.QuickScanOverdue) { Write-Check 'win.scan_recent' 'pass' "last scan $age days ago" }
    else { Write-Check 'win.scan_recent' 'fail' "last scan $age days ago, quick scan overdue: $($mp.QuickScanOverdue)" }
  }
}

# 'win.firewall_enabled'
Invoke-Check 'win.firewall_enabled' {
  $profiles = @(Get-NetFirewallProfile -PolicyStore ActiveStore)
  if ($profiles.Count -eq 0) { Write-Check 'win.firewall_enabled' 'unknown' 'no firewall profiles returned' }
  else {
    $off = @($profiles | Where-Object { -not [bool]$_.Enabled } | ForEach-Object { $_.Name })
    if ($off.Count -eq 0) { Write-Check 'win.firewall_enabled' 'pass' 'Domain, Private and Public profiles on' }
    else { Write-Check 'win.firewall_enabled' 'fail' ('off: ' + ($off -join ', ')) }
  }
}

# 'win.patch_recent'
Invoke-Check 'win.patch_recent' {
  $searcher = (New-Object -ComObject Microsoft.Update.Session).CreateUpdateSearcher()
  $count = $searcher.GetTotalHistoryCount()
  $last = $null
  if ($count -gt 0) {
    $last = $searcher.QueryHistory(0, [Math]::Min($count, 200)) | Where-Object { $_.Operation -eq 1 -and $_.ResultCode -eq 2 } | Sort-Object Date -Descending | Select-Object -First 1
  }
  if ($null -eq $last) {
    $hf = Get-HotFix | Where-Object { $_.InstalledOn } | Sort-Object InstalledOn -Descending | Select-Object -First 1
    if ($null -eq $hf) { Write-Check 'win.patch_recent' 'unknown' 'no update history found'; return }
    $when = [datetime]$hf.InstalledOn
  } else { $when = $last.Date }
  $days = [int]((Get-Date) - $when).TotalDays
  if ($days -le 30) { Write-Check 'win.patch_recent' 'pass' ("last update installed $($when.ToString('yyyy-MM-dd')) ($days days ago)") }
  else { Write-Check 'win.patch_recent' 'fail' ("last update installed $($when.ToString('yyyy-MM-dd')) ($days days ago)") }
}

# 'win.auto_update'
Invoke-Check 'win.auto_update' {
  $au = 'HKLM:\\SOFTWARE\\Policies\\Microsoft\\Windows\\WindowsUpdate\\AU'
  $noAuto = Get-RegValue $au 'NoAutoUpdate'
  $opts = Get-RegValue $au 'AUOptions'
  $svc = Get-CimInstance Win32_Service -Filter "Name='wuauserv'"
  if ($noAuto -eq 1 -or $opts -eq 1) { Write-Check 'win.auto_update' 'fail' "policy NoAutoUpdate=$noAuto AUOptions=$opts" }
  elseif ($svc -and $svc.StartMode -eq 'Disabled') { Write-Check 'win.auto_update' 'fail' 'Windows Update service is disabled' }
  else { Write-Check 'win.auto_update' 'pass' "NoAutoUpdate=$noAuto AUOptions=$opts service=$($svc.StartMode)" }
}

# 'win.os_supported'
Invoke-Check 'win.os_supported' {
  $v = [version]$os.Version
  $server = $os.Caption -match 'Server'
  if ($server) { $ok = $v.Build -ge 14393 } else { $ok = $v.Major -ge 10 -and $v.Build -ge 19045 }
  if ($ok) { Write-Check 'win.os_supported' 'pass' $OsVersion } else { Write-Check 'win.os_supported' 'fail' "$OsVersion no longer gets security updates" }
}

# 'win.disk_encryption'
Invoke-Check 'win.disk_encryption' {
  $vol = Get-BitLockerVolume -MountPoint $env:SystemDrive
  if ($vol.ProtectionStatus -eq 'On' -and $vol.VolumeStatus -eq 'FullyEncrypted') { Write-Check 'win.disk_encryption' 'pass' "$($env:SystemDrive) fully encrypted, protection on" }
  else { Write-Check 'win.disk_encryption' 'fail' "$($env:SystemDrive) $($vol.VolumeStatus), protection $($vol.ProtectionStatus)" }
}

# 'win.screen_lock'
Invoke-Check 'win.screen_lock' {
  $inactivity = Get-RegValue 'HKLM:\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Policies\\System' 'InactivityTimeoutSecs'
  $timeout = Get-RegValue 'HKCU:\\Control Panel\\Desktop' 'ScreenSaveTimeOut'
  $secure = Get-RegValue 'HKCU:\\Control Panel\\Desktop' 'ScreenSaverIsSecure'
  $policySecure = Get-RegValue 'HKLM:\\SOFTWARE\\Policies\\Microsoft\\Windows\\Control Panel\\Desktop' 'ScreenSaverIsSecure'
  if ($inactivity -and [int]$inactivity -gt 0 -and [int]$inactivity -le 900) { Write-Check 'win.screen_lock' 'pass' "machine inactivity limit $inactivity s" }
  elseif ($timeout -and [int]$timeout -gt 0 -and [int]$timeout -le 900 -and ("$secure" -eq '1' -or "$policySecure" -eq '1')) { Write-Check 'win.screen_lock' 'pass' "password-protected screen saver after $timeout s" }
  elseif ($null -eq $inactivity -and $null -eq $timeout) { Write-Check 'win.screen_lock' 'unknown' 'no inactivity or screen saver setting found' }
  else { Write-Check 'win.screen_lock' 'fail' "inactivity=$inactivity screensaver=$timeout secure=$secure" }
}

# 'win.local_admins'
Invoke-Check 'win.local_admins' {
  # The daily user is the person signed in at the console, not the account PowerShell was elevated
  # with ("Run as administrator" with an admin's credentials keeps the console user). Over Remote
  # Desktop there is no console user: then the owner of the desktop (explorer.exe) of the session
  # this script runs in, else the one desktop owner of any session; only then this script's account.
  $me = [Security.Principal.WindowsIdentity]::GetCurrent()
  $daily = $null
  $dailySid = $null
  $console = (Get-CimInstance Win32_ComputerSystem).UserName
  if ($console) { $daily = $console; $dailySid = (New-Object Security.Principal.NTAccount($console)).Translate([Security.Principal.SecurityIdentifier]) }
  else {
    $session = (Get-Process -Id $PID).SessionId
    $owners = @()
    foreach ($proc in @(Get-CimInstance Win32_Process -Filter "Name='explorer.exe'")) {
      $o = Invoke-CimMethod -InputObject $proc -MethodName GetOwnerSid -ErrorAction SilentlyContinue
      if ($o -and $o.ReturnValue -eq 0 -and $o.Sid) { $owners += [pscustomobject]@{ Sid = [string]$o.Sid; Session = $proc.SessionId } }
    }
    $pick = @($owners | Where-Object { $_.Session -eq $session } | Select-Object -First 1)
    if ($pick.Count -eq 0 -and @($owners | ForEach-Object { $_.Sid } | Sort-Object -Unique).Count -eq 1) { $pick = @($owners | Select-Object -First 1) }
    if ($pick.Count -gt 0) {
      $dailySid = New-Object Security.Principal.SecurityIdentifier($pick[0].Sid)
      try { $daily = $dailySid.Translate([Security.Principal.NTAccount]).Value } catch { $daily = $dailySid.Value }
    }
  }
  if ($null -eq $dailySid) {
    if ($me.User.Value -in @('S-1-5-18', 'S-1-5-19', 'S-1-5-20')) {
      Write-Check 'win.local_admins' 'unknown' ("nobody is signed in to this computer (the script ran as " + $me.Name + ")")
      $Reasons['win.local_admins'] = 'no_signed_in_user'
      return
    }
    $daily = $me.Name
    $dailySid = $me.User
  }

  # The Administrators group: each member's SID and whether it is a user account.
  $members = @()
  try {
    foreach ($m in @(Get-LocalGroupMember -SID 'S-1-5-32-544')) { $members += [pscustomobject]@{ Sid = $m.SID.Value; Name = [string]$m.Name; User = ([string]$m.ObjectClass -eq 'User') } }
  } catch {
    # Get-LocalGroupMember fails on members it cannot resolve (e.g. Microsoft Entra role SIDs):
    # read the group through the WinNT provider instead.
    $members = @()
    $groupName = (New-Object Security.Principal.SecurityIdentifier('S-1-5-32-544')).Translate([Security.Principal.NTAccount]).Value.Split('\\')[-1]
    foreach ($m in @(([ADSI]"WinNT://$env:COMPUTERNAME/$groupName,group").Invoke('Members'))) {
      $sidBytes = $m.GetType().InvokeMember('objectSid', 'GetProperty', $null, $m, $null)
      $cls = $m.GetType().InvokeMember('Class', 'GetProperty', $null, $m, $null)
      $nm = $m.GetType().InvokeMember('Name', 'GetProperty', $null, $m, $null)
      $members += [pscustomobject]@{ Sid = (New-Object Security.Principal.SecurityIdentifier($sidBytes, 0)).Value; Name = [string]$nm; User = ([string]$cls -eq 'User') }
    }
  }
  $names = ($members | ForEach-Object { $_.Name }) -join ', '
  $direct = @($members | Where-Object { $_.Sid -eq $dailySid.Value }).Count -gt 0
  # Local accounts: a member counts unless it is a disabled local user.
  $enabled = @($members | Where-Object { $lu = $null; try { $lu = Get-LocalUser -SID $_.Sid -ErrorAction Stop } catch { $lu = $null }; (-not $lu) -or $lu.Enabled })
  $machineSid = ''
  $anyLocal = Get-LocalUser | Select-Object -First 1
  if ($anyLocal) { $machineSid = [string]$anyLocal.SID.AccountDomainSid }
  $dailyDomain = ''
  try { $dailyDomain = [string]$dailySid.AccountDomainSid } catch { $dailyDomain = '' }
  $dailyLocal = $machineSid -and $dailyDomain -eq $machineSid
  # Groups that hold every signed-in person: Everyone, Interactive, Authenticated Users, the daily
  # user's Domain Users (or a local account's None), and Local account for a local daily user.
  $broad = @('S-1-1-0', 'S-1-5-4', 'S-1-5-11')
  if ($dailyDomain) { $broad += ($dailyDomain + '-513') }
  if ($dailyLocal) { $broad += 'S-1-5-113' }
  $everyone = @($members | Where-Object { $_.Sid -in $broad })
  # Other groups could hold the daily user through nesting, and this computer cannot list a domain
  # group's or a Microsoft Entra role's members. A local account cannot be in a domain group, a
  # Microsoft Entra role or another built-in group, so only those are ruled out for it.
  $unresolved = @($members | Where-Object { -not $_.User -and $_.Sid -notin $broad -and -not ($dailyLocal -and ($_.Sid -like 'S-1-5-21-*' -or $_.Sid -like 'S-1-12-1-*' -or $_.Sid -like 'S-1-5-32-*')) })
  # When this script runs as the daily user, the groups of their sign-in answer, nested domain and
  # Microsoft Entra groups included (whoami lists Administrators even where UAC keeps it for deny only).
  $viaToken = $null
  if ($dailySid.Value -eq $me.User.Value) {
    $groups = (whoami /groups /fo csv /nh) -join ' '
    if ($LASTEXITCODE -eq 0 -and $groups -match 'S-1-5-') { $viaToken = $groups -match '"S-1-5-32-544"' }
  }
  if ($direct) { Write-Check 'win.local_admins' 'fail' "signed-in user $daily is in Administrators (admins: $names)" }
  elseif ($viaToken -eq $true) { Write-Check 'win.local_admins' 'fail' "signed-in user $daily is an administrator through a group (admins: $names)" }
  elseif ($everyone.Count -gt 0) { Write-Check 'win.local_admins' 'fail' ("Administrators holds " + (($everyone | ForEach-Object { $_.Name }) -join ', ') + ", so every signed-in user, $daily included, is an administrator") }
  elseif ($enabled.Count -gt 2) { Write-Check 'win.local_admins' 'fail' "$($enabled.Count) administrators: $names" }
  elseif ($viaToken -eq $false) { Write-Check 'win.local_admins' 'pass' "signed-in user $daily is not an administrator, by the groups of their sign-in (admins: $names)" }
  elseif ($unresolved.Count -gt 0) {
    Write-Check 'win.local_admins' 'unknown' ("signed-in user $daily may be an administrator through " + (($unresolved | ForEach-Object { $_.Name }) -join ', ') + ": their members cannot be listed from " + $me.Name + "; run the script signed in as $daily without another account's password")
    $Reasons['win.local_admins'] = 'admin_groups_unresolved'
  }
  else { Write-Check 'win.local_admins' 'pass' "signed-in user $daily is not an administrator (admins: $names)" }
}

# 'win.guest_disabled'
Invoke-Check 'win.guest_disabled' {
  $guest = Get-LocalUser | Where-Object { $_.SID.Value -like '*-501' } | Select-Object -First 1
  if ($null -eq $guest) { Write-Check 'win.guest_disabled' 'pass' 'no built-in guest account' }
  elseif ($guest.Enabled) { Write-Check 'win.guest_disabled' 'fail' "$($guest.Name) is enabled" }
  else { Write-Check 'win.guest_disabled' 'pass' "$($guest.Name) is disabled" }
}

# 'win.named_accounts'
Invoke-Check 'win.named_accounts' {
  $users = @(Get-LocalUser | Where-Object { $_.Enabled })
  $generic = @($users | Where-Object { $_.Name -match '^(office|shared|share|user|users|staff|reception|front|frontdesk|guest|temp|test)[0-9]*$' } | ForEach-Object { $_.Name })
  if ($generic.Count -gt 0) { Write-Check 'win.named_accounts' 'fail' ('generic accounts: ' + ($generic -join ', ')) }
  else { Write-Check 'win.named_accounts' 'pass' ('enabled accounts: ' + (($users | ForEach-Object { $_.Name }) -join ', ')) }
}

# 'win.password_min_length'
Invoke-Check 'win.password_min_length' {
  $min = ([ADSI]"WinNT://$env:COMPUTERNAME").MinPasswordLength.Value
  if ($null -eq $min) {
    $line = (net accounts) | Select-String -Pattern 'Minimum password length' | Select-Object -First 1
    if ($line) { $min = [int](($line.ToString() -split ':')[-1].Trim()) }
  }
  if ($null -eq $min) { Write-Check 'win.password_min_length' 'unknown' 'minimum password length not readable' }
  elseif ([int]$min -ge 8) { Write-Check 'win.password_min_length' 'pass' "minimum length $min" }
  else { Write-Check 'win.password_min_length' 'fail' "minimum length $min" }
}

# 'win.autologon_disabled'
Invoke-Check 'win.autologon_disabled' {
  $wl = 'HKLM:\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Winlogon'
  $auto = Get-RegValue $wl 'AutoAdminLogon'
  $pw = Get-RegValue $wl 'DefaultPassword'
  if ("$auto" -eq '1') { Write-Check 'win.autologon_disabled' 'fail' 'AutoAdminLogon=1' }
  elseif ($pw) { Write-Check 'win.autologon_disabled' 'fail' 'a plaintext DefaultPassword is stored in Winlogon' }
  else { Write-Check 'win.autologon_disabled' 'pass' "AutoAdminLogon=$auto" }
}

# 'win.rdp_disabled'
Invoke-Check 'win.rdp_disabled' {
  $deny = Get-RegValue 'HKLM:\\SYSTEM\\CurrentControlSet\\Control\\Terminal Server' 'fDenyTSConnections'
  if ($null -eq $deny) { Write-Check 'win.rdp_disabled' 'unknown' 'fDenyTSConnections not readable' }
  elseif ([int]$deny -eq 1) { Write-Check 'win.rdp_disabled' 'pass' 'Remote Desktop connections refused' }
  else { Write-Check 'win.rdp_disabled' 'fail' 'Remote Desktop connections allowed' }
}

Write-Host ''
$payload = [ordered]@{ scriptVersion = $ScriptVersion; os = 'windows'; hostname = $HostName; osVersion = $OsVersion; results = $Results; details = $Details; reasons = $Reasons }
$body = $payload | ConvertTo-Json -Depth 4 -Compress
try {
  [Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
  $null = Invoke-RestMethod -Method Post -Uri $RampartUrl -Headers @{ Authorization = "Bearer $RampartToken" } -ContentType 'application/json' -Body ([Text.Encoding]::UTF8.GetBytes($body)) -UseBasicParsing
  $fails = @($Results.Values | Where-Object { $_ -eq 'fail' }).Count
  Write-Host "Results sent to Rampart ($fails failing checks). Open the Device check tab to see them."
  exit 0
} catch {
  Write-Host ("Rampart did not accept the results: " + $_.Exception.Message)
  if ($_.ErrorDetails) { Write-Host $_.ErrorDetails.Message }
  exit 1
}
`;
  assertCovers('windows', text);
  return text;
}
