// Every platform secret a Rampart server can be configured with (src/lib/config.ts), with
// recognisable per-run values, for tests that scan answers, pages and exports for secret values
// (staff mesh tools: "a scan of every export and page response for each configured secret value
// finds none"). The mesh peer secrets and the model key are per test file; these are the rest.
// The S3 endpoint and the SMTP server are closed loopback ports: the tests that use this never
// store an object, and their apps send mail through the capturing test mailer. The database
// password is not among them: the test databases use trust authentication (no password).
import { randomBytes } from 'node:crypto';
import type { AppDeps } from '../../src/server/app.ts';

export interface ConfiguredSecrets {
  /** Environment entries to add to the server's configuration. */
  env: Record<string, string>;
  /** What main.ts derives from AUTH_SECRET and APP_ENCRYPTION_KEY; tests build the app with these. */
  deps: Pick<AppDeps, 'authSecret' | 'encryptionKey'>;
  /** Every secret value, in each form it could leak in (the encryption key as base64, base64url and hex). */
  values: string[];
}

/** `authSecret`: when a helper signs with a fixed one (the browser tests' admin CLI uses TEST_AUTH_SECRET). */
export function configuredSecrets(run: string, opts: { authSecret?: string } = {}): ConfiguredSecrets {
  const encryptionKey = randomBytes(32);
  const authSecret = opts.authSecret ?? `auth-secret-${run}-`.padEnd(48, 'q');
  const env: Record<string, string> = {
    CRON_SECRET: `cron-${run}-secret-value`,
    AGENT_RELAY_SECRET: `relay-${run}-secret-value`,
    CMMC_SCRIPT_SIGNING_SEED: `cmmc-seed-${run}-secret-value`,
    APP_ENCRYPTION_KEY: encryptionKey.toString('base64'),
    AUTH_SECRET: authSecret,
    METRICS_TOKEN: `metrics-${run}-token-value`,
    STORAGE_S3_ENDPOINT: 'http://127.0.0.1:9',
    STORAGE_S3_BUCKET: `bucket-${run}`,
    STORAGE_S3_ACCESS_KEY_ID: `AKIA${run.toUpperCase()}KEYID`,
    STORAGE_S3_SECRET_ACCESS_KEY: `s3-${run}-secret-access-key`,
    SMTP_URL: `smtp://mailer-${run}:smtp-${run}-password@127.0.0.1:9`,
  };
  const values = [
    env.CRON_SECRET!,
    env.AGENT_RELAY_SECRET!,
    env.CMMC_SCRIPT_SIGNING_SEED!,
    env.APP_ENCRYPTION_KEY!,
    encryptionKey.toString('base64url'),
    encryptionKey.toString('hex'),
    authSecret,
    env.METRICS_TOKEN!,
    env.STORAGE_S3_ACCESS_KEY_ID!,
    env.STORAGE_S3_SECRET_ACCESS_KEY!,
    env.SMTP_URL!,
    `smtp-${run}-password`,
  ];
  return { env, deps: { authSecret, encryptionKey }, values };
}
