export { createCmmcService, bearerToken, hashDeviceToken, parseVerifyBody, type CmmcService } from './cmmc-service.ts';
export { registerCmmcRoutes, SIGNING_KEY_ROUTE, VERIFY_ROUTE } from './cmmc-routes.ts';
export {
  lazySigner,
  signerFromSeed,
  verifySignedScript,
  splitSignedScript,
  SIGNATURE_PREFIX,
  type ScriptSigner,
  type SigningKeyInfo,
} from './cmmc-signing.ts';
export {
  REQUIREMENTS,
  OBJECTIVES,
  ATTESTATION_ITEMS,
  FAR_CLAUSE,
  findRequirement,
  checksForRequirement,
  type Requirement,
  type Objective,
  type AttestationItem,
  type MailPlatform,
} from './cmmc-catalogue.ts';
export {
  DEVICE_CHECKS,
  DEVICE_OSES,
  CHECK_RESULTS,
  checkIdsFor,
  isDeviceCheckId,
  reasonCodesOf,
  reasonInfo,
  UNKNOWN_REASONS,
  type UnknownReason,
  type DeviceCheck,
  type DeviceCheckId,
  type DeviceOs,
  type CheckResult,
} from './cmmc-checks.ts';
export {
  baseUrlWarning,
  generateMacScript,
  generateWindowsScript,
  SCRIPT_FILE_NAMES,
  SCRIPT_VERSION,
} from './cmmc-scripts.ts';
export { cmmcRepo, type ProfileRow, type RunRow } from './cmmc-repo.ts';
export * from './cmmc-schemas.ts';
export {
  createCmmcProgram,
  AFFIRMATION_TEXT_VERSION,
  HANDOFF_TTL_MS,
  RENEWAL_DUE_DAY,
  EXPIRY_DAY,
  type CmmcProgram,
} from './cmmc-program.ts';
export { registerCmmcProgramRoutes, RENEWALS_HOOK_PATH } from './cmmc-program-routes.ts';
export { registerCmmcFlows } from './cmmc-flows.ts';
export {
  scoreAll,
  scoreRequirement,
  requiredChecks,
  POLICY_KINDS,
  DOMAIN_POLICY,
  type Score,
  type RequirementScore,
  type PolicyKind,
} from './cmmc-scoring.ts';
