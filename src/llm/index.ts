// The language-model helpers' public surface (other modules import only this file).
export {
  createLlmGateway,
  LLM_DEFAULTS,
  LlmAbortedError,
  type LlmGateway,
  type LlmGatewayOptions,
  type LlmOutputSchema,
  type LlmPrompt,
} from './llm-gateway.ts';
export {
  createLlmService,
  reviewDocuments,
  EXPLAIN_MAX_BYTES,
  type LlmService,
  type DeviceCheckInput,
} from './llm-service.ts';
export { registerLlmRoutes } from './llm-routes.ts';
export {
  startAnswer,
  sendAnswerStream,
  streamAnswer,
  createEventStream,
  clientGone,
  logFallback,
  MODEL_LABEL,
  type AnswerStream,
  type AnswerEnd,
  type AnswerCheckResult,
  type OfflineWhy,
  type StartAnswerInput,
  type StreamOutcome,
} from './llm-answer.ts';
export { checkCitations, type CitationCheck } from './llm-citations.ts';
export {
  analyzeDeviceRuns,
  parsePastedOutput,
  combineRuns,
  offlineDeviceExplanation,
  devicePrompt,
  type DeviceRun,
  type DeviceAnalysis,
  type DeviceFinding,
} from './llm-device-check.ts';
export {
  extractDocuments,
  classify,
  checkUploadLimits,
  EXTRACT_LIMITS,
  type ExtractedDocument,
  type ExtractLimits,
  type UploadedFile,
  type DocumentKind,
} from './llm-extract.ts';
export { offlineEvidenceReview, findPhraseHits, COVERED_MIN_PHRASES } from './llm-offline-evidence.ts';
export {
  analyzeResultFile,
  MAX_GROUPS,
  offlineResultSummary,
  type ResultAnalysis,
  type FindingGroup,
} from './llm-offline-results.ts';
export {
  validateModelReview,
  REVIEW_OUTPUT,
  reviewPrompt,
  explainPrompt,
  dataBlock,
  neutralise,
  citeRule,
  DATA_RULE,
  DATA_OPEN,
  DATA_CLOSE,
} from './llm-prompts.ts';
export { mapUpstreamError, retryAfterSeconds, llmFailureOf } from './llm-errors.ts';
export { CMMC_L1_REQUIREMENTS } from './cmmc-l1-requirements.ts';
export * from './llm-schemas.ts';
