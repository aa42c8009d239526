// The edge check of src/lib/input-hygiene.ts on every route: path parameters, the query string and
// a parsed body (JSON, text) are checked before the route's schema and handler. Bodies a scope
// keeps raw (signed mesh and worker requests, uploads) are checked where they are parsed.
import type { FastifyInstance } from 'fastify';
import {
  assertCleanPart,
  findInputProblem,
  hasMalformedEscapes,
  inputProblemError,
  type InputProblem,
} from '../../lib/input-hygiene.ts';

const isParsed = (body: unknown): boolean =>
  typeof body === 'string' ||
  (body !== null &&
    typeof body === 'object' &&
    !Buffer.isBuffer(body) &&
    typeof (body as { pipe?: unknown }).pipe !== 'function');

export function registerInputHygiene(app: FastifyInstance): void {
  // A callback hook: it runs on every request, and promise-returning hooks cost more.
  app.addHook('preValidation', (req, _reply, done) => {
    const q = req.url.indexOf('?');
    const escapes: InputProblem | null =
      q >= 0 && hasMalformedEscapes(req.url.slice(q + 1)) ? { code: 'invalid_characters', path: 'query' } : null;
    const p =
      escapes ??
      findInputProblem(req.params, 'params') ??
      findInputProblem(req.query, 'query') ??
      (isParsed(req.body) ? findInputProblem(req.body, 'body') : null);
    done(p ? inputProblemError(p) : undefined);
  });
}

/**
 * A multipart body's parts, each checked by the same rule (field names, text values, file names)
 * before the route sees it. A refused file part is drained, as routes do before any early answer.
 */
export async function* cleanParts<
  P extends {
    type: 'field' | 'file';
    fieldname: string;
    value?: unknown;
    filename?: string;
    file?: { resume(): unknown };
  },
>(parts: AsyncIterable<P>): AsyncGenerator<P> {
  for await (const part of parts) {
    try {
      assertCleanPart(part);
    } catch (e) {
      part.file?.resume();
      throw e;
    }
    yield part;
  }
}
