// Evidence files of the CMMC program (attestation evidence, the SPRS proof) are streamed into the
// tenant's object store while their content is checked against their file type.
import type { Readable } from 'node:stream';
import { createSniffer, extensionOf, type evidenceKindFor } from '../compliance/evidence-files.ts';
import { appError, isAppError } from '../lib/errors.ts';
import type { ObjectStore } from '../storage/index.ts';

export interface EvidenceUpload {
  fileName: string;
  stream: Readable;
  truncated?: () => boolean;
}

/**
 * Streams an upload into the store while its content is checked against its file type (the
 * compliance module's sniffer); a refused, oversized or broken upload leaves nothing stored.
 */
export async function putChecked(
  store: ObjectStore,
  key: string,
  file: EvidenceUpload,
  fileName: string,
  kind: ReturnType<typeof evidenceKindFor>,
  maxBytes: number,
) {
  try {
    const sniffer = createSniffer(kind, extensionOf(fileName));
    file.stream.once('error', (e) => sniffer.destroy(e));
    sniffer.on('error', () => undefined);
    const put = await store.put(key, file.stream.pipe(sniffer), { maxBytes, contentType: kind.contentType });
    if (file.truncated?.()) throw appError('payload_too_large', 'The file is too large.');
    return put;
  } catch (e) {
    file.stream.resume();
    await store.delete(key).catch(() => undefined);
    if (isAppError(e)) throw e;
    if ((e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE')
      throw appError('payload_too_large', 'The file is too large.');
    throw e;
  }
}
