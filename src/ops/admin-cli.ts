// `npm run admin -- <command>`: bootstrap and manage platform roles from the shell.
//   create --email E --role staff|super_admin [--name N]   create (or reuse) the user, mark the
//                                                           address verified, grant the role, print
//                                                           a one-time link to set the password
//   grant  --email E --role staff|super_admin
//   revoke --email E
//   reseal-secrets                                          re-seal every stored secret under the
//                                                           current APP_ENCRYPTION_KEY (key rotation)
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createAuditService } from '../audit/index.ts';
import { createAuth } from '../auth/auth.ts';
import type { MailMessage } from '../auth/mailer.ts';
import { openDatabase, type Database } from '../db/client.ts';
import { migrate } from '../db/migrate.ts';
import { withService } from '../db/tenant.ts';
import { ConfigError, loadConfig, type Config } from '../lib/config.ts';
import { createSecretBox, type SecretBox } from '../lib/crypto.ts';
import { AppError } from '../lib/errors.ts';
import { resolveSecrets } from '../lib/secrets-file.ts';
import { createStaffService, emailDomainApproved } from '../staff/index.ts';
import { resealSecrets } from './reseal.ts';

const USAGE = `usage: npm run admin -- create --email E --role staff|super_admin [--name N]
       npm run admin -- grant  --email E --role staff|super_admin
       npm run admin -- revoke --email E
       npm run admin -- reseal-secrets`;

export interface AdminIo {
  out(line: string): void;
  err(line: string): void;
}

const argsSchema = z.object({
  command: z.enum(['create', 'grant', 'revoke']),
  email: z.email('--email must be an e-mail address').transform((e) => e.toLowerCase()),
  role: z.enum(['staff', 'super_admin']).optional(),
  name: z.string().min(1).max(200).optional(),
});

/** Runs one admin command against an open, migrated database. Returns the process exit code. */
export async function runAdmin(
  argv: string[],
  deps: { config: Config; database: Database; authSecret: string; secretBox?: SecretBox; io: AdminIo },
): Promise<number> {
  const { config, database, io } = deps;
  if (argv[0] === 'reseal-secrets') {
    if (argv.length > 1 || !deps.secretBox) {
      io.err(USAGE);
      return 64;
    }
    const results = await resealSecrets(database.db, deps.secretBox);
    for (const r of results)
      io.out(
        `${r.table}: ${r.resealed} of ${r.rows} rows re-sealed${r.unreadable ? `, ${r.unreadable} unreadable with the configured keys` : ''}`,
      );
    const unreadable = results.reduce((n, r) => n + r.unreadable, 0);
    if (unreadable) {
      io.err(
        `${unreadable} rows could not be opened with APP_ENCRYPTION_KEY or APP_ENCRYPTION_KEY_PREVIOUS: add the key they were sealed with to APP_ENCRYPTION_KEY_PREVIOUS and run again`,
      );
      return 1;
    }
    io.out(
      'every stored secret is sealed under the current APP_ENCRYPTION_KEY; APP_ENCRYPTION_KEY_PREVIOUS can be removed',
    );
    return 0;
  }
  let parsed;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { email: { type: 'string' }, role: { type: 'string' }, name: { type: 'string' } },
    });
    parsed = argsSchema.parse({ command: positionals[0], ...values });
  } catch (e) {
    io.err(
      e instanceof z.ZodError
        ? e.issues.map((i) => `${i.path.join('.') || 'command'}: ${i.message}`).join('\n')
        : String((e as Error).message),
    );
    io.err(USAGE);
    return 64; // EX_USAGE
  }
  if (parsed.command !== 'revoke' && !parsed.role) {
    io.err('--role is required (staff or super_admin)');
    io.err(USAGE);
    return 64;
  }
  const audit = createAuditService({ db: database.db });
  const staff = createStaffService({ db: database.db, staffDomains: config.STAFF_EMAIL_DOMAINS, audit });
  const findUser = () =>
    withService(database.db, (tx) =>
      tx.selectFrom('user').select(['id', 'email']).where('email', '=', parsed.email).executeTakeFirst(),
    );

  try {
    if (parsed.command === 'revoke') {
      const user = await findUser();
      if (!user) throw new AppError('user_not_found', `No user has the e-mail ${parsed.email}.`);
      await staff.revokeRole(user.id, null);
      io.out(`revoked the platform role of ${parsed.email}`);
      return 0;
    }
    const role = parsed.role!;
    if (parsed.command === 'create') {
      const outbox: MailMessage[] = [];
      const auth = createAuth({
        db: database.db,
        baseUrl: config.PUBLIC_BASE_URL,
        secret: deps.authSecret,
        mailer: { send: async (m) => void outbox.push(m) },
        audit,
        signupEnabled: true,
      });
      const ctx = await auth.$context;
      let user = await findUser();
      if (!user) {
        const created = await ctx.internalAdapter.createUser(
          { email: parsed.email, name: parsed.name ?? parsed.email.split('@')[0]!, emailVerified: true },
          { method: 'admin' },
        );
        user = { id: created.id, email: created.email };
        io.out(`created user ${parsed.email}`);
      } else {
        // Identity rows belong to the auth subsystem, which runs as the owner.
        const verified = (
          await database.db
            .selectFrom('user')
            .select('emailVerified')
            .where('id', '=', user.id)
            .executeTakeFirstOrThrow()
        ).emailVerified;
        if (!verified) {
          // Anyone could have signed up with this address. Nothing they set up may survive the
          // grant: sessions, password and authenticator go; the link printed below is the only way in.
          await database.db.transaction().execute(async (tx) => {
            await tx.deleteFrom('session').where('userId', '=', user!.id).execute();
            await tx
              .deleteFrom('account')
              .where('userId', '=', user!.id)
              .where('providerId', '=', 'credential')
              .execute();
            await tx.deleteFrom('twoFactor').where('userId', '=', user!.id).execute();
            await tx
              .updateTable('user')
              .set({ emailVerified: true, twoFactorEnabled: false, updatedAt: new Date() })
              .where('id', '=', user!.id)
              .execute();
          });
          io.out(
            `user ${parsed.email} existed unverified; its sessions, password and two-factor were removed and the address marked verified`,
          );
        } else {
          io.out(`user ${parsed.email} exists with a verified address; it keeps its password`);
        }
      }
      await auth.api.requestPasswordReset({
        body: { email: parsed.email, redirectTo: `${config.PUBLIC_BASE_URL}/reset-password` },
      });
      const link = outbox.find((m) => m.to === parsed.email && m.link)?.link;
      if (!link) throw new Error('no set-password link was produced');
      await staff.grantRole({ email: parsed.email, role }, null);
      io.out(`granted ${role}`);
      io.out(`one-time link to set the password (valid 1 hour):\n${link}`);
    } else {
      await staff.grantRole({ email: parsed.email, role }, null);
      io.out(`granted ${role} to ${parsed.email}`);
    }
    if (!emailDomainApproved(parsed.email, config.STAFF_EMAIL_DOMAINS)) {
      io.err(
        `warning: ${parsed.email.split('@')[1]} is not in STAFF_EMAIL_DOMAINS (${config.STAFF_EMAIL_DOMAINS.join(', ') || 'unset'}); ` +
          'staff rights need an approved domain too. Set STAFF_EMAIL_DOMAINS and restart the server.',
      );
    }
    return 0;
  } catch (e) {
    if (e instanceof AppError) {
      io.err(`${e.code}: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(78);
    }
    throw e;
  }
  const io: AdminIo = { out: (l) => console.log(l), err: (l) => console.error(l) };
  const secrets = resolveSecrets(config, { warn: (m: string) => console.error(`warning: ${m}`) });
  let database: Database;
  try {
    database = await openDatabase({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      pgliteSharedBuffers: config.PGLITE_SHARED_BUFFERS,
    });
  } catch (e) {
    console.error(`${(e as Error).message}`);
    process.exit(1);
  }
  try {
    await migrate(database);
    const secretBox = createSecretBox(Buffer.from(secrets.encryptionKey, 'base64'), secrets.previousEncryptionKeys);
    process.exitCode = await runAdmin(process.argv.slice(2), {
      config,
      database,
      authSecret: secrets.authSecret,
      secretBox,
      io,
    });
  } finally {
    await database.close();
  }
}
