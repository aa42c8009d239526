// Tenant scan templates: nuclei-subset YAML that a tenant uploads for its template scans. Every
// text is checked by the template engine's validator before it is stored (and again by the worker
// that runs it: a worker trusts nothing in a lease). Members read; owners and admins write. The
// per-tenant limits (TENANT_TEMPLATE_LIMIT templates, TENANT_TEMPLATE_TOTAL_BYTES of YAML) keep a
// template lease bounded; writes check them under a per-tenant advisory lock, so two concurrent
// uploads cannot both slip under a limit.
import { createHash } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { AuditService } from '../audit/index.ts';
import type { DB, ScanTemplatesTable } from '../db/schema.ts';
import { type AccessNeed, ADMIN_ACCESS, type Caller, isTenantAdmin, type Tx, tenantAccess } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { AppError, appError } from '../lib/errors.ts';
import type { OobSupport } from '../agent/scanners/template/build-http.ts';
import {
  builtinTemplates,
  validateTemplate,
  type Template,
  type TemplateError,
} from '../agent/scanners/template/index.ts';
import {
  TEMPLATE_MAX_BYTES,
  TENANT_TEMPLATE_LIMIT,
  TENANT_TEMPLATE_TOTAL_BYTES,
  type BuiltinTemplateDto,
  type ScanTemplateDetailDto,
  type ScanTemplateDto,
  type TemplateBody,
} from './templates-schemas.ts';

const iso = (d: Date | string) => new Date(d).toISOString();
const kib = (n: number) => `${Math.round((n / 1024) * 10) / 10} KiB`;

type Row = Selectable<ScanTemplatesTable> & { created_email: string | null };

function toDto(r: Row): ScanTemplateDto {
  return {
    id: r.id,
    templateId: r.template_id,
    name: r.name,
    severity: r.severity,
    tags: r.tags,
    size: r.size,
    sha256: r.sha256,
    createdBy: r.created_by && r.created_email ? { id: r.created_by, email: r.created_email } : null,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

/**
 * The validator's errors as request-field errors: `body.yaml.http[0].matchers[1].regex[0]`. Whole-
 * document problems (size, YAML syntax, not a mapping) are on `body.yaml` itself.
 */
export function templateErrorDetails(errors: readonly TemplateError[]): { path: string; message: string }[] {
  return errors.map((e) => {
    if (e.path === '(template)') return { path: 'body.yaml', message: e.message };
    if (/^line \d+$/.test(e.path)) return { path: 'body.yaml', message: `${e.path}: ${e.message}` };
    return { path: `body.yaml.${e.path}`, message: e.message };
  });
}

function validated(yaml: string, oob: OobSupport | undefined, payloadFiles: Record<string, string>): Template {
  const v = validateTemplate(yaml, { ...(oob ? { oob } : {}), payloadFiles });
  if (!v.ok)
    throw new AppError('validation_failed', 'The template is not valid; details name each problem.', {
      details: templateErrorDetails(v.errors),
    });
  // A file the template does not name would be stored and carried by every lease for nothing.
  const named = new Set(v.template.requests.flatMap((r) => r.payloadFiles));
  const unused = Object.keys(payloadFiles).filter((p) => !named.has(p));
  if (unused.length)
    throw new AppError('validation_failed', 'Some uploaded payload files are not named by the template.', {
      details: unused.map((p) => ({
        path: `body.payloadFiles.${p}`,
        message: 'the template has no payload with this file',
      })),
    });
  return v.template;
}

let builtinIndex: Map<string, BuiltinTemplateDto> | undefined;
/** The engine's built-in templates by id, built once per process. */
function builtins(): Map<string, BuiltinTemplateDto> {
  builtinIndex ??= new Map(
    builtinTemplates().map((t) => [
      t.id,
      { templateId: t.id, name: t.info.name, severity: t.info.severity, tags: t.info.tags },
    ]),
  );
  return builtinIndex;
}

/**
 * The tenant's templates a template lease carries (options.customTemplates), as the service role:
 * those listed in `templateIds` (all when empty) of the given severities, in id order, stopping
 * before TENANT_TEMPLATE_TOTAL_BYTES. Writes keep a tenant under that total, so normally all fit.
 */
export async function templatesForLease(
  q: Kysely<DB> | Tx,
  tenantId: string,
  filter: { templateIds: readonly string[]; severities: readonly string[] },
): Promise<{ id: string; yaml: string; payloadFiles: Record<string, string> }[]> {
  const { rows } = await sql<{ template_id: string; yaml: string; payload_files: Record<string, string> }>`
    select template_id, yaml, payload_files from (
      select template_id, yaml, payload_files, sum(size) over (order by template_id rows unbounded preceding) as running
        from scan_templates
       where tenant_id = ${tenantId}::uuid
         and (cardinality(${filter.templateIds as string[]}::text[]) = 0 or template_id = any(${filter.templateIds as string[]}::text[]))
         and severity = any(${filter.severities as string[]}::text[])
    ) t where running <= ${TENANT_TEMPLATE_TOTAL_BYTES}
    order by template_id`.execute(q);
  return rows.map((r) => ({ id: r.template_id, yaml: r.yaml, payloadFiles: r.payload_files }));
}

const MANAGE_TEMPLATES: AccessNeed = {
  ...ADMIN_ACCESS,
  message: 'Managing scan templates needs the owner or admin role in this tenant.',
};

export function createTemplatesService(deps: {
  db: Kysely<DB>;
  audit: AuditService;
  clock: Clock;
  oob?: OobSupport | undefined;
}) {
  const { db, audit, clock } = deps;

  const { asMember, asManager } = tenantAccess(db, MANAGE_TEMPLATES);

  const select = (tx: Tx) =>
    tx
      .selectFrom('scan_templates as t')
      .leftJoin('user as u', 'u.id', 't.created_by')
      .select(['u.email as created_email']);

  async function load(tx: Tx, tenantId: string, id: string): Promise<Row & { yaml: string }> {
    const row = await select(tx)
      .selectAll('t')
      .where('t.id', '=', id)
      .where('t.tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (!row) throw appError('template_not_found', 'No such scan template in this tenant.');
    return row;
  }

  const detail = (r: Row & { yaml: string }): { template: ScanTemplateDetailDto } => ({
    template: {
      ...toDto(r),
      yaml: r.yaml,
      payloadFiles: Object.entries(r.payload_files ?? {})
        .map(([path, text]) => ({ path, size: Buffer.byteLength(text, 'utf8') }))
        .sort((a, b) => a.path.localeCompare(b.path)),
    },
  });

  /** Serialises this tenant's template writes for the rest of the transaction. */
  const lockTenant = (tx: Tx, tenantId: string) =>
    sql`select pg_advisory_xact_lock(hashtextextended(${`scan_templates:${tenantId}`}, 0))`.execute(tx);

  async function usage(tx: Tx, tenantId: string, except?: string) {
    let q = tx
      .selectFrom('scan_templates')
      .select((eb) => [
        eb.fn.countAll<string>().as('count'),
        eb.fn.coalesce(eb.fn.sum<string>('size'), sql<string>`0`).as('bytes'),
      ])
      .where('tenant_id', '=', tenantId);
    if (except) q = q.where('id', '!=', except);
    const r = await q.executeTakeFirstOrThrow();
    return { count: Number(r.count), totalBytes: Number(r.bytes) };
  }

  function assertRoom(used: { count: number; totalBytes: number }, size: number, adding: boolean) {
    if (adding && used.count >= TENANT_TEMPLATE_LIMIT)
      throw appError(
        'template_limit_reached',
        `This tenant has ${TENANT_TEMPLATE_LIMIT} scan templates, the most allowed. Delete one first.`,
        { details: { limit: TENANT_TEMPLATE_LIMIT } },
      );
    if (used.totalBytes + size > TENANT_TEMPLATE_TOTAL_BYTES)
      throw appError(
        'template_limit_reached',
        `This tenant's scan templates would total ${kib(used.totalBytes + size)}; at most ${kib(TENANT_TEMPLATE_TOTAL_BYTES)} are allowed. Delete or shorten templates first.`,
        {
          details: { maxTotalBytes: TENANT_TEMPLATE_TOTAL_BYTES, totalBytes: used.totalBytes },
        },
      );
  }

  function assertNotBuiltin(id: string) {
    if (builtins().has(id))
      throw appError('template_exists', `"${id}" is the id of a built-in template; give your template another id.`, {
        details: { templateId: id, builtin: true },
      });
  }

  // size counts the payload files too: the tenant total bounds what a lease carries.
  const facts = (yaml: string, t: Template, files: Record<string, string>) => ({
    template_id: t.id,
    name: t.info.name,
    severity: t.info.severity,
    tags: t.info.tags,
    yaml,
    payload_files: JSON.stringify(files),
    size: Buffer.byteLength(yaml, 'utf8') + Object.values(files).reduce((n, f) => n + Buffer.byteLength(f, 'utf8'), 0),
    sha256: createHash('sha256').update(yaml, 'utf8').digest('hex'),
  });

  return {
    async list(tenantId: string, caller: Caller) {
      return asMember(tenantId, caller, async (tx, role) => {
        const rows = await select(tx)
          .select([
            't.id',
            't.tenant_id',
            't.template_id',
            't.name',
            't.severity',
            't.tags',
            't.size',
            't.sha256',
            't.created_by',
            't.created_at',
            't.updated_at',
          ])
          .where('t.tenant_id', '=', tenantId)
          .orderBy('t.template_id')
          .execute();
        const templates = rows.map((r) => toDto(r as Row));
        return {
          templates,
          builtin: [...builtins().values()].sort((a, b) => a.templateId.localeCompare(b.templateId)),
          usage: { count: templates.length, totalBytes: templates.reduce((n, t) => n + t.size, 0) },
          limits: {
            templates: TENANT_TEMPLATE_LIMIT,
            totalBytes: TENANT_TEMPLATE_TOTAL_BYTES,
            templateBytes: TEMPLATE_MAX_BYTES,
          },
          canManage: isTenantAdmin(role),
        };
      });
    },

    async get(tenantId: string, caller: Caller, id: string) {
      return asMember(tenantId, caller, async (tx) => detail(await load(tx, tenantId, id)));
    },

    async create(tenantId: string, caller: Caller, body: TemplateBody) {
      const now = clock.now();
      return asManager(tenantId, caller, async (tx) => {
        const files = body.payloadFiles ?? {};
        const t = validated(body.yaml, deps.oob, files);
        assertNotBuiltin(t.id);
        const values = facts(body.yaml, t, files);
        await lockTenant(tx, tenantId);
        const clash = await tx
          .selectFrom('scan_templates')
          .select('id')
          .where('tenant_id', '=', tenantId)
          .where('template_id', '=', t.id)
          .executeTakeFirst();
        if (clash)
          throw appError(
            'template_exists',
            `This tenant already has a template with the id "${t.id}"; replace that one instead.`,
            { details: { templateId: t.id, id: clash.id } },
          );
        assertRoom(await usage(tx, tenantId), values.size, true);
        const row = await tx
          .insertInto('scan_templates')
          .values({ tenant_id: tenantId, ...values, created_by: caller.userId, created_at: now, updated_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'template.created',
            targetType: 'scan_template',
            targetId: row.id,
            details: { templateId: t.id, severity: t.info.severity, size: values.size, sha256: values.sha256 },
          },
          tx,
        );
        return detail(await load(tx, tenantId, row.id));
      });
    },

    /** Replaces a template's YAML; the new text must keep the template's id. */
    async replace(tenantId: string, caller: Caller, id: string, body: TemplateBody) {
      return asManager(tenantId, caller, async (tx) => {
        await lockTenant(tx, tenantId);
        const current = await load(tx, tenantId, id);
        const files = body.payloadFiles ?? current.payload_files;
        const t = validated(body.yaml, deps.oob, files);
        const values = facts(body.yaml, t, files);
        if (t.id !== current.template_id)
          throw new AppError('validation_failed', 'A replacement must keep the template id.', {
            details: [
              {
                path: 'body.yaml.id',
                message: `must stay "${current.template_id}" (got "${t.id}"); upload a new template for a new id`,
              },
            ],
          });
        assertRoom(await usage(tx, tenantId, id), values.size, false);
        await tx
          .updateTable('scan_templates')
          .set({ ...values, updated_at: clock.now() })
          .where('id', '=', id)
          .execute();
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'template.updated',
            targetType: 'scan_template',
            targetId: id,
            details: {
              templateId: t.id,
              severity: t.info.severity,
              size: values.size,
              sha256: values.sha256,
              previousSha256: current.sha256,
            },
          },
          tx,
        );
        return detail(await load(tx, tenantId, id));
      });
    },

    async remove(tenantId: string, caller: Caller, id: string) {
      return asManager(tenantId, caller, async (tx) => {
        const current = await load(tx, tenantId, id);
        await tx.deleteFrom('scan_templates').where('id', '=', id).execute();
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'template.deleted',
            targetType: 'scan_template',
            targetId: id,
            details: { templateId: current.template_id, sha256: current.sha256 },
          },
          tx,
        );
      });
    },
  };
}

export type TemplatesService = ReturnType<typeof createTemplatesService>;
