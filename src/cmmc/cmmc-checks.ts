// Device checks: what the read-only Windows (PowerShell) and macOS (bash) scripts look at, per
// docs/cmmc.md. Each result is tri-state: pass, fail or unknown (could not be read,
// e.g. needs admin rights); unknown blocks MET until re-run or attested. This table is also the
// knowledge base the device-check explainer uses (imported from src/cmmc/index.ts).
// Over 500 lines on purpose: a data table: one entry per device check with its commands and explanation.

export type DeviceOs = 'windows' | 'macos';
export const DEVICE_OSES: readonly DeviceOs[] = ['windows', 'macos'];
export type CheckResult = 'pass' | 'fail' | 'unknown';
export const CHECK_RESULTS: readonly CheckResult[] = ['pass', 'fail', 'unknown'];

export interface DeviceCheck {
  id: string;
  os: DeviceOs;
  title: string;
  /** CMMC requirement ids this check evidences. */
  requirementIds: readonly string[];
  /** True when the check only supports the requirement (e.g. disk encryption for media disposal). */
  supporting: boolean;
  /** The commands the script runs (read only). */
  commands: readonly string[];
  /** When the check passes. */
  passWhen: string;
  /** What a result means, in plain words. */
  meaning: string;
  /** How to fix a fail, step by step, for this OS. */
  fix: string;
  /** How to re-check after fixing. */
  recheck: string;
  /** Why a result can come back unknown. */
  unknownWhen: string;
  /**
   * The one case where the script cannot read this setting for a known, stated reason and an
   * attestation item (answered yes) stands in as the evidence. Only an `unknown` result that
   * carries exactly this reason code is settled by it; a fail, or an unknown without the
   * reason, never is.
   */
  attestable?: { reason: UnknownReason; itemId: string; explanation: string };
  /**
   * Further reason codes the script may send with an `unknown` result of this check, with what
   * they mean. They explain the unknown only: no attestation settles them (decision 30), so the
   * requirement stays NOT MET until a run answers pass.
   */
  unknownReasons?: Partial<Record<UnknownReason, string>>;
}

/** Reason codes a script may attach to an `unknown` result (verify body `reasons`). */
export type UnknownReason = 'third_party_av' | 'admin_groups_unresolved' | 'no_signed_in_user';
export const UNKNOWN_REASONS: readonly UnknownReason[] = [
  'third_party_av',
  'admin_groups_unresolved',
  'no_signed_in_user',
];

const RERUN_WIN =
  'Run the Windows device-check script again (right-click PowerShell, "Run as administrator" gives the most complete results); the new run replaces this computer\'s previous result.';
const RERUN_MAC =
  "Run the macOS device-check script again in Terminal (`bash rampart-cmmc-check-macos.sh`; `sudo bash rampart-cmmc-check-macos.sh` gives the most complete results); the new run replaces this Mac's previous result.";

const checks = {
  'win.av_enabled': {
    os: 'windows',
    title: 'Anti-malware is on',
    requirementIds: ['SI.L1-b.1.xiii'],
    supporting: false,
    commands: ['Get-CimInstance -Namespace root/SecurityCenter2 -ClassName AntiVirusProduct', 'Get-MpComputerStatus'],
    passWhen:
      'Security Center reports an enabled anti-virus product, or Microsoft Defender reports AMServiceEnabled and AntivirusEnabled.',
    meaning:
      'Windows has an active anti-malware product (Microsoft Defender or a third-party product registered with Windows Security Center).',
    fix: 'Open Windows Security → Virus & threat protection and turn protection on, or make sure your third-party anti-virus is installed, licensed and not snoozed or expired.',
    recheck: RERUN_WIN,
    unknownWhen: 'Security Center is unavailable (Windows Server) and Defender cannot be queried.',
  },
  'win.av_signatures_current': {
    os: 'windows',
    title: 'Anti-malware definitions are current',
    requirementIds: ['SI.L1-b.1.xiv'],
    supporting: false,
    commands: [
      'Get-MpComputerStatus | Select AntivirusSignatureAge, DefenderSignaturesOutOfDate',
      'SecurityCenter2 productState (signature bits)',
    ],
    passWhen:
      'Definitions are at most 7 days old and not flagged out of date (or Security Center reports the third-party product up to date).',
    meaning: 'The anti-malware definitions are updated when new releases are available.',
    fix: 'Open Windows Security → Virus & threat protection → Protection updates → Check for updates; make sure Windows Update is not paused.',
    recheck: RERUN_WIN,
    unknownWhen: 'Neither Defender nor Security Center reports the definition state.',
  },
  'win.realtime_protection': {
    os: 'windows',
    title: 'Real-time scanning is on',
    requirementIds: ['SI.L1-b.1.xv'],
    supporting: false,
    commands: [
      'Get-MpComputerStatus | Select RealTimeProtectionEnabled, OnAccessProtectionEnabled, IoavProtectionEnabled',
    ],
    passWhen:
      'Real-time, on-access and download (IOAV) protection are all enabled, or Security Center reports a third-party product that is on.',
    meaning: 'Files are scanned as they are downloaded, opened or executed.',
    fix: 'Windows Security → Virus & threat protection → Manage settings → turn on Real-time protection (a third-party product: turn on its real-time/on-access shield).',
    recheck: RERUN_WIN,
    unknownWhen: 'Defender cannot be queried and no third-party product is registered.',
  },
  'win.scan_recent': {
    os: 'windows',
    title: 'A malware scan ran recently',
    requirementIds: ['SI.L1-b.1.xv'],
    supporting: false,
    commands: ['Get-MpComputerStatus | Select QuickScanAge, FullScanAge, QuickScanOverdue'],
    passWhen: 'A quick or full scan ran within the last 7 days and no quick scan is overdue.',
    meaning: 'Periodic scans are performed at the defined frequency.',
    fix: 'Run a quick scan (Windows Security → Virus & threat protection → Quick scan) and keep the scheduled scan enabled.',
    recheck: RERUN_WIN,
    unknownWhen:
      'Defender cannot be queried, or a third-party anti-malware product is on: Windows does not expose its scan history, so the script reports unknown with the reason third_party_av and the attestation "scan frequency is written down" (answered yes) stands in for this check on that computer.',
    attestable: {
      reason: 'third_party_av',
      itemId: 'si15.frequency',
      explanation:
        "A third-party anti-malware product is on and Windows does not expose its scan history; answer yes to the scan-frequency item (si15.frequency) once the product's scheduled scan is set to that frequency.",
    },
  },
  'win.firewall_enabled': {
    os: 'windows',
    title: 'Windows Firewall is on for all profiles',
    requirementIds: ['SC.L1-b.1.x'],
    supporting: false,
    commands: ['Get-NetFirewallProfile -PolicyStore ActiveStore', 'netsh advfirewall show allprofiles state'],
    passWhen: 'The Domain, Private and Public profiles are all enabled.',
    meaning: 'The computer filters network traffic at its own boundary.',
    fix: 'Windows Security → Firewall & network protection → turn the firewall on for Domain, Private and Public networks.',
    recheck: RERUN_WIN,
    unknownWhen: 'Neither the cmdlet nor netsh returned the profile states.',
  },
  'win.patch_recent': {
    os: 'windows',
    title: 'Updates were installed in the last 30 days',
    requirementIds: ['SI.L1-b.1.xii'],
    supporting: false,
    commands: [
      '(New-Object -ComObject Microsoft.Update.Session).CreateUpdateSearcher().QueryHistory(0, n)',
      'Get-HotFix',
    ],
    passWhen: 'The last successful update installation is at most 30 days old.',
    meaning: 'Flaws are corrected within the time frame.',
    fix: 'Settings → Windows Update → Check for updates, install everything offered and restart.',
    recheck: RERUN_WIN,
    unknownWhen: 'The update history cannot be read.',
  },
  'win.auto_update': {
    os: 'windows',
    title: 'Automatic updates are on',
    requirementIds: ['SI.L1-b.1.xii'],
    supporting: false,
    commands: [
      'HKLM:\\SOFTWARE\\Policies\\Microsoft\\Windows\\WindowsUpdate\\AU (NoAutoUpdate, AUOptions)',
      'Get-Service wuauserv',
    ],
    passWhen:
      'No policy disables automatic updates (NoAutoUpdate is not 1, AUOptions is not 1) and the Windows Update service is not disabled.',
    meaning: 'Flaws are identified and fixed without waiting for someone to remember.',
    fix: 'Remove any policy that turns automatic updates off (ask your IT provider) and set the Windows Update service to Manual or Automatic.',
    recheck: RERUN_WIN,
    unknownWhen: 'The registry or service state cannot be read.',
  },
  'win.os_supported': {
    os: 'windows',
    title: 'Windows version still gets security updates',
    requirementIds: ['SI.L1-b.1.xii'],
    supporting: false,
    commands: ['(Get-CimInstance Win32_OperatingSystem).Version, Caption'],
    passWhen: 'Windows 10 build 19045 or later, Windows 11, or Windows Server 2016 or later.',
    meaning: 'The operating system is a version the vendor still patches.',
    fix: 'Upgrade to a supported Windows release (Windows 11, or Windows 10 22H2 with extended security updates).',
    recheck: RERUN_WIN,
    unknownWhen: 'The OS version cannot be read.',
  },
  'win.disk_encryption': {
    os: 'windows',
    title: 'BitLocker protects the system drive',
    requirementIds: ['MP.L1-b.1.vii'],
    supporting: true,
    commands: ['Get-BitLockerVolume -MountPoint $env:SystemDrive', 'manage-bde -status'],
    passWhen: 'The system drive is fully encrypted with protection on.',
    meaning: 'A lost or disposed drive does not expose FCI (supports media disposal).',
    fix: 'Control Panel → BitLocker Drive Encryption → Turn on BitLocker for the system drive (or Settings → Device encryption on Home editions); store the recovery key safely.',
    recheck: RERUN_WIN,
    unknownWhen: 'The script was not run as administrator (BitLocker status needs it).',
  },
  'win.screen_lock': {
    os: 'windows',
    title: 'Screen locks with a password after inactivity',
    requirementIds: ['IA.L1-b.1.vi'],
    supporting: true,
    commands: [
      'HKLM:\\...\\Policies\\System InactivityTimeoutSecs',
      'HKCU:\\Control Panel\\Desktop ScreenSaveTimeOut, ScreenSaverIsSecure',
    ],
    passWhen:
      'A machine inactivity limit of at most 15 minutes, or a password-protected screen saver of at most 15 minutes.',
    meaning: 'An unattended computer asks for the password again.',
    fix: 'Settings → Personalization → Lock screen → Screen saver: choose a timeout of 15 minutes or less and tick "On resume, display logon screen".',
    recheck: RERUN_WIN,
    unknownWhen: 'The settings cannot be read.',
  },
  'win.local_admins': {
    os: 'windows',
    title: 'Daily user is not an administrator',
    requirementIds: ['AC.L1-b.1.ii'],
    supporting: false,
    commands: [
      '(Get-CimInstance Win32_ComputerSystem).UserName; else the owner of explorer.exe in this session (Win32_Process GetOwnerSid)',
      'whoami /groups /fo csv /nh (when the script runs as that user: the groups of their sign-in, nested ones included)',
      'Get-LocalGroupMember -SID S-1-5-32-544 (or the WinNT provider when it fails)',
    ],
    passWhen:
      'The person signed in (at the console, else the owner of the desktop session the script runs in; not the account PowerShell was elevated with, so "Run as administrator" is fine) is not an administrator, directly or through a group, and the Administrators group has at most 2 enabled members. When the script runs as that person, the groups of their sign-in decide (nested domain and Microsoft Entra groups included); when it runs as another account, a member that is a group which could contain that person leaves the result unknown.',
    meaning: 'People do day-to-day work with a standard account, so their access is limited to what their role needs.',
    fix: 'Create a separate administrator account, then in Settings → Accounts → Family & other users change the daily account type to Standard User (and take the daily account out of any group, such as a domain or Microsoft Entra group, that is in the Administrators group).',
    recheck: RERUN_WIN,
    unknownWhen:
      'The group members cannot be listed; or the script ran as another account (e.g. "Run as administrator" with an administrator\'s password) while the Administrators group holds groups (a domain group, a Microsoft Entra role) whose members cannot be read from this computer (reason admin_groups_unresolved); or nobody is signed in (reason no_signed_in_user).',
    unknownReasons: {
      admin_groups_unresolved:
        'The Administrators group holds groups (such as a domain group or a Microsoft Entra role) whose members this computer cannot list, and the script ran as another account than the signed-in person, so it cannot tell whether that person is an administrator through one of them. Sign in as the person who uses this computer every day and run the script from their own session without entering another account\'s password (a standard user can run it without "Run as administrator"): the groups of their own sign-in then answer. This cannot be settled by an attestation.',
      no_signed_in_user:
        'Nobody was signed in to this computer when the script ran (for example it ran from a management tool as SYSTEM), so there was no daily user to check. Run it again while the person who uses this computer is signed in. This cannot be settled by an attestation.',
    },
  },
  'win.guest_disabled': {
    os: 'windows',
    title: 'Guest account is disabled',
    requirementIds: ['AC.L1-b.1.i'],
    supporting: false,
    commands: ['Get-LocalUser | Where-Object { $_.SID -like "*-501" }'],
    passWhen: 'The built-in Guest account (RID 501) is disabled.',
    meaning: 'Nobody can sign in without their own account.',
    fix: 'Run `net user guest /active:no` in an administrator command prompt.',
    recheck: RERUN_WIN,
    unknownWhen: 'Local users cannot be listed.',
  },
  'win.named_accounts': {
    os: 'windows',
    title: 'No shared or generic local accounts',
    requirementIds: ['AC.L1-b.1.i', 'IA.L1-b.1.v'],
    supporting: false,
    commands: ['Get-LocalUser | Where-Object Enabled'],
    passWhen:
      'No enabled local account is named like a shared account (office, shared, user, staff, reception, front, guest, temp, test).',
    meaning: 'Every person signs in with their own identified account.',
    fix: 'Give each person their own account and disable the shared one (`net user <name> /active:no`).',
    recheck: RERUN_WIN,
    unknownWhen: 'Local users cannot be listed.',
  },
  'win.password_min_length': {
    os: 'windows',
    title: 'Passwords need at least 8 characters',
    requirementIds: ['IA.L1-b.1.vi'],
    supporting: false,
    commands: ['net accounts', '([ADSI]"WinNT://$env:COMPUTERNAME").MinPasswordLength'],
    passWhen:
      "The minimum password length of this computer's local account policy (what `net accounts` shows) is 8 or more. Only that policy is read: a Microsoft Entra or domain password policy is not, and local accounts follow the local policy even on a joined computer.",
    meaning: 'Accounts are protected by passwords that are not trivially short.',
    fix: 'Run `net accounts /minpwlen:12` as administrator (on computers joined to Microsoft Entra or a domain too: their local accounts use it), or push the same setting through your domain or Intune policy.',
    recheck: RERUN_WIN,
    unknownWhen: 'The policy cannot be read.',
  },
  'win.autologon_disabled': {
    os: 'windows',
    title: 'Automatic sign-in is off',
    requirementIds: ['AC.L1-b.1.i', 'IA.L1-b.1.vi'],
    supporting: false,
    commands: ['HKLM:\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Winlogon AutoAdminLogon, DefaultPassword'],
    passWhen: 'AutoAdminLogon is not 1 and no plaintext DefaultPassword is stored.',
    meaning: 'The computer asks who you are before giving access.',
    fix: 'Run `netplwiz`, tick "Users must enter a user name and password", and remove the DefaultPassword value from the Winlogon key.',
    recheck: RERUN_WIN,
    unknownWhen: 'The registry key cannot be read.',
  },
  'win.rdp_disabled': {
    os: 'windows',
    title: 'Remote Desktop is off',
    requirementIds: ['AC.L1-b.1.iii'],
    supporting: false,
    commands: ['HKLM:\\SYSTEM\\CurrentControlSet\\Control\\Terminal Server fDenyTSConnections'],
    passWhen: 'fDenyTSConnections is 1 (incoming Remote Desktop connections refused).',
    meaning: 'Connections from outside systems are limited.',
    fix: 'Settings → System → Remote Desktop → Off (if you need remote access, use an approved VPN or remote-support tool and attest it).',
    recheck: RERUN_WIN,
    unknownWhen: 'The registry key cannot be read.',
  },
  'mac.filevault': {
    os: 'macos',
    title: 'FileVault disk encryption is on',
    requirementIds: ['MP.L1-b.1.vii'],
    supporting: true,
    commands: ['fdesetup status'],
    passWhen: '`fdesetup status` reports "FileVault is On."',
    meaning: 'A lost or disposed Mac does not expose FCI (supports media disposal).',
    fix: 'System Settings → Privacy & Security → FileVault → Turn On; keep the recovery key safe.',
    recheck: RERUN_MAC,
    unknownWhen: '`fdesetup` is missing or gave no answer.',
  },
  'mac.gatekeeper': {
    os: 'macos',
    title: 'Gatekeeper is on',
    requirementIds: ['SI.L1-b.1.xiii', 'SI.L1-b.1.xv'],
    supporting: false,
    commands: ['spctl --status'],
    passWhen: '`spctl --status` reports "assessments enabled".',
    meaning: 'Downloaded apps are checked before they run.',
    fix: 'Run `sudo spctl --master-enable`, then System Settings → Privacy & Security → allow apps from "App Store and identified developers".',
    recheck: RERUN_MAC,
    unknownWhen: '`spctl` is missing or gave no answer.',
  },
  'mac.sip': {
    os: 'macos',
    title: 'System Integrity Protection is on',
    requirementIds: ['SI.L1-b.1.xiii'],
    supporting: false,
    commands: ['csrutil status'],
    passWhen: '`csrutil status` reports "enabled".',
    meaning: 'System files are protected from tampering by malware.',
    fix: 'Restart into Recovery (hold the power button on Apple silicon, Cmd-R on Intel), open Terminal and run `csrutil enable`, then restart.',
    recheck: RERUN_MAC,
    unknownWhen: '`csrutil` is missing or gave no answer.',
  },
  'mac.xprotect': {
    os: 'macos',
    title: 'XProtect malware definitions are present',
    requirementIds: ['SI.L1-b.1.xiii', 'SI.L1-b.1.xiv', 'SI.L1-b.1.xv'],
    supporting: false,
    commands: [
      'defaults read /Library/Apple/System/Library/CoreServices/XProtect.bundle/Contents/Resources/XProtect.meta Version',
    ],
    passWhen: 'The XProtect bundle is present and reports a version.',
    meaning: 'The built-in anti-malware of macOS is installed and has definitions.',
    fix: 'Turn on System Settings → General → Software Update → Automatic updates → "Install Security Responses and system files", then check for updates.',
    recheck: RERUN_MAC,
    unknownWhen: 'The bundle version cannot be read.',
  },
  'mac.firewall': {
    os: 'macos',
    title: 'macOS firewall is on',
    requirementIds: ['SC.L1-b.1.x'],
    supporting: false,
    commands: [
      '/usr/libexec/ApplicationFirewall/socketfilterfw --getglobalstate',
      'defaults read /Library/Preferences/com.apple.alf globalstate',
    ],
    passWhen: 'The application firewall is enabled (globalstate 1 or 2).',
    meaning: 'The Mac filters incoming connections at its own boundary.',
    fix: 'System Settings → Network → Firewall → turn it on.',
    recheck: RERUN_MAC,
    unknownWhen: 'Neither command returned the firewall state.',
  },
  'mac.patch_recent': {
    os: 'macos',
    title: 'Updates were installed in the last 30 days',
    requirementIds: ['SI.L1-b.1.xii'],
    supporting: false,
    commands: ['defaults read /Library/Preferences/com.apple.SoftwareUpdate LastFullSuccessfulDate'],
    passWhen: 'The last successful full update check/installation is at most 30 days old.',
    meaning: 'Flaws are corrected within the time frame.',
    fix: 'System Settings → General → Software Update: install all updates and restart.',
    recheck: RERUN_MAC,
    unknownWhen: 'The date cannot be read.',
  },
  'mac.auto_update': {
    os: 'macos',
    title: 'Automatic updates are on',
    requirementIds: ['SI.L1-b.1.xii', 'SI.L1-b.1.xiv'],
    supporting: false,
    commands: [
      'defaults read /Library/Preferences/com.apple.SoftwareUpdate AutomaticCheckEnabled | AutomaticDownload | CriticalUpdateInstall | ConfigDataInstall',
    ],
    passWhen:
      'Automatic checking is not turned off and security responses (CriticalUpdateInstall, ConfigDataInstall) are not turned off.',
    meaning: 'Security fixes and XProtect data updates install without waiting for someone.',
    fix: 'System Settings → General → Software Update → Automatic updates: turn on every option, especially "Install Security Responses and system files".',
    recheck: RERUN_MAC,
    unknownWhen: 'The preferences cannot be read.',
  },
  'mac.os_supported': {
    os: 'macos',
    title: 'macOS version still gets security updates',
    requirementIds: ['SI.L1-b.1.xii'],
    supporting: false,
    commands: ['sw_vers -productVersion'],
    passWhen: 'macOS 13 (Ventura) or later.',
    meaning: 'The operating system is a version Apple still patches.',
    fix: 'Upgrade macOS in System Settings → General → Software Update (replace the Mac if it cannot run a supported version).',
    recheck: RERUN_MAC,
    unknownWhen: '`sw_vers` gave no version.',
  },
  'mac.screen_lock': {
    os: 'macos',
    title: 'Screen locks with a password after inactivity',
    requirementIds: ['IA.L1-b.1.vi'],
    supporting: true,
    commands: ['sysadminctl -screenLock status', 'defaults -currentHost read com.apple.screensaver idleTime'],
    passWhen:
      'A password is required immediately (or within 5 minutes) after the screen saver / sleep starts, and the screen saver starts within 15 minutes.',
    meaning: 'An unattended Mac asks for the password again.',
    fix: 'System Settings → Lock Screen: "Start Screen Saver when inactive" 15 minutes or less, and "Require password after screen saver begins" immediately.',
    recheck: RERUN_MAC,
    unknownWhen: 'The settings cannot be read (sysadminctl needs the signed-in user).',
  },
  'mac.password_policy': {
    os: 'macos',
    title: 'Password policy requires at least 8 characters',
    requirementIds: ['IA.L1-b.1.vi'],
    supporting: false,
    commands: ['pwpolicy -getaccountpolicies'],
    passWhen: 'The account policies require a minimum length of 8 or more.',
    meaning: 'Accounts are protected by passwords that are not trivially short.',
    fix: 'Set a password policy with a configuration profile from your device management, or run `sudo pwpolicy -setglobalpolicy "minChars=12"`.',
    recheck: RERUN_MAC,
    unknownWhen: 'No policy could be read (no policy set or not run with sudo).',
  },
  'mac.guest_disabled': {
    os: 'macos',
    title: 'Guest user is off',
    requirementIds: ['AC.L1-b.1.i'],
    supporting: false,
    commands: ['defaults read /Library/Preferences/com.apple.loginwindow GuestEnabled'],
    passWhen: 'GuestEnabled is 0 or not set.',
    meaning: 'Nobody can sign in without their own account.',
    fix: 'System Settings → Users & Groups → Guest User → turn off "Allow guests to log in to this computer".',
    recheck: RERUN_MAC,
    unknownWhen: 'The preference cannot be read.',
  },
  'mac.autologin_disabled': {
    os: 'macos',
    title: 'Automatic login is off',
    requirementIds: ['AC.L1-b.1.i', 'IA.L1-b.1.vi'],
    supporting: false,
    commands: ['defaults read /Library/Preferences/com.apple.loginwindow autoLoginUser'],
    passWhen: 'No autoLoginUser is set.',
    meaning: 'The Mac asks who you are before giving access.',
    fix: 'System Settings → Users & Groups → "Automatically log in as" → Off.',
    recheck: RERUN_MAC,
    unknownWhen: 'The preference cannot be read.',
  },
  'mac.admins': {
    os: 'macos',
    title: 'Daily user is not an administrator',
    requirementIds: ['AC.L1-b.1.ii'],
    supporting: false,
    commands: ['dscl . -read /Groups/admin GroupMembership', 'id -Gn'],
    passWhen:
      'The user running the script is not in the admin group, and the group has at most 2 members besides root.',
    meaning: 'People do day-to-day work with a standard account, so their access is limited to what their role needs.',
    fix: 'Create a separate administrator account, then in System Settings → Users & Groups turn off "Allow this user to administer this computer" for the daily account.',
    recheck: RERUN_MAC,
    unknownWhen: 'The admin group cannot be read.',
  },
  'mac.named_accounts': {
    os: 'macos',
    title: 'No shared or generic local accounts',
    requirementIds: ['AC.L1-b.1.i', 'IA.L1-b.1.v'],
    supporting: false,
    commands: ['dscl . -list /Users UniqueID'],
    passWhen:
      'No local account with UID 500 or more is named like a shared account (office, shared, user, staff, reception, front, temp, test).',
    meaning: 'Every person signs in with their own identified account.',
    fix: 'Give each person their own account in System Settings → Users & Groups and delete the shared one.',
    recheck: RERUN_MAC,
    unknownWhen: 'Local users cannot be listed.',
  },
  'mac.remote_login': {
    os: 'macos',
    title: 'Remote Login (SSH) is off',
    requirementIds: ['AC.L1-b.1.iii'],
    supporting: false,
    commands: ['systemsetup -getremotelogin'],
    passWhen: '`systemsetup -getremotelogin` reports "Remote Login: Off".',
    meaning: 'Connections from outside systems are limited.',
    fix: 'System Settings → General → Sharing → turn off Remote Login (and Remote Management unless your IT provider needs it and it is attested).',
    recheck: RERUN_MAC,
    unknownWhen: 'The script was not run with sudo (systemsetup needs administrator access).',
  },
} as const satisfies Record<string, Omit<DeviceCheck, 'id'>>;

export type DeviceCheckId = keyof typeof checks;

export const DEVICE_CHECKS: Readonly<Record<DeviceCheckId, DeviceCheck>> = Object.fromEntries(
  Object.entries(checks).map(([id, c]) => [id, { id, ...c }]),
) as unknown as Record<DeviceCheckId, DeviceCheck>;

/** The check ids a script for this OS reports, in a stable order. */
export function checkIdsFor(os: DeviceOs): DeviceCheckId[] {
  return (Object.keys(DEVICE_CHECKS) as DeviceCheckId[]).filter((id) => DEVICE_CHECKS[id].os === os);
}

/** The reason codes a check accepts with an unknown result (the attestable one first). */
export function reasonCodesOf(id: DeviceCheckId): UnknownReason[] {
  const c = DEVICE_CHECKS[id];
  return [...(c.attestable ? [c.attestable.reason] : []), ...(Object.keys(c.unknownReasons ?? {}) as UnknownReason[])];
}

/** What a reason code means for this check, and the attestation item that settles it (if any). */
export function reasonInfo(
  id: string,
  code: string,
): { code: UnknownReason; explanation: string; attestItem: string | null } | null {
  if (!isDeviceCheckId(id)) return null;
  const c = DEVICE_CHECKS[id];
  if (c.attestable && c.attestable.reason === code)
    return { code: c.attestable.reason, explanation: c.attestable.explanation, attestItem: c.attestable.itemId };
  const text = c.unknownReasons?.[code as UnknownReason];
  return text ? { code: code as UnknownReason, explanation: text, attestItem: null } : null;
}

export function isDeviceCheckId(id: string): id is DeviceCheckId {
  return Object.hasOwn(DEVICE_CHECKS, id);
}
