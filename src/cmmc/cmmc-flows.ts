// The bid peer's mesh flows (docs/cmmc.md, docs/mesh.md §4): cmmc_handoff (mutating: the dispatcher records its
// answer, so a retried request id gets the same link back) and cmmc_status (read only).
import { appError } from '../lib/errors.ts';
import type { Mesh } from '../mesh/index.ts';
import { handoffPayloadSchema, statusPayloadSchema } from './cmmc-program-schemas.ts';
import type { CmmcProgram } from './cmmc-program.ts';

function parse<T>(
  schema: {
    safeParse(
      v: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  payload: unknown,
): T {
  const r = schema.safeParse(payload);
  if (!r.success)
    throw appError('invalid_payload', 'The payload does not fit this flow.', {
      details: r.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    });
  return r.data;
}

export function registerCmmcFlows(mesh: Pick<Mesh, 'registerFlow'>, program: CmmcProgram): void {
  mesh.registerFlow('cmmc_handoff', {
    mutating: true,
    async run(ctx, tx) {
      const payload = parse(handoffPayloadSchema, ctx.payload);
      return { flow: 'cmmc_handoff', ...(await program.handoffFlow(ctx, tx, payload)) };
    },
  });
  mesh.registerFlow('cmmc_status', {
    mutating: false,
    async run(ctx) {
      const { cageCode } = parse(statusPayloadSchema, ctx.payload);
      return { flow: 'cmmc_status', ...(await program.statusFlow(cageCode)) };
    },
  });
}
