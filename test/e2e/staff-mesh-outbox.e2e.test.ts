// Staff → Mesh outbox in the browser: a CMMC event the bid peer (a real HTTP server on loopback)
// refused with 503 is given up (the server here gives up after one attempt, as the outbox does
// after 72 hours), listed under Failed deliveries with its company, CAGE code, event and last
// error, and "Send again" queues it under the same request id, which the peer then receives.
// Deliveries are driven by the test (deliverDue), not by time.
import type { ServerResponse } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createCmmcEvents } from '../../src/cmmc/cmmc-events.ts';
import { withService } from '../../src/db/tenant.ts';
import { STAFF_DOMAIN, uniqueEmail } from '../helpers/app.ts';
import { closeAllPeers, startPeer, type Received, type TestPeer } from '../helpers/loopback-peer.ts';
import { createAndSignIn, describeBrowser, type E2e, openE2e, scanA11y } from './harness.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const BID = `bid-${RUN}`;
const MGMT = `mgmt-${RUN}`;
const COMPANY = `Outbox Machining ${RUN}`;
// CAGE codes never use the letters I and O.
const CAGE = `7${RUN.toUpperCase()
  .replace(/[^0-9A-HJ-NP-Z]/g, '3')
  .slice(0, 4)}`;
const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');

let bidDown = true;
function answer(req: Received, res: ServerResponse) {
  const requestId = String(req.headers['x-svc-request-id']);
  res.writeHead(bidDown ? 503 : 200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify(
      bidDown
        ? { error: 'unavailable', message: 'down for maintenance' }
        : { requestId, accepted: true, eventId: `e-${requestId}` },
    ),
  );
}

describeBrowser('staff mesh outbox in the browser', () => {
  let e2e: E2e;
  let staff: Page;
  let bid: TestPeer;
  let requestId = '';

  const status = () =>
    withService(e2e.server.database.db, (tx) =>
      tx
        .selectFrom('svc_outbox')
        .select(['status', 'last_error', 'resend_count'])
        .where('peer', '=', BID)
        .where('request_id', '=', requestId)
        .executeTakeFirstOrThrow(),
    );

  beforeAll(async () => {
    bid = await startPeer(answer);
    const mgmt = await startPeer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ requestId: String(req.headers['x-svc-request-id']), accepted: true }));
    });
    e2e = await openE2e({
      env: {
        SVC_BID_PEER: BID,
        SVC_MANAGEMENT_PEER: MGMT,
        [`SVC_PEER_URL_${sfx(BID)}`]: bid.origin,
        [`SVC_SECRET_TO_${sfx(BID)}`]: `to-bid-${RUN}-0123456789abcdef`,
        [`SVC_PEER_URL_${sfx(MGMT)}`]: mgmt.origin,
        [`SVC_SECRET_TO_${sfx(MGMT)}`]: `to-mgmt-${RUN}-0123456789abcdef`,
      },
      deps: { outboxOptions: { maxAttempts: 1 } },
    });
    const events = createCmmcEvents({
      outbox: e2e.server.app.services.mesh.outbox,
      clock: { now: () => new Date() },
      bidPeer: BID,
      managementPeer: MGMT,
    });
    const ids = await withService(e2e.server.database.db, (tx) =>
      events.emit(
        tx,
        {
          id: '00000000-0000-4000-8000-0000000000e2',
          tenant_id: '00000000-0000-4000-9000-0000000000e2',
          cage_code: CAGE,
          additional_cage_codes: [],
          company_name: COMPANY,
        },
        'cmmc.compliant',
        { status: 'compliant' },
      ),
    );
    // The first id is the bid peer's copy (the management peer gets its own).
    requestId = ids[0]!;
    await e2e.server.app.services.mesh.outbox.deliverDue();
    expect(await status()).toMatchObject({ status: 'failed', last_error: 'unavailable' });
  }, 120_000);
  afterAll(async () => {
    await e2e?.close();
    await closeAllPeers();
  });

  it('lists the failed delivery with company, CAGE code, event and last error', async () => {
    // CSP bypass only so the test can inject axe; the app itself is unchanged.
    staff = await e2e.newPage({ bypassCSP: true });
    await createAndSignIn(e2e.server, staff, {
      email: uniqueEmail('outboxstaff', STAFF_DOMAIN),
      role: 'staff',
      name: 'Staff',
    });
    await staff.getByRole('link', { name: 'Mesh outbox' }).click();
    await staff.getByRole('heading', { level: 1, name: 'Mesh outbox' }).waitFor();
    expect(staff.url()).toMatch(/\/settings\/staff\/mesh-outbox$/);
    // Loaded afresh for the accessibility scan, with no navigation link hovered or focused.
    await staff.goto('/settings/staff/mesh-outbox');
    await staff.getByRole('heading', { level: 1, name: 'Mesh outbox' }).waitFor();

    const perPeer = staff.getByRole('table', { name: 'Outbox per peer' });
    const peerRow = perPeer.getByRole('row').filter({ hasText: BID });
    await peerRow.getByRole('button', { name: `Send all failed again: 1 event to ${BID}` }).waitFor();

    const failed = staff.getByRole('table', { name: 'Failed deliveries' });
    const row = failed.getByRole('row').filter({ hasText: requestId });
    await row.getByText(COMPANY, { exact: true }).waitFor();
    await row.getByText(`CAGE ${CAGE}`, { exact: true }).waitFor();
    await row.getByText('cmmc.compliant', { exact: true }).waitFor();
    await row.getByText(BID, { exact: true }).waitFor();
    await row.getByText('unavailable', { exact: true }).waitFor();
    await staff.waitForLoadState('networkidle');
    expect(await scanA11y(staff)).toEqual([]);
  });

  it('sends it again under the same request id, and the peer receives it', async () => {
    bidDown = false;
    const before = bid.received.length;
    const failed = staff.getByRole('table', { name: 'Failed deliveries' });
    const row = failed.getByRole('row').filter({ hasText: requestId });
    await row.getByRole('button', { name: `Send again: cmmc.compliant for ${COMPANY} to ${BID}` }).click();
    await staff.getByText(`cmmc.compliant to ${BID} is queued again (request id ${requestId}).`).waitFor();
    // The row leaves the failed list; the peer's failed count is gone.
    await row.waitFor({ state: 'detached' });
    expect(await status()).toMatchObject({ status: 'pending', resend_count: 1 });

    await e2e.server.app.services.mesh.outbox.deliverDue();
    expect(await status()).toMatchObject({ status: 'delivered', last_error: null });
    const arrived = bid.received.slice(before).filter((r) => r.headers['x-svc-request-id'] === requestId);
    expect(arrived).toHaveLength(1);
    const body = JSON.parse(arrived[0]!.body.toString('utf8')) as {
      payload: { kind: string; data: { cageCode: string; companyName: string } };
    };
    expect(body.payload).toMatchObject({ kind: 'cmmc.compliant', data: { cageCode: CAGE, companyName: COMPANY } });

    await staff.reload();
    await staff.getByRole('heading', { level: 1, name: 'Mesh outbox' }).waitFor();
    // The failed list has loaded: empty, or a table of other deliveries (on a database shared with
    // other test files they may have left some), and this one is not among them.
    await staff
      .getByText('No failed deliveries.')
      .or(staff.getByRole('table', { name: 'Failed deliveries' }))
      .waitFor();
    expect(await staff.getByText(requestId).count()).toBe(0);
  });
});
