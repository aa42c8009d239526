// Chunk plans (docs/operations.md, Scans and chunks): pure functions from a scan's kind, options and chunk
// count to the normalised options stored on the parent and one chunk_spec per child.
import {
  CHUNKABLE_KINDS,
  MAX_CHUNKS,
  MIN_CHUNKS,
  PORT_MAX,
  PORT_MIN,
  type ChunkSpec,
  type ContainerOptions,
  type EdgeOptions,
  type PortOptions,
  type ScanKind,
  type TemplateOptions,
  type WebappOptions,
} from './scans-schemas.ts';

/** A chunk plan that cannot be made; `path` names the offending request field. */
export class ChunkPlanError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.name = 'ChunkPlanError';
    this.path = path;
  }
}

export const DEFAULT_TOP_PORTS = 1000;

export interface ScanPlan {
  kind: ScanKind;
  /** Options as stored on the scan (defaults made explicit). */
  options: Record<string, unknown>;
  /** One entry per child, chunk 0 first; empty for an unchunked scan. */
  chunks: ChunkSpec[];
}

/** Splits [from, to] into n contiguous slices whose sizes differ by at most one. */
export function slicePortRange(from: number, to: number, n: number): { from: number; to: number }[] {
  const total = to - from + 1;
  return Array.from({ length: n }, (_, i) => ({
    from: from + Math.floor((i * total) / n),
    to: from + Math.floor(((i + 1) * total) / n) - 1,
  }));
}

/** Splits an ordered list into n contiguous groups whose sizes differ by at most one. */
export function contiguousGroups<T>(xs: readonly T[], n: number): T[][] {
  return Array.from({ length: n }, (_, i) =>
    xs.slice(Math.floor((i * xs.length) / n), Math.floor(((i + 1) * xs.length) / n)),
  );
}

/** Deals a list round-robin into n groups (path i goes to chunk i mod n), keeping order inside each. */
export function roundRobin<T>(xs: readonly T[], n: number): T[][] {
  const out: T[][] = Array.from({ length: n }, () => []);
  xs.forEach((x, i) => out[i % n]!.push(x));
  return out;
}

function portPlan(o: PortOptions, n: number | undefined): ScanPlan {
  if (!n) {
    const options = o.range ? o : { ...o, topPorts: o.topPorts ?? DEFAULT_TOP_PORTS };
    return { kind: 'port', options, chunks: [] };
  }
  if (o.topPorts)
    throw new ChunkPlanError(
      'body.options.topPorts',
      'A chunked port scan slices a port range; give range (or nothing for 1–65535) instead of topPorts.',
    );
  const range = o.range ?? { from: PORT_MIN, to: PORT_MAX };
  if (range.to - range.from + 1 < n)
    throw new ChunkPlanError(
      'body.chunkCount',
      `The range ${range.from}–${range.to} has fewer ports than the ${n} chunks asked for.`,
    );
  return {
    kind: 'port',
    options: { ...o, range },
    chunks: slicePortRange(range.from, range.to, n).map((r) => ({ kind: 'port', range: r })),
  };
}

function templatePlan(o: TemplateOptions, n: number | undefined): ScanPlan {
  if (!n) return { kind: 'template', options: o, chunks: [] };
  // Buckets are whole severities, so a template runs in exactly one chunk.
  if (n > o.severities.length)
    throw new ChunkPlanError(
      'body.chunkCount',
      `Template scans are chunked by severity: ${o.severities.length} selected ${o.severities.length === 1 ? 'severity allows' : 'severities allow'} at most ${o.severities.length} chunks.`,
    );
  return {
    kind: 'template',
    options: o,
    chunks: contiguousGroups(o.severities, n).map((severities) => ({
      kind: 'template',
      severities,
      tags: o.tags,
      templateIds: o.templateIds,
    })),
  };
}

function webappPlan(o: WebappOptions, n: number | undefined): ScanPlan {
  if (!n) return { kind: 'webapp', options: o, chunks: [] };
  if (n > o.paths.length)
    throw new ChunkPlanError(
      'body.chunkCount',
      `${o.paths.length} start ${o.paths.length === 1 ? 'path allows' : 'paths allow'} at most ${o.paths.length} chunks.`,
    );
  return {
    kind: 'webapp',
    options: o,
    chunks: roundRobin(o.paths, n).map((paths, i) => ({
      kind: 'webapp',
      paths,
      profile: o.profile,
      passiveBaseline: i === 0,
    })),
  };
}

/** What defines a scan, whoever asks for it (a person or a schedule): kind, options, chunk count. */
export type ScanDefinition = { chunkCount?: number | undefined } & (
  | { kind: 'port'; options: PortOptions }
  | { kind: 'template'; options: TemplateOptions }
  | { kind: 'webapp'; options: WebappOptions }
  | { kind: 'container'; options: ContainerOptions }
  | { kind: 'edge'; options: EdgeOptions }
);

/** The plan for a validated scan request. Throws ChunkPlanError when the chunk count does not fit. */
export function planScan(body: ScanDefinition): ScanPlan {
  const n = body.chunkCount;
  if (n !== undefined) {
    if (!CHUNKABLE_KINDS.includes(body.kind))
      throw new ChunkPlanError('body.chunkCount', 'Only port, template and webapp scans can be split into chunks.');
    if (!Number.isInteger(n) || n < MIN_CHUNKS || n > MAX_CHUNKS)
      throw new ChunkPlanError('body.chunkCount', `A scan splits into ${MIN_CHUNKS} to ${MAX_CHUNKS} chunks.`);
  }
  switch (body.kind) {
    case 'port':
      return portPlan(body.options, n);
    case 'template':
      return templatePlan(body.options, n);
    case 'webapp':
      return webappPlan(body.options, n);
    case 'container':
    case 'edge':
      return { kind: body.kind, options: body.options, chunks: [] };
  }
}
