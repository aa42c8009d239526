export { createStaffService, emailDomainApproved, type PlatformRole, type StaffService } from './staff-service.ts';
export { registerStaffRoutes } from './staff-routes.ts';
export { createMeshRecordsService, type MeshRecordsService } from './mesh-records-service.ts';
export { registerMeshRecordsRoutes } from './mesh-records-routes.ts';
