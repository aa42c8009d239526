export {
  createTemplatesService,
  templatesForLease,
  templateErrorDetails,
  type TemplatesService,
} from './templates-service.ts';
export { registerTemplateRoutes } from './templates-routes.ts';
export * from './templates-schemas.ts';
export { createOobService, type OobService } from './oob-service.ts';
export { registerOobRoutes } from './oob-routes.ts';
