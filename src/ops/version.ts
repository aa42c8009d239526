// Version constants served to peers and staff. OPERATIONS_DOC_VERSION must equal the header of
// docs/operations.md and the newest entry of docs/operations-changelog.md (a test checks it).
import { readFileSync } from 'node:fs';

export const OPERATIONS_DOC_VERSION = '2.51.0';

export const APP_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
