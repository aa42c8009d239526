// Tenant-owned S3-compatible buckets (AWS, MinIO, R2, Ceph, ...). Checksums only WHEN_REQUIRED:
// the SDK's default CRC32 headers and trailers break most third-party stores.
// Puts stream: the body is counted and hashed as it arrives, sent in parts of PART_SIZE, and only
// a body that passed every check is completed; a refused one is aborted and never becomes visible.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { guardedAgents, isEgressRefusal, type EgressPolicy } from '../lib/egress.ts';
import { AppError, appError } from '../lib/errors.ts';
import { Meter } from './meter.ts';
import { assertObjectKey } from './object-keys.ts';
import type { ObjectInfo, ObjectStore, PresignedPut } from './storage-types.ts';

export interface S3Settings {
  endpoint: string;
  region: string;
  bucket: string;
  pathStyle: boolean;
  /** Key prefix inside the bucket ('' for none), without leading or trailing slash. */
  prefix: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface S3StoreOptions {
  /** Multipart part size; S3's minimum is 5 MiB. Memory per put is about one part. */
  partSize?: number;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
  maxAttempts?: number;
  /** A client to share (createS3Client); the store then leaves closing it to the caller. */
  client?: S3Client;
  /** The egress policy every connection of a tenant's bucket goes through (docs/security.md). */
  egress?: EgressPolicy;
}

export interface S3ObjectStore extends ObjectStore {
  readonly kind: 's3';
  presignPut(
    key: string,
    opts: { size: number; sha256: string; expiresInSeconds: number; contentType?: string },
  ): Promise<PresignedPut>;
  /** Closes the client's sockets. */
  destroy(): void;
}

const MIB = 1024 * 1024;
export const DEFAULT_PART_SIZE = 8 * MIB;
/** Presigned URLs live at most 15 minutes (docs/worker-protocol.md). */
export const MAX_PRESIGN_SECONDS = 15 * 60;

/** One client for a bucket's endpoint and keys; several stores (prefixes) may share it. */
export function createS3Client(s: S3Settings, opts: S3StoreOptions = {}): S3Client {
  return new S3Client({
    endpoint: s.endpoint,
    region: s.region,
    forcePathStyle: s.pathStyle,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: opts.maxAttempts ?? 3,
    requestHandler: {
      connectionTimeout: opts.connectionTimeoutMs ?? 5_000,
      requestTimeout: opts.requestTimeoutMs ?? 60_000,
      ...(opts.egress ? egressAgents(opts.egress) : {}),
    },
  });
}

function egressAgents(policy: EgressPolicy) {
  const agents = guardedAgents(policy, { http: { keepAlive: true }, https: { keepAlive: true } });
  return { httpAgent: agents.http, httpsAgent: agents.https };
}

export function createS3Store(s: S3Settings, opts: S3StoreOptions = {}): S3ObjectStore {
  const partSize = Math.max(5 * MIB, opts.partSize ?? DEFAULT_PART_SIZE);
  const client = opts.client ?? createS3Client(s, opts);
  const Bucket = s.bucket;
  const keyOf = (key: string) => {
    assertObjectKey(key);
    return s.prefix ? `${s.prefix}/${key}` : key;
  };
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      throw toStorageError(e);
    }
  };

  return {
    kind: 's3',

    async put(key, body, putOpts) {
      const Key = keyOf(key);
      const meter = new Meter(putOpts);
      const ContentType = putOpts.contentType;
      // The meter stops the flow with payload_too_large or upload_mismatch; the pipeline carries
      // that error (or the body's own) to the loop below, which then never completes the object.
      const metered = pipeline(body, meter).catch(() => undefined);
      const sent: CompletedPart[] = [];
      let uploadId: string | undefined;
      let parts: Buffer[] = [];
      let buffered = 0;
      const flushPart = async (data: Buffer) => {
        if (!uploadId)
          uploadId = (await client.send(new CreateMultipartUploadCommand({ Bucket, Key, ContentType }))).UploadId;
        const PartNumber = sent.length + 1;
        const { ETag } = await client.send(
          new UploadPartCommand({
            Bucket,
            Key,
            UploadId: uploadId,
            PartNumber,
            Body: data,
            ContentLength: data.length,
          }),
        );
        sent.push({ PartNumber, ETag });
      };
      try {
        for await (const chunk of meter as AsyncIterable<Buffer>) {
          parts.push(chunk);
          buffered += chunk.length;
          while (buffered >= partSize) {
            const all = Buffer.concat(parts);
            await flushPart(all.subarray(0, partSize));
            parts = [all.subarray(partSize)];
            buffered = parts[0]!.length;
          }
        }
        await metered;
        const rest = Buffer.concat(parts);
        if (!uploadId) {
          await client.send(new PutObjectCommand({ Bucket, Key, Body: rest, ContentLength: rest.length, ContentType }));
        } else {
          if (rest.length > 0) await flushPart(rest);
          await client.send(
            new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: sent } }),
          );
        }
        return meter.result();
      } catch (e) {
        body.destroy();
        meter.destroy();
        // Best effort: a store without AbortMultipartUpload keeps invisible parts until its lifecycle rule reaps them.
        if (uploadId)
          await client
            .send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId }))
            .catch(() => undefined);
        throw toStorageError(e);
      }
    },

    async get(key) {
      const Key = keyOf(key);
      return call(async () => {
        try {
          const res = await client.send(new GetObjectCommand({ Bucket, Key }));
          return {
            body: res.Body as Readable,
            info: { size: res.ContentLength ?? 0, contentType: res.ContentType ?? null },
          };
        } catch (e) {
          if (isNotFound(e)) throw appError('object_not_found', 'No such object.');
          throw e;
        }
      });
    },

    async head(key): Promise<ObjectInfo | null> {
      const Key = keyOf(key);
      return call(async () => {
        try {
          const res = await client.send(new HeadObjectCommand({ Bucket, Key }));
          return { size: res.ContentLength ?? 0, contentType: res.ContentType ?? null };
        } catch (e) {
          if (isNotFound(e)) return null;
          throw e;
        }
      });
    },

    async delete(key) {
      const Key = keyOf(key);
      await call(() => client.send(new DeleteObjectCommand({ Bucket, Key })));
    },

    /**
     * A URL the holder can PUT exactly `size` bytes to, for `expiresInSeconds` (≤ 15 min).
     * Content-Length is a signed header, so another length fails the signature; the SHA-256 rides
     * in the signed x-amz-checksum-sha256 header, which stores with flexible checksums verify
     * against the body. The caller must send every header in `headers`.
     */
    async presignPut(key, p) {
      if (!Number.isSafeInteger(p.size) || p.size < 0) throw new Error('size must be a non-negative integer');
      if (!/^[0-9a-f]{64}$/i.test(p.sha256)) throw new Error('sha256 must be 64 hex digits');
      const expiresIn = Math.min(Math.max(1, Math.floor(p.expiresInSeconds)), MAX_PRESIGN_SECONDS);
      const checksum = Buffer.from(p.sha256, 'hex').toString('base64');
      const command = new PutObjectCommand({
        Bucket,
        Key: keyOf(key),
        ContentLength: p.size,
        ChecksumSHA256: checksum,
        ...(p.contentType ? { ContentType: p.contentType } : {}),
      });
      const url = await getSignedUrl(client, command, {
        expiresIn,
        signableHeaders: new Set(['content-length', ...(p.contentType ? ['content-type'] : [])]),
        unhoistableHeaders: new Set(['x-amz-checksum-sha256', 'x-amz-sdk-checksum-algorithm']),
      });
      const signed = new URL(url).searchParams.get('X-Amz-SignedHeaders')?.split(';') ?? [];
      const values: Record<string, string> = {
        'content-length': String(p.size),
        'x-amz-checksum-sha256': checksum,
        'x-amz-sdk-checksum-algorithm': 'SHA256',
        ...(p.contentType ? { 'content-type': p.contentType } : {}),
      };
      const headers = Object.fromEntries(signed.filter((h) => h in values).map((h) => [h, values[h]!]));
      return { url, method: 'PUT', headers, expiresAt: new Date(Date.now() + expiresIn * 1000) };
    },

    destroy() {
      // A shared client belongs to whoever passed it in.
      if (!opts.client) client.destroy();
    },
  };
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export const UNREACHABLE_MESSAGE =
  "The bucket's endpoint could not be reached: no connection, no answer in time, a failed TLS handshake, " +
  'or an address outgoing connections may not reach (internal ranges; docs/security.md).';

function isNotFound(e: unknown): boolean {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } };
  return (
    err.name === 'NoSuchKey' ||
    err.name === 'NotFound' ||
    (err.$metadata?.httpStatusCode === 404 && err.name !== 'NoSuchBucket')
  );
}

/**
 * S3 and network failures as stable codes. Messages name the store's error code and HTTP status,
 * never the request (whose URL or headers could carry a signature) or a key.
 */
export function toStorageError(e: unknown): unknown {
  if (e instanceof AppError) return e;
  const err = e as {
    name?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    cause?: { code?: string };
  };
  const name = err.name ?? '';
  const status = err.$metadata?.httpStatusCode;
  const code = err.code ?? err.cause?.code ?? '';
  if (
    name === 'InvalidAccessKeyId' ||
    name === 'SignatureDoesNotMatch' ||
    name === 'InvalidToken' ||
    name === 'ExpiredToken' ||
    status === 401
  )
    return appError(
      'storage_auth_failed',
      `The bucket's endpoint refused the access keys (${name || status}). Check the access key id and secret access key.`,
      { cause: e },
    );
  if (name === 'NoSuchBucket')
    return appError(
      'storage_bucket_not_found',
      'The bucket does not exist at this endpoint. Check the bucket name, region, endpoint and path style.',
      { cause: e },
    );
  if (name === 'AccessDenied' || name === 'Forbidden' || status === 403)
    return appError(
      'storage_access_denied',
      'The access keys are valid but may not read, write or delete objects in this bucket (AccessDenied).',
      { cause: e },
    );
  // One message for a refused address, a closed port, a silent one and a failed handshake, so
  // that the answer never tells what (if anything) listens at an address (docs/security.md).
  if (
    isEgressRefusal(e) ||
    NETWORK_CODES.has(code) ||
    name === 'TimeoutError' ||
    /CERT|SSL|TLS/.test(code) ||
    (status === undefined && /socket|connect|timed? ?out|ENOTFOUND|ECONNREFUSED/i.test(err.message ?? ''))
  )
    return appError('storage_unreachable', UNREACHABLE_MESSAGE, { cause: e });
  // Not from the store (the incoming body failed, a programming error): unchanged.
  if (e instanceof Error && status === undefined && !('$fault' in e)) return e;
  return appError(
    'storage_error',
    `The bucket's endpoint answered with an error (${name || 'unknown'}${status ? `, HTTP ${status}` : ''}).`,
    { cause: e },
  );
}
