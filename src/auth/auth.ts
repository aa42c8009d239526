// Better Auth over our Kysely database: e-mail + password, database sessions, TOTP two-factor
// with recovery codes, password reset, e-mail verification, organizations as tenants.
import { betterAuth } from 'better-auth';
import { createAuthMiddleware, isAPIError } from 'better-auth/api';
import { organization, twoFactor } from 'better-auth/plugins';
import type { Kysely } from 'kysely';
import type { AuditService } from '../audit/audit-service.ts';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import type { Mailer } from './mailer.ts';

export interface AuthDeps {
  db: Kysely<DB>;
  baseUrl: string;
  secret: string;
  mailer: Mailer;
  audit: AuditService;
  signupEnabled: boolean;
  /** Sign-in attempts allowed per address per minute. */
  signInPerMinute?: number;
  /** Sign-ups allowed per address per minute. */
  signUpPerMinute?: number;
  /** Runs after a tenant is created (its worker and signing secret); a failure is logged, not raised. */
  onTenantCreated?: (tenantId: string, user: { id: string; email: string }) => Promise<void>;
}

export const MIN_PASSWORD_LENGTH = 10;

function createAuthInstance(deps: AuthDeps) {
  const { db, audit, mailer } = deps;
  return betterAuth({
    appName: 'Rampart',
    baseURL: deps.baseUrl,
    basePath: '/api/auth',
    secret: deps.secret,
    database: { db, type: 'postgres' },
    trustedOrigins: [deps.baseUrl],
    telemetry: { enabled: false },
    advanced: {
      cookiePrefix: 'rampart',
      database: { generateId: 'uuid' },
      useSecureCookies: deps.baseUrl.startsWith('https://'),
      // Our proxy sets this header from Fastify's idea of the client address (TRUST_PROXY aware).
      ipAddress: { ipAddressHeaders: ['x-rampart-client-ip'] },
    },
    session: { expiresIn: 60 * 60 * 24 * 7, updateAge: 60 * 60 * 24 },
    emailAndPassword: {
      enabled: true,
      disableSignUp: !deps.signupEnabled,
      minPasswordLength: MIN_PASSWORD_LENGTH,
      maxPasswordLength: 256,
      resetPasswordTokenExpiresIn: 60 * 60,
      revokeSessionsOnPasswordReset: true,
      sendResetPassword: async ({ user, url }) => {
        await mailer.send({
          to: user.email,
          subject: 'Set your Rampart password',
          text: `Open this link within one hour to choose a new password:\n\n${url}\n\nIf you did not ask for this, ignore this message.`,
          link: url,
        });
      },
      onPasswordReset: async ({ user }) => {
        await audit.record({
          actorUserId: user.id,
          actorEmail: user.email,
          action: 'auth.password_reset',
          targetType: 'user',
          targetId: user.id,
        });
      },
    },
    emailVerification: {
      sendOnSignUp: true,
      autoSignInAfterVerification: true,
      expiresIn: 60 * 60 * 24,
      sendVerificationEmail: async ({ user, url }) => {
        await mailer.send({
          to: user.email,
          subject: 'Verify your e-mail address for Rampart',
          text: `Confirm this address by opening:\n\n${url}`,
          link: url,
        });
      },
      afterEmailVerification: async (user) => {
        await audit.record({
          actorUserId: user.id,
          actorEmail: user.email,
          action: 'auth.email_verified',
          targetType: 'user',
          targetId: user.id,
        });
      },
    },
    rateLimit: {
      enabled: true,
      storage: 'database',
      window: 60,
      max: 300,
      customRules: {
        '/sign-in/email': { window: 60, max: deps.signInPerMinute ?? 10 },
        '/sign-up/email': { window: 60, max: deps.signUpPerMinute ?? 10 },
        '/two-factor/verify-totp': { window: 60, max: 10 },
        '/two-factor/verify-backup-code': { window: 60, max: 10 },
        '/request-password-reset': { window: 60, max: 5 },
        '/send-verification-email': { window: 60, max: 5 },
      },
    },
    databaseHooks: {
      user: {
        create: {
          after: async (user) => {
            await audit.record({
              actorUserId: user.id,
              actorEmail: user.email,
              action: 'auth.sign_up',
              targetType: 'user',
              targetId: user.id,
            });
          },
        },
      },
    },
    plugins: [
      twoFactor({ issuer: 'Rampart', backupCodeOptions: { amount: 10, length: 10 } }),
      organization({
        creatorRole: 'owner',
        invitationExpiresIn: 60 * 60 * 24 * 7,
        cancelPendingInvitationsOnReInvite: true,
        // An invitation id alone must not admit anyone: the invited address must be proven.
        requireEmailVerificationOnInvitation: true,
        sendInvitationEmail: async (data) => {
          // The address lets the signed-out landing page say which account to use.
          const url = `${deps.baseUrl}/accept-invitation/${data.id}?email=${encodeURIComponent(data.email)}`;
          await mailer.send({
            to: data.email,
            subject: `${data.inviter.user.name} invited you to ${data.organization.name} on Rampart`,
            text: `${data.inviter.user.name} (${data.inviter.user.email}) invited you to join ${data.organization.name} as ${data.role}.\n\nAccept: ${url}\n\nThe invitation expires in 7 days.`,
            link: url,
            tenantId: data.organization.id,
          });
        },
        organizationHooks: {
          afterCreateOrganization: async ({ organization: org, user }) => {
            await withService(db, (tx) =>
              tx
                .insertInto('tenant_settings')
                .values({ tenant_id: org.id })
                .onConflict((c) => c.doNothing())
                .execute(),
            );
            await audit.record({
              tenantId: org.id,
              actorUserId: user.id,
              actorEmail: user.email,
              action: 'tenant.created',
              targetType: 'tenant',
              targetId: org.id,
              details: { name: org.name, slug: org.slug },
            });
            await deps.onTenantCreated?.(org.id, { id: user.id, email: user.email });
          },
          afterUpdateOrganization: async ({ organization: org, user }) => {
            if (org)
              await audit.record({
                tenantId: org.id,
                actorUserId: user.id,
                actorEmail: user.email,
                action: 'tenant.updated',
                targetType: 'tenant',
                targetId: org.id,
                details: { name: org.name, slug: org.slug },
              });
          },
          afterDeleteOrganization: async ({ organization: org, user }) => {
            await audit.record({
              actorUserId: user.id,
              actorEmail: user.email,
              action: 'tenant.deleted',
              targetType: 'tenant',
              targetId: org.id,
              details: { name: org.name },
            });
          },
          afterCreateInvitation: async ({ invitation, inviter, organization: org }) => {
            await audit.record({
              tenantId: org.id,
              actorUserId: inviter.id,
              actorEmail: inviter.email,
              action: 'member.invited',
              targetType: 'invitation',
              targetId: invitation.id,
              details: { email: invitation.email, role: invitation.role },
            });
          },
          afterCancelInvitation: async ({ invitation, cancelledBy, organization: org }) => {
            await audit.record({
              tenantId: org.id,
              actorUserId: cancelledBy.id,
              actorEmail: cancelledBy.email,
              action: 'member.invitation_cancelled',
              targetType: 'invitation',
              targetId: invitation.id,
              details: { email: invitation.email },
            });
          },
          afterAcceptInvitation: async ({ invitation, member, user, organization: org }) => {
            await audit.record({
              tenantId: org.id,
              actorUserId: user.id,
              actorEmail: user.email,
              action: 'member.joined',
              targetType: 'member',
              targetId: member.id,
              details: { role: member.role, invitationId: invitation.id },
            });
          },
          afterRejectInvitation: async ({ invitation, user, organization: org }) => {
            await audit.record({
              tenantId: org.id,
              actorUserId: user.id,
              actorEmail: user.email,
              action: 'member.invitation_rejected',
              targetType: 'invitation',
              targetId: invitation.id,
            });
          },
          afterUpdateMemberRole: async ({ member, previousRole, user, organization: org }) => {
            await audit.record({
              tenantId: org.id,
              actorUserId: user.id,
              actorEmail: user.email,
              action: 'member.role_changed',
              targetType: 'member',
              targetId: member.id,
              details: { userId: member.userId, from: previousRole, to: member.role },
            });
          },
          afterRemoveMember: async ({ member, user, organization: org }) => {
            await audit.record({
              tenantId: org.id,
              actorUserId: user.id,
              actorEmail: user.email,
              action: 'member.removed',
              targetType: 'member',
              targetId: member.id,
              details: { userId: member.userId, role: member.role },
            });
          },
        },
      }),
      // Last, so it sees what the two-factor plugin made of a sign-in.
      {
        id: 'rampart-audit',
        hooks: {
          after: [
            {
              matcher: () => true,
              handler: createAuthMiddleware(async (ctx) => {
                const returned = ctx.context.returned as unknown;
                const failed = isAPIError(returned);
                const body = (returned as { body?: unknown } | undefined)?.body ?? returned;
                const challenged = Boolean((body as { twoFactorRedirect?: boolean } | undefined)?.twoFactorRedirect);
                const session = ctx.context.newSession ?? ctx.context.session;
                const actor = session ? { actorUserId: session.user.id, actorEmail: session.user.email } : {};
                const email = typeof ctx.body?.email === 'string' ? ctx.body.email.toLowerCase().slice(0, 320) : null;
                switch (ctx.path) {
                  case '/sign-in/email':
                    if (failed) {
                      await audit.record({
                        actorEmail: email,
                        action: 'auth.sign_in_failed',
                        details: { reason: returned.body?.code ?? returned.status },
                      });
                    } else if (challenged || !ctx.context.newSession) {
                      await audit.record({ actorEmail: email, action: 'auth.sign_in_two_factor_challenge' });
                    } else {
                      await audit.record({
                        ...actor,
                        action: 'auth.sign_in',
                        targetType: 'user',
                        targetId: ctx.context.newSession.user.id,
                      });
                    }
                    break;
                  case '/two-factor/verify-totp':
                  case '/two-factor/verify-backup-code':
                    // Without a prior session this is the second step of a sign-in; with one, the user is
                    // confirming a newly enabled authenticator.
                    await audit.record({
                      ...actor,
                      action: failed
                        ? 'auth.two_factor_failed'
                        : ctx.context.session
                          ? 'auth.two_factor_confirmed'
                          : 'auth.sign_in',
                      details: { method: ctx.path.endsWith('totp') ? 'totp' : 'recovery_code' },
                    });
                    break;
                  case '/sign-out':
                    await audit.record({ action: 'auth.sign_out' });
                    break;
                  case '/change-password':
                    if (!failed)
                      await audit.record({
                        ...actor,
                        action: 'auth.password_changed',
                        targetType: 'user',
                        targetId: session?.user.id ?? null,
                      });
                    break;
                  case '/two-factor/enable':
                  case '/two-factor/disable':
                  case '/two-factor/generate-backup-codes':
                    if (!failed)
                      await audit.record({
                        ...actor,
                        action: `auth.two_factor_${ctx.path.split('/').pop()!.replace(/-/g, '_')}`,
                        targetType: 'user',
                        targetId: session?.user.id ?? null,
                      });
                    break;
                  case '/request-password-reset':
                    await audit.record({ actorEmail: email, action: 'auth.password_reset_requested' });
                    break;
                }
              }),
            },
          ],
        },
      },
    ],
  });
}

export type Auth = ReturnType<typeof createAuthInstance>;
export const createAuth = (deps: AuthDeps): Auth => createAuthInstance(deps);
