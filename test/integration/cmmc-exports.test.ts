// CMMC program, exports: the controls CSV (BOM, the documented columns, formula-safe, file name), the
// controls JSON and the evidence pack without secrets. Runs on PGlite and, with DATABASE_URL, on
// PostgreSQL.
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { withService } from '../../src/db/tenant.ts';
import { unzip, setupCmmcProgramApp } from '../helpers/cmmc-program.ts';

const { t, clock, tenantWithProfile, postRun, answerAll } = setupCmmcProgramApp();

const DAY = 86_400_000;
/** The CSV's data rows by control code: [status, missing_attestation_items, failing_device_checks]. */
function csvRows(body: string): Map<string, string[]> {
  const lines = body.slice(1).trimEnd().split('\r\n').slice(1);
  return new Map(lines.map((l) => [l.split(',')[0]!, l.split(',').slice(2, 5)]));
}

describe('exports', () => {
  it('writes the controls CSV (BOM, spec columns, formula-safe, file name), JSON, and an evidence pack without secrets', async () => {
    clock.set(new Date('2026-03-04T05:06:07Z'));
    const { owner, base, cageCode } = await tenantWithProfile('export', { companyName: '=HYPERLINK("http://evil")' });
    const token = await postRun(owner, base, 'windows', 'PC-9');
    await owner.put(`${base}/attestations/ac1.roster`, { answer: 'yes' });
    await owner.post(`${base}/policies/generate`, { kinds: ['access_control'] });
    const csv = await owner.get(`${base}/export/controls.csv`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-disposition']).toBe('attachment; filename="cmmc-controls-20260304-050607.csv"');
    expect(csv.body.charCodeAt(0)).toBe(0xfeff);
    const lines = csv.body.slice(1).trimEnd().split('\r\n');
    // The documented columns (docs/cmmc.md) in their order; the CMMC 2.0 alias is an extra column at the end.
    expect(lines[0]).toBe(
      'control_code,title,status,missing_attestation_items,failing_device_checks,company,cage_code,sprs_status,renewal_due_date,latest_device_check,v2_alias',
    );
    expect(lines).toHaveLength(16);
    expect(lines[1]).toMatch(/^AC\.L1-b\.1\.i,Authorized Access Control,not_implemented,/);
    expect(lines[1]).toMatch(/,AC\.L1-3\.1\.1$/);
    expect(lines[1]).toContain(`"'=HYPERLINK(""http://evil"")",${cageCode},not_filed`);
    const json = await owner.get(`${base}/export/controls.json`);
    expect(json.headers['content-disposition']).toContain('cmmc-controls-20260304-050607.json');
    expect(
      (json.json() as { controls: { status: string }[] }).controls.every((c) => c.status === 'not_implemented'),
    ).toBe(true);

    const zip = await owner.get(`${base}/export/evidence-pack.zip`);
    expect(zip.statusCode).toBe(200);
    expect(zip.headers['content-disposition']).toContain('cmmc-evidence-pack-20260304-050607.zip');
    const files = unzip(zip.rawPayload);
    expect(Object.keys(files)).toEqual(
      expect.arrayContaining([
        'cmmc-controls-20260304-050607.csv',
        'controls.json',
        'attestations.json',
        'devices.json',
        'manifest.json',
        'policies/access-control-v1-draft.md',
        'policies/access-control-v1-draft.pdf',
      ]),
    );
    const all = Object.values(files)
      .map((b) => b.toString('latin1'))
      .join('\n');
    const hash = (
      await withService(t.database.db, (tx) =>
        sql<{
          h: string;
        }>`select device_token_hash as h from compliance_profiles where cage_code = ${cageCode}`.execute(tx),
      )
    ).rows[0]!.h;
    expect(all).not.toContain(token);
    expect(all).not.toContain(hash);
    expect(all).not.toContain('cmmc-evidence/');
  });

  it('names every cause of a not_implemented row in the reason columns: policy, pending computer, no run', async () => {
    clock.set(new Date('2026-05-01T08:00:00Z'));
    const { owner, base } = await tenantWithProfile('export-reasons');
    // Every item answered yes, every policy approved but physical protection (left a draft).
    await answerAll(owner, base);
    expect((await owner.post(`${base}/policies/generate`, {})).statusCode).toBe(200);
    const list = (await owner.get(`${base}/policies`)).json() as {
      documents: { kind: string; latest: { id: string } }[];
    };
    for (const d of list.documents.filter((x) => x.kind !== 'physical_protection')) {
      const res = await owner.post(`${base}/policies/${d.latest.id}/approve`, {
        effectiveDate: clock.today(),
        forAffirmingOfficial: true,
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const read = async () => {
      const res = await owner.get(`${base}/export/controls.csv`);
      expect(res.statusCode, res.body).toBe(200);
      return csvRows(res.body);
    };
    // No computer sent a run: the device requirements name that; the PE rows name their policy.
    let rows = await read();
    expect(rows.get('AC.L1-b.1.i')).toEqual(['not_implemented', '', 'no_current_device_run']);
    expect(rows.get('PE.L1-b.1.viii')).toEqual(['not_implemented', 'policy:physical_protection', '']);
    expect(rows.get('MP.L1-b.1.vii')).toEqual(['implemented', '', '']);
    // A run 40 days old: the computer is pending and named.
    clock.set(new Date(clock.at.getTime() - 40 * DAY));
    await postRun(owner, base, 'windows', 'PC-OLD');
    clock.set(new Date('2026-05-01T08:00:00Z'));
    rows = await read();
    expect(rows.get('AC.L1-b.1.i')).toEqual(['not_implemented', '', 'PC-OLD:pending no_current_device_run']);
    // A current passing run next to it: only the pending computer is left.
    await postRun(owner, base, 'windows', 'PC-NEW');
    rows = await read();
    expect(rows.get('SI.L1-b.1.xii')).toEqual(['not_implemented', '', 'PC-OLD:pending']);
    for (const [code, [status, items, devices]] of rows)
      if (status === 'not_implemented') expect(`${items}${devices}`, code).not.toBe('');
  });
});
