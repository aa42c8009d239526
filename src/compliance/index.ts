export { createComplianceService, controlStatus, evidenceState, type ComplianceService } from './compliance-service.ts';
export { registerComplianceRoutes } from './compliance-routes.ts';
export {
  CATALOGUES,
  CATALOGUE_LIST,
  FRAMEWORK_IDS,
  findControl,
  isFrameworkId,
  type Catalogue,
  type CatalogueControl,
  type CatalogueGroup,
  type FrameworkId,
} from './catalogues.ts';
export {
  classifyFinding,
  FINDING_CLASSES,
  mapFindingToControls,
  type ControlRef,
  type FindingClass,
  type FindingToMap,
} from './mapping.ts';
