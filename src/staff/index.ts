export { createStaffService, emailDomainApproved, type PlatformRole, type StaffService } from './staff-service.ts';
export { registerStaffRoutes } from './staff-routes.ts';
