export { createOverviewService, type OverviewService } from './overview-service.ts';
export { registerOverviewRoutes } from './overview-routes.ts';
