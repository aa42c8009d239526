export { createScansService, queueScan, cancelScan, type ScansService } from './scans-service.ts';
export { createSchedulesService, type SchedulesService } from './schedules-service.ts';
export { registerScanRoutes, cronAuthorized, SCHEDULES_TICK_PATH } from './scans-routes.ts';
export {
  admitScan,
  assertAdmitted,
  admissionError,
  assertAssetScannable,
  utcDay,
  refusalMessage,
  KIND_FITS_JSON,
  DEFAULT_DAILY_SCAN_QUOTA,
  DEFAULT_PER_ASSET_CONCURRENT_SCANS,
  type AdmissionRequest,
  type AdmissionResult,
  type AdmissionRefusal,
} from './scans-admission.ts';
export { planScan, slicePortRange, ChunkPlanError, type ScanPlan } from './scans-chunks.ts';
export { nextRunAfter, formatInZone, canonicalTimeZone } from './scans-cron.ts';
export * from './scans-schemas.ts';
