export { createAuditService, type AuditRecord, type AuditService } from './audit-service.ts';
export * from './audit-schemas.ts';
