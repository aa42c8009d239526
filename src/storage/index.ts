export type { ObjectInfo, ObjectStore, PresignedPut, PutResult, StorageService } from './storage-types.ts';
export { createStorage, type AppStorage, type StorageDeps, type StorageSettingsService } from './storage-service.ts';
export { registerStorageRoutes } from './storage-routes.ts';
export { createBuiltinStore } from './builtin-store.ts';
export { createS3Store, toStorageError, type S3ObjectStore, type S3Settings, type S3StoreOptions } from './s3-store.ts';
export { assertObjectKey } from './object-keys.ts';
export { checkLimits } from './meter.ts';
