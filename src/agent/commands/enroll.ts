// `rampart-worker enroll`: redeems a one-time enrollment code for a worker token, stores it with
// the tenant's signing secret in the config file (mode 0600), and checks the secret with a signed
// heartbeat. The secret is asked before the code is spent, so a missing secret costs no code.
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { createWorkerClient, enrollWorker, validateServerUrl } from '../client.ts';
import { CONFIG_VERSION, defaultConfigPath, writeConfig, type WorkerConfig } from '../config.ts';
import { WorkerApiError, describeError } from '../errors.ts';
import { WORKER_VERSION } from '../version.ts';
import { EXIT, UsageError, type CliIo } from './common.ts';

export const ENROLL_HELP = `Usage: rampart-worker enroll --server URL --code CODE [options]

Enrolls this machine as a worker of a Rampart tenant (Workers → Enroll a worker gives the code).

Options:
  --server URL      Rampart's address, e.g. https://rampart.example.com
  --code CODE       the 8-character one-time enrollment code (valid 15 minutes)
  --name NAME       how the worker is listed (default: this host's name)
  --secret SECRET   the tenant's webhook signing secret (Workers → Webhook signing secret);
                    else $RAMPART_WORKER_SECRET, else asked for on a terminal
  --config PATH     config file (default: ${defaultConfigPath()})
`;

/** Reads a line from a terminal without echoing it. */
export async function promptHidden(io: CliIo, question: string): Promise<string> {
  const input = io.stdin;
  if (!input.isTTY || typeof input.setRawMode !== 'function')
    throw new UsageError('No signing secret: pass --secret or set RAMPART_WORKER_SECRET');
  io.stderr.write(question);
  input.setRawMode(true);
  input.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = '';
      const onData = (chunk: Buffer | string) => {
        for (const ch of chunk.toString('utf8')) {
          if (ch === '\r' || ch === '\n') return done(() => resolve(value));
          if (ch === '\u0003') return done(() => reject(new UsageError('Cancelled')));
          if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
          else if (ch >= ' ') value += ch;
        }
      };
      const done = (fn: () => void) => {
        input.off('data', onData);
        fn();
      };
      input.on('data', onData);
    });
  } finally {
    input.setRawMode(false);
    input.pause();
    io.stderr.write('\n');
  }
}

export async function enrollCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      server: { type: 'string' },
      code: { type: 'string' },
      name: { type: 'string' },
      secret: { type: 'string' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.stdout.write(ENROLL_HELP);
    return EXIT.ok;
  }
  if (!values.server) throw new UsageError('enroll needs --server URL');
  if (!values.code) throw new UsageError('enroll needs --code CODE (Workers → Enroll a worker)');
  let serverUrl: string;
  try {
    serverUrl = validateServerUrl(values.server);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const code = values.code.trim();
  if (!/^[0-9A-Za-z][0-9A-Za-z -]{6,14}[0-9A-Za-z]$/.test(code))
    throw new UsageError('The enrollment code is 8 letters and digits, e.g. 7KQ2-M9XD');
  const name = (values.name ?? hostname()).trim().slice(0, 100) || 'worker';
  const path = values.config ?? defaultConfigPath(io.env);
  const secret = (
    values.secret ??
    io.env.RAMPART_WORKER_SECRET ??
    (await promptHidden(io, 'Webhook signing secret: '))
  ).trim();
  if (!secret) throw new UsageError('The signing secret is empty');

  const enrolled = await enrollWorker(
    { serverUrl, code, name, platform: `${process.platform}/${process.arch}`, version: WORKER_VERSION },
    { userAgent: `rampart-worker/${WORKER_VERSION}`, signal: io.signal },
  );
  const config: WorkerConfig = {
    version: CONFIG_VERSION,
    serverUrl,
    workerId: enrolled.workerId,
    tenantId: enrolled.tenantId,
    name,
    token: enrolled.token,
    signingSecret: secret,
    enrolledAt: new Date().toISOString(),
  };
  await writeConfig(path, config);
  io.stdout.write(
    `Enrolled as worker ${enrolled.workerId} (${name}) of tenant ${enrolled.tenantId}.\nConfig written to ${path} (mode 0600).\n`,
  );

  const client = createWorkerClient({
    serverUrl,
    token: enrolled.token,
    signingSecret: secret,
    userAgent: `rampart-worker/${WORKER_VERSION}`,
    retry: { attempts: 2 },
  });
  try {
    await client.heartbeat([], { version: WORKER_VERSION, signal: io.signal });
    io.stdout.write('Signed heartbeat accepted. Start the worker with `rampart-worker run`.\n');
    return EXIT.ok;
  } catch (e) {
    if (e instanceof WorkerApiError && e.code === 'worker_signature_invalid') {
      io.stderr.write(
        `The server did not accept the signing secret: ${e.message}\nPut the tenant's current secret into "signingSecret" in ${path}, or set RAMPART_WORKER_SECRET.\n`,
      );
      return EXIT.refused;
    }
    io.stderr.write(`Enrolled, but the check heartbeat failed: ${describeError(e)}\n`);
    return EXIT.failed;
  }
}
