export { createTemplatesService, templatesForLease, templateErrorDetails, type TemplatesService } from './templates-service.ts';
export { registerTemplateRoutes } from './templates-routes.ts';
export * from './templates-schemas.ts';
