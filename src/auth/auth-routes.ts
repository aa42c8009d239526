// Better Auth behind Fastify. Requests are handed over as Fetch Requests; answers come back with
// every Set-Cookie intact. Error bodies are re-coded into our `{error, message}` shape (keeping
// Better Auth's `code` for its client).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_STATUS, type ErrorCode } from '../lib/errors.ts';
import { sendError } from '../server/plugins/errors.ts';
import type { Auth } from './auth.ts';
import { AUTH_NAME_RULES } from './auth-schemas.ts';

const AUTH_CODES: Record<string, ErrorCode> = {
  INVALID_EMAIL_OR_PASSWORD: 'auth_invalid_credentials',
  INVALID_PASSWORD: 'auth_invalid_credentials',
  INVALID_EMAIL: 'validation_failed',
  USER_ALREADY_EXISTS: 'auth_user_exists',
  USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL: 'auth_user_exists',
  PASSWORD_TOO_SHORT: 'auth_weak_password',
  PASSWORD_TOO_LONG: 'auth_weak_password',
  INVALID_TOKEN: 'auth_invalid_token',
  TOKEN_EXPIRED: 'auth_invalid_token',
  INVALID_CODE: 'auth_invalid_two_factor_code',
  INVALID_BACKUP_CODE: 'auth_invalid_two_factor_code',
  INVALID_TWO_FACTOR_COOKIE: 'auth_invalid_two_factor_code',
  TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE: 'rate_limited',
  EMAIL_NOT_VERIFIED: 'auth_email_not_verified',
  EMAIL_PASSWORD_SIGN_UP_DISABLED: 'auth_signup_disabled',
  VALIDATION_ERROR: 'validation_failed',
};

function codeFor(status: number, authCode: string | undefined): ErrorCode {
  const known = authCode ? AUTH_CODES[authCode] : undefined;
  if (known) return known;
  if (status === 401) return 'unauthenticated';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status === 413) return 'payload_too_large';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'internal_error';
  return 'auth_failed';
}

/** The request's headers as Better Auth reads them (the session lookup needs nothing else). */
export function fetchHeaders(req: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined || key === 'x-rampart-client-ip' || key === 'content-length') continue;
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else headers.set(key, value);
  }
  headers.set('x-rampart-client-ip', req.ip);
  return headers;
}

export function toFetchRequest(req: FastifyRequest, baseUrl: string): Request {
  const headers = fetchHeaders(req);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.body !== undefined && req.body !== null;
  return new Request(new URL(req.url, baseUrl), {
    method: req.method,
    headers,
    body: hasBody ? (typeof req.body === 'string' ? req.body : JSON.stringify(req.body)) : null,
  });
}

async function relay(res: Response, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const cookies = res.headers.getSetCookie();
  res.headers.forEach((value, key) => {
    if (key !== 'set-cookie' && key !== 'content-length' && key !== 'content-encoding') void reply.header(key, value);
  });
  if (cookies.length) void reply.header('set-cookie', cookies);
  const text = await res.text();
  if (res.status >= 400) {
    let authCode: string | undefined;
    let message = res.statusText || 'Request failed';
    try {
      const parsed = JSON.parse(text) as { code?: string; message?: string };
      authCode = parsed.code;
      if (parsed.message) message = parsed.message;
    } catch {
      /* not JSON */
    }
    const code = codeFor(res.status, authCode);
    if (res.status >= 500) req.log.error({ status: res.status }, 'auth handler failed');
    return reply
      .code(ERROR_STATUS[code])
      .type('application/json; charset=utf-8')
      .send({
        error: code,
        message: res.status >= 500 ? 'Authentication service failed; try again.' : message,
        ...(authCode ? { code: authCode } : {}),
      });
  }
  return reply.code(res.status).send(text);
}

export function registerAuthRoutes(app: FastifyInstance, auth: Auth, baseUrl: string): void {
  const allowedOrigin = new URL(baseUrl).origin;
  app.route({
    method: ['GET', 'POST'],
    url: '/api/auth/*',
    schema: { hide: true },
    async handler(req, reply) {
      if (req.method === 'POST') {
        // Cross-site form posts can only send form or text bodies, and browsers always send
        // Origin on cross-origin POSTs: together these close CSRF on the auth routes.
        const origin = req.headers.origin;
        if (origin !== undefined && origin !== allowedOrigin) {
          return sendError(reply, { status: 403, code: 'csrf_invalid', message: 'Cross-origin request refused.' });
        }
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (req.body !== undefined && type !== 'application/json') {
          return sendError(reply, {
            status: 415,
            code: 'unsupported_media_type',
            message: 'Send JSON (content-type: application/json).',
          });
        }
        const rule = AUTH_NAME_RULES[req.url.split('?')[0]!.replace(/\/+$/, '')];
        const checked = rule?.safeParse(req.body ?? {});
        if (checked && !checked.success) {
          return sendError(reply, {
            status: 400,
            code: 'validation_failed',
            message: 'The request is not valid.',
            details: checked.error.issues.map((i) => ({ path: ['body', ...i.path].join('.'), message: i.message })),
          });
        }
      }
      const res = await auth.handler(toFetchRequest(req, baseUrl));
      return relay(res, req, reply);
    },
  });
}
