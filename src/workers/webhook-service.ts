// The tenant's webhook signing secret: workers sign their request bodies with it
// (X-Rampart-Signature). Stored sealed with the secret box, shown once when generated. A
// rotation keeps the previous secret verifying until previous_valid_until, so workers can be
// re-configured without a gap.
import type { Kysely, Selectable } from 'kysely';
import type { AuditService } from '../audit/index.ts';
import type { DB, TenantWebhookSecretsTable } from '../db/schema.ts';
import { ADMIN_ACCESS, type Caller, isTenantAdmin, withTenantAccess, withTenantMember } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import type { SecretBox } from '../lib/crypto.ts';
import { randomToken } from '../lib/ids.ts';
import type { WebhookSecretCreatedDto, WebhookSecretStatusDto } from './workers-schemas.ts';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

type Row = Selectable<TenantWebhookSecretsTable>;

/** The secrets a signature may match at `now`: the current one, and the previous one within its grace period. */
export function validSecrets(
  row: Pick<Row, 'current_sealed' | 'previous_sealed' | 'previous_valid_until'>,
  box: SecretBox,
  now: Date,
): string[] {
  const out = [box.open(row.current_sealed)];
  if (row.previous_sealed && row.previous_valid_until && new Date(row.previous_valid_until).getTime() > now.getTime())
    out.push(box.open(row.previous_sealed));
  return out;
}

export function createWebhookService(deps: {
  db: Kysely<DB>;
  secretBox: SecretBox;
  audit: AuditService;
  clock: Clock;
}) {
  const { db, secretBox, audit, clock } = deps;

  const status = (row: Row | undefined, canManage: boolean): WebhookSecretStatusDto => {
    const until =
      row?.previous_sealed &&
      row.previous_valid_until &&
      new Date(row.previous_valid_until).getTime() > clock.now().getTime()
        ? iso(row.previous_valid_until)
        : null;
    return {
      configured: !!row,
      createdAt: row ? iso(row.current_created_at) : null,
      rotatedAt: row ? iso(row.rotated_at) : null,
      previousValidUntil: until,
      canManage,
    };
  };

  return {
    get(tenantId: string, caller: Caller): Promise<WebhookSecretStatusDto> {
      return withTenantAccess(db, tenantId, caller, async (tx, role) => {
        const row = await tx
          .selectFrom('tenant_webhook_secrets')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .executeTakeFirst();
        return status(row, isTenantAdmin(role));
      });
    },

    /** A new tenant's first secret, unless it has one (nobody sees it; hosted workers read it sealed). */
    async ensure(tenantId: string, caller: Caller): Promise<boolean> {
      const now = clock.now();
      return withTenantMember(db, { tenantId, userId: caller.userId }, async (tx) => {
        const row = await tx
          .insertInto('tenant_webhook_secrets')
          .values({
            tenant_id: tenantId,
            current_sealed: secretBox.seal(`whsec_${randomToken(32)}`),
            current_created_at: now,
            created_at: now,
            updated_by: caller.userId,
          })
          .onConflict((c) => c.column('tenant_id').doNothing())
          .returning('tenant_id')
          .executeTakeFirst();
        if (row)
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: 'workers.webhook_secret_generated',
              targetType: 'tenant',
              targetId: tenantId,
              details: { automatic: true },
            },
            tx,
          );
        return !!row;
      });
    },

    /** Generates the first secret or rotates: the old one keeps verifying for `graceHours`. */
    rotate(tenantId: string, caller: Caller, graceHours: number): Promise<WebhookSecretCreatedDto> {
      return withTenantAccess(
        db,
        tenantId,
        caller,
        async (tx) => {
          const now = clock.now();
          const secret = `whsec_${randomToken(32)}`;
          const sealed = secretBox.seal(secret);
          const before = await tx
            .selectFrom('tenant_webhook_secrets')
            .selectAll()
            .where('tenant_id', '=', tenantId)
            .forUpdate()
            .executeTakeFirst();
          let row: Row;
          if (before) {
            const grace = graceHours > 0;
            row = await tx
              .updateTable('tenant_webhook_secrets')
              .set({
                current_sealed: sealed,
                current_created_at: now,
                previous_sealed: grace ? before.current_sealed : null,
                previous_valid_until: grace ? new Date(now.getTime() + graceHours * 3_600_000) : null,
                rotated_at: now,
                updated_by: caller.userId,
              })
              .where('tenant_id', '=', tenantId)
              .returningAll()
              .executeTakeFirstOrThrow();
          } else {
            row = await tx
              .insertInto('tenant_webhook_secrets')
              .values({
                tenant_id: tenantId,
                current_sealed: sealed,
                current_created_at: now,
                created_at: now,
                updated_by: caller.userId,
              })
              .returningAll()
              .executeTakeFirstOrThrow();
          }
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: before ? 'workers.webhook_secret_rotated' : 'workers.webhook_secret_generated',
              targetType: 'tenant',
              targetId: tenantId,
              details: before ? { graceHours } : {},
            },
            tx,
          );
          return { ...status(row, true), secret };
        },
        ADMIN_ACCESS,
      );
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
