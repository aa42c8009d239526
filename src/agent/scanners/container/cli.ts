// `rampart-worker scan container --target <archive, OCI layout or image reference>`: flags, help, and the table and
// JSON shares of the output for a local image scan.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { SEVERITIES, severitySchema } from '../../../findings/findings-schemas.ts';
import { UsageError } from '../../commands/common.ts';
import { parseImageReference } from './registry.ts';
import type { CliFlagValue, LocalScanCli } from '../types.ts';
import { createContainerScanner, type ContainerScanDetails } from './index.ts';

const str = (v: CliFlagValue) => (typeof v === 'string' ? v : undefined);

function pad(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

export const containerCli: LocalScanCli = {
  kind: 'container',
  help: [
    '  --db PATH           OSV database from `rampart-worker osv import`, or OSV JSON (default: $RAMPART_OSV_DB); without one only packages and the image config are checked',
    `  --severity S        report findings of at least this severity: ${SEVERITIES.join(', ')} (default low)`,
    '  --ignore-unfixed    leave out vulnerabilities that have no fixed version yet',
  ].join('\n'),
  options: {
    db: { type: 'string' },
    severity: { type: 'string' },
    'ignore-unfixed': { type: 'boolean' },
  },
  prepare(values, target) {
    const local = resolve(target.trim());
    // A file or directory that exists is read as it is; anything else must be an image reference.
    const path = existsSync(local) ? local : undefined;
    if (!path && !parseImageReference(target))
      throw new UsageError(
        `--target: ${local} does not exist, and ${JSON.stringify(target)} is not an image reference (give an image archive, an OCI layout directory or registry/name:tag)`,
      );
    const severity = str(values.severity);
    if (severity !== undefined && !severitySchema.safeParse(severity).success)
      throw new UsageError(`--severity must be one of ${SEVERITIES.join(', ')}`);
    const db = str(values.db) ?? (process.env.RAMPART_OSV_DB?.trim() || undefined);
    if (db !== undefined && !existsSync(resolve(db))) throw new UsageError(`--db: ${resolve(db)} does not exist`);
    const scanner = createContainerScanner({
      ...(path ? { archivePath: path } : {}),
      ...(db ? { osvDbPath: resolve(db) } : { allowNoDb: true }),
    });
    return {
      scanner,
      options: {
        ...(severity ? { severityThreshold: severity } : {}),
        ...(values['ignore-unfixed'] === true ? { ignoreUnfixed: true } : {}),
      },
    };
  },
  table(details, meta) {
    const d = details as unknown as ContainerScanDetails;
    const img = d.image;
    const lines = [
      `Image: ${img.repoTags[0] ?? '(untagged)'} (${img.format}, ${img.layers} layer${img.layers === 1 ? '' : 's'}${img.architecture ? `, ${img.architecture}` : ''})`,
      `OS: ${img.osName ?? img.os ?? 'unknown'}${img.osEcosystem ? ` [${img.osEcosystem}]` : ''}; user: ${img.user ?? 'root (not set)'}`,
      `Packages: ${d.packageTotal}${
        d.packageTotal
          ? ` (${Object.entries(d.packages)
              .map(([k, n]) => `${k} ${n}`)
              .join(', ')})`
          : ''
      }`,
      d.database
        ? `Advisories: ${d.database.advisories} (${d.database.format}${d.database.builtAt ? `, built ${d.database.builtAt}` : ''})`
        : 'Advisories: none checked (no --db)',
      `Vulnerabilities: ${[...SEVERITIES]
        .reverse()
        .map((s) => `${s} ${d.vulnerabilities[s]}`)
        .join(', ')} in ${(meta.durationMs / 1000).toFixed(1)} s`,
    ];
    for (const n of d.notes) lines.push(`Note: ${n}`);
    if (d.vulnerabilityTable.length) {
      lines.push('');
      lines.push(
        ...pad([
          ['SEVERITY', 'ID', 'PACKAGE', 'INSTALLED', 'FIXED'],
          ...d.vulnerabilityTable.map((v) => [v.severity.toUpperCase(), v.id, v.package, v.installed, v.fixed ?? '-']),
        ]),
      );
    }
    lines.push('');
    return lines;
  },
  json(details) {
    const d = details as unknown as ContainerScanDetails;
    return {
      image: d.image,
      packages: d.packages,
      packageEcosystems: d.packageEcosystems,
      packageTotal: d.packageTotal,
      vulnerabilities: d.vulnerabilityTable,
      vulnerabilityCounts: d.vulnerabilities,
      database: d.database,
      notes: d.notes,
    };
  },
};
