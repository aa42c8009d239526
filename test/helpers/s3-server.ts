// A real S3-compatible server on loopback (@20minutes/s3rver) with SigV4 signature verification
// on: a request signed with a wrong secret is refused (SignatureDoesNotMatch), as S3 does.
// Ephemeral port, objects in a temporary directory removed on close.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';

const require = createRequire(import.meta.url);

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
}
type S3rverCtor = new (opts: Record<string, unknown>) => S3rverInstance;
interface AccountModule {
  DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void; revokeAccessKey(id: string): void };
}

export interface TestS3Server {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  region: string;
  /** A bucket that exists. */
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Keys of the objects stored in `bucket`, read from the server's files (no request, no signature). */
  objectKeys(bucket?: string): string[];
  close(): Promise<void>;
}

export async function startS3Server(opts: { buckets?: string[] } = {}): Promise<TestS3Server> {
  const S3rver = require('@20minutes/s3rver') as S3rverCtor;
  const account = require('@20minutes/s3rver/lib/models/account') as AccountModule;
  const directory = mkdtempSync(join(tmpdir(), 'rampart-s3-'));
  const bucket = `rampart-${randomBytes(4).toString('hex')}`;
  // A key pair of our own (the server's account registry is per process), unique per server.
  const accessKeyId = `AK${randomBytes(8).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  account.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    allowMismatchedSignatures: false,
    vhostBuckets: false,
    configureBuckets: [bucket, ...(opts.buckets ?? [])].map((name) => ({ name })),
  });
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    region: 'us-east-1',
    bucket,
    accessKeyId,
    secretAccessKey,
    objectKeys(name = bucket) {
      const root = join(directory, name);
      const suffix = '._S3rver_object';
      return (readdirSync(root, { recursive: true }) as string[])
        .filter((f) => f.endsWith(suffix))
        .map((f) =>
          relative(root, join(root, f.slice(0, -suffix.length)))
            .split(sep)
            .join('/'),
        )
        .sort();
    },
    async close() {
      server.httpServer?.closeAllConnections();
      await server.close();
      account.DUMMY_ACCOUNT.revokeAccessKey(accessKeyId);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
