// One error handler: every error leaves as `{error, message[, details]}` with a stable code.
// Internal messages and stacks never reach the client.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { ZodError } from 'zod';
import { AppError, ERROR_STATUS, type ErrorCode } from '../../lib/errors.ts';

export type UnhandledErrorListener = (error: unknown, request: FastifyRequest) => void;

interface Mapped {
  status: number;
  code: ErrorCode;
  message: string;
  details?: unknown;
  headers?: Record<string, string> | undefined;
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'validation_failed',
  FST_ERR_VALIDATION: 'validation_failed',
};

/**
 * Database refusals that only a caller's text can cause (PostgreSQL cannot store NUL or unpaired
 * surrogates in text and jsonb). The edge check refuses such input first; this keeps any path it
 * misses a 400 instead of a 500 (and so never a system error report).
 */
const DB_INPUT_CODES: Record<string, ErrorCode> = {
  '22021': 'invalid_characters', // character_not_in_repertoire: NUL in text
  '22P05': 'invalid_characters', // untranslatable_character: \u0000 or a lone surrogate escape in jsonb
};

function map(error: unknown): Mapped | null {
  const dbCode = (error as { code?: unknown; severity?: unknown } | null)?.code;
  if (typeof dbCode === 'string' && DB_INPUT_CODES[dbCode]) {
    return {
      status: 400,
      code: DB_INPUT_CODES[dbCode],
      message: 'Text may not contain NUL characters (U+0000) or unpaired surrogates.',
    };
  }
  if (error instanceof AppError) {
    return {
      status: error.status,
      code: error.code,
      message: error.message,
      details: error.details,
      headers: error.headers,
    };
  }
  if (error instanceof ZodError) {
    return {
      status: 400,
      code: 'validation_failed',
      message: 'The request is not valid.',
      details: error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    };
  }
  const fe = error as FastifyError & { validation?: unknown };
  if (hasZodFastifySchemaValidationErrors(fe)) {
    return {
      status: 400,
      code: 'validation_failed',
      message: 'The request is not valid.',
      details: fe.validation.map((v) => ({
        path: [fe.validationContext, v.instancePath.replace(/^\//, '').replace(/\//g, '.')].filter(Boolean).join('.'),
        message: v.message,
      })),
    };
  }
  if (fe && typeof fe.code === 'string') {
    const code = FASTIFY_CODES[fe.code];
    if (code)
      return {
        status: ERROR_STATUS[code],
        code,
        message: code === 'invalid_json' ? 'The body is not valid JSON.' : fe.message,
      };
    if (fe.statusCode === 429)
      return { status: 429, code: 'rate_limited', message: 'Too many requests; slow down and retry later.' };
  }
  if (fe && fe.statusCode === 429)
    return { status: 429, code: 'rate_limited', message: 'Too many requests; slow down and retry later.' };
  // Parser errors from Fastify carry 4xx status codes without a code we list.
  if (
    fe &&
    typeof fe.statusCode === 'number' &&
    fe.statusCode >= 400 &&
    fe.statusCode < 500 &&
    !isResponseSerializationError(fe)
  ) {
    const status = fe.statusCode;
    const code: ErrorCode =
      status === 413
        ? 'payload_too_large'
        : status === 415
          ? 'unsupported_media_type'
          : status === 404
            ? 'not_found'
            : 'validation_failed';
    return { status: ERROR_STATUS[code], code, message: status === 400 ? 'The request is not valid.' : fe.message };
  }
  return null;
}

export function sendError(reply: FastifyReply, m: Mapped): FastifyReply {
  if (m.headers) void reply.headers(m.headers);
  const body: Record<string, unknown> = { error: m.code, message: m.message };
  if (m.details !== undefined) body.details = m.details;
  return reply.code(m.status).type('application/json; charset=utf-8').send(body);
}

/**
 * @param spaIndex the SPA's index.html: browser navigations to unknown paths outside the API get
 *   it (client-side routes); everything else gets a JSON 404.
 */
export function registerErrorHandling(
  app: FastifyInstance,
  onUnhandled: UnhandledErrorListener,
  spaIndex: Buffer | null = null,
): void {
  app.setErrorHandler((error, request, reply) => {
    const mapped = map(error);
    if (mapped) {
      if (mapped.status >= 500) request.log.error({ err: error }, 'request failed');
      return sendError(reply, mapped);
    }
    request.log.error({ err: error }, 'unhandled error');
    try {
      onUnhandled(error, request);
    } catch (e) {
      request.log.error({ err: e }, 'unhandled-error listener failed');
    }
    return sendError(reply, {
      status: 500,
      code: 'internal_error',
      message: `Something went wrong on our side. Quote request id ${request.id} when reporting it.`,
    });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const api = /^\/(api|docs|healthz|readyz|metrics)(\/|$)/.test(path);
    if (spaIndex && !api && (request.method === 'GET' || request.method === 'HEAD')) {
      return reply.code(200).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(spaIndex);
    }
    return sendError(reply, {
      status: 404,
      code: 'route_not_found',
      message: `No route for ${request.method} ${path}.`,
    });
  });
}
