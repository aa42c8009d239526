// Session resolution and the server-side checks every route uses: requireSession, requireStaff,
// requireSuperAdmin. Tenant membership and role are checked by the services through
// withTenantMember (src/db/tenant.ts), under row-level security. Cookie-authenticated
// writes must carry x-csrf-token = HMAC(secret, session token), handed out by GET /api/v1/me.
import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Auth } from '../../auth/auth.ts';
import { fetchHeaders } from '../../auth/auth-routes.ts';
import { safeEqual } from '../../lib/crypto.ts';
import { appError } from '../../lib/errors.ts';
import type { PlatformRole, StaffService } from '../../staff/staff-service.ts';

export interface SessionUser {
  id: string;
  name: string;
  email: string;
  emailVerified: boolean;
  twoFactorEnabled: boolean;
}

export interface AuthSession {
  user: SessionUser;
  sessionId: string;
  sessionToken: string;
  activeTenantId: string | null;
}

export interface StaffIdentity extends AuthSession {
  platformRole: PlatformRole;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Resolved once per request, lazily. */
    authSession(): Promise<AuthSession | null>;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const kSession = Symbol('session');

export interface SessionGuards {
  requireSession(req: FastifyRequest): Promise<AuthSession>;
  requireStaff(req: FastifyRequest): Promise<StaffIdentity>;
  requireSuperAdmin(req: FastifyRequest): Promise<StaffIdentity>;
  csrfTokenFor(session: AuthSession): string;
}

export function registerSession(
  app: FastifyInstance,
  deps: { auth: Auth; secret: string; staff: StaffService },
): SessionGuards {
  const { auth, secret, staff } = deps;
  const csrfTokenFor = (s: AuthSession) =>
    createHmac('sha256', secret).update(`csrf:${s.sessionToken}`).digest('base64url');

  app.decorateRequest('authSession', function (this: FastifyRequest & { [kSession]?: Promise<AuthSession | null> }) {
    this[kSession] ??= (async () => {
      if (!this.headers.cookie) return null;
      const result = await auth.api.getSession({ headers: fetchHeaders(this) });
      if (!result) return null;
      const u = result.user;
      return {
        user: {
          id: u.id,
          name: u.name,
          email: u.email,
          emailVerified: u.emailVerified,
          twoFactorEnabled: Boolean(u.twoFactorEnabled),
        },
        sessionId: result.session.id,
        sessionToken: result.session.token,
        activeTenantId: (result.session as { activeOrganizationId?: string | null }).activeOrganizationId ?? null,
      };
    })();
    return this[kSession];
  });

  async function requireSession(req: FastifyRequest): Promise<AuthSession> {
    const session = await req.authSession();
    if (!session) throw appError('unauthenticated', 'Sign in to continue.');
    if (!SAFE_METHODS.has(req.method)) {
      const header = req.headers['x-csrf-token'];
      if (typeof header !== 'string' || !safeEqual(header, csrfTokenFor(session)))
        throw appError('csrf_invalid', 'Missing or invalid CSRF token; reload the page and try again.');
    }
    return session;
  }

  async function requireStaff(req: FastifyRequest): Promise<StaffIdentity> {
    const session = await requireSession(req);
    const role = await staff.staffRoleOf(session.user);
    if (!role) throw appError('staff_only', 'This area is for Rampart staff only.');
    return { ...session, platformRole: role };
  }

  async function requireSuperAdmin(req: FastifyRequest): Promise<StaffIdentity> {
    const identity = await requireStaff(req);
    if (identity.platformRole !== 'super_admin')
      throw appError('super_admin_only', 'Only a platform super-admin may do this.');
    return identity;
  }

  return { requireSession, requireStaff, requireSuperAdmin, csrfTokenFor };
}
