export { createAssetsService, type AssetsService } from './assets-service.ts';
export { registerAssetRoutes } from './assets-routes.ts';
export { createDnsVerifier, recordName, recordValue, type DnsVerifier } from './dns-verifier.ts';
export { normaliseTarget, isUnder } from './asset-targets.ts';
