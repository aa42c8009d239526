export { createTenantsService, TENANT_SETTING_DEFAULTS, type TenantsService } from './tenants-service.ts';
export { registerTenantRoutes } from './tenants-routes.ts';
