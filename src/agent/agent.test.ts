// The agent's lease/heartbeat/upload logic against a stand-in server (an in-memory client) and
// scripted scanners: uploads a finished scan's report, reports scanner failures, drops scans the
// server says are lost or cancelled, and stops gracefully (finish within the grace period, release
// the rest, lease nothing new).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAgent, type AgentClient } from './agent.ts';
import { abortableSleep, type HeldLease, type Lease, type LeaseState } from './client.ts';
import { WorkerApiError } from './errors.ts';
import { ScannerError, type Scanner } from './scanners/types.ts';

type Behaviour = 'ok' | 'block' | 'fail' | 'slow-ok' | 'progress-lost';

function lease(scanId: string): Lease {
  return {
    scanId,
    leaseToken: `tok-${scanId}`,
    leaseExpiresAt: new Date(Date.now() + 90_000).toISOString(),
    leaseSeconds: 90,
    heartbeatSeconds: 30,
    attempt: 1,
    maxAttempts: 3,
    kind: 'port',
    options: {},
    chunk: null,
    asset: { id: 'a1', kind: 'host', target: '127.0.0.1', name: 'loop' },
  };
}

function fakeServer(queue: Lease[], opts: { heartbeatStates?: Record<string, LeaseState>; leaseError?: unknown } = {}) {
  const calls = {
    leaseKinds: [] as string[][],
    heartbeats: [] as HeldLease[][],
    progress: [] as { scanId: string; percent: number }[],
    uploads: [] as { scanId: string; size: number; sha256: string; bytesHash: string; text: string }[],
    fails: [] as { scanId: string; error: string; retryable: boolean }[],
    releases: [] as string[],
    downloads: [] as { scanId: string; dest: string }[],
  };
  let heartbeatCount = 0;
  const client: AgentClient = {
    async lease(kinds, o = {}) {
      calls.leaseKinds.push([...kinds]);
      if (opts.leaseError) throw opts.leaseError;
      const next = queue.shift();
      if (next) return next;
      await abortableSleep(20, o.signal);
      return null;
    },
    async heartbeat(leases = []) {
      heartbeatCount += 1;
      calls.heartbeats.push(leases);
      return {
        ok: true,
        workerId: 'w1',
        serverTime: new Date().toISOString(),
        leases: leases.map((l) => ({
          scanId: l.scanId,
          state: opts.heartbeatStates?.[l.scanId] ?? 'active',
          leaseExpiresAt: null,
        })),
      };
    },
    async progress(scanId, _token, percent) {
      calls.progress.push({ scanId, percent });
      if (scanId === 'progress-lost') throw new WorkerApiError(409, 'lease_lost', 'The lease is gone');
      return { ok: true, leaseExpiresAt: new Date().toISOString() };
    },
    async release(scanId) {
      calls.releases.push(scanId);
      return { ok: true };
    },
    async fail(scanId, _token, error, retryable) {
      calls.fails.push({ scanId, error, retryable });
      return { ok: true, status: retryable ? 'queued' : 'failed' };
    },
    async downloadArchive(scanId, _token, dest) {
      calls.downloads.push({ scanId, dest });
      writeFileSync(dest, 'archive bytes');
      return { path: dest, size: 13, sha256: createHash('sha256').update('archive bytes').digest('hex') };
    },
    async uploadReport(input) {
      const bytes = readFileSync(input.path);
      calls.uploads.push({
        scanId: input.scanId,
        size: input.size,
        sha256: input.sha256,
        bytesHash: createHash('sha256').update(bytes).digest('hex'),
        text: bytes.toString('utf8'),
      });
      return { uploadId: 'u1', scanId: input.scanId, status: 'finalized', ingestionId: 'i1' };
    },
  };
  return { client, calls, heartbeats: () => heartbeatCount };
}

/** A port "scanner" scripted by the lease's options.behaviour. */
function byScanId(): Scanner {
  return {
    kind: 'port',
    tool: { name: 'scripted', version: '1' },
    async run(task) {
      const behaviour = (task.options.behaviour as Behaviour | undefined) ?? 'ok';
      task.progress(0, 'start');
      if (behaviour === 'fail') throw new ScannerError('resolver timed out', true);
      if (behaviour === 'block' || behaviour === 'progress-lost') {
        task.progress(10, 'working');
        await abortableSleep(60_000, task.signal);
      }
      if (behaviour === 'slow-ok') await abortableSleep(50, task.signal);
      return {
        findings: [
          {
            ruleId: 'port.open.tcp.22',
            title: 'Open port 22/tcp (ssh)',
            severity: 'info',
            location: { host: '127.0.0.1', port: 22, protocol: 'tcp' },
          },
        ],
      };
    },
  };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (cond()) return;
    await abortableSleep(10);
  }
  throw new Error(`Timed out waiting for ${what}`);
}

function leaseWith(id: string, behaviour: Behaviour): Lease {
  return { ...lease(id), options: { behaviour } };
}

describe('worker agent', () => {
  it('leases only its kinds, runs a scan, reports progress and uploads a native report', async () => {
    const { client, calls } = fakeServer([leaseWith('s1', 'ok')]);
    const agent = createAgent({ client, scanners: [byScanId()], leaseWaitSeconds: 0 });
    const done = agent.start();
    await until(() => calls.uploads.length === 1, 'the upload');
    await agent.stop();
    await done;
    expect(calls.leaseKinds[0]).toEqual(['port']);
    expect(calls.progress[0]).toEqual({ scanId: 's1', percent: 0 });
    const up = calls.uploads[0]!;
    expect(up.sha256).toBe(up.bytesHash);
    expect(up.text.split('\n')[0]).toContain('"type":"report"');
    expect(up.text).toContain('"ruleId":"port.open.tcp.22"');
    expect(calls.fails).toEqual([]);
    expect(calls.releases).toEqual([]);
    expect(agent.stats).toMatchObject({ leased: 1, uploaded: 1 });
  });

  it('fetches the uploaded archive of an archive:sha256 container asset for the scanner and removes it afterwards', async () => {
    const archiveLease: Lease = {
      ...lease('c1'),
      kind: 'container',
      asset: { id: 'a2', kind: 'container_image', target: `archive:sha256:${'a'.repeat(64)}`, name: 'img' },
    };
    const { client, calls } = fakeServer([archiveLease]);
    let seen: { file?: string | undefined; text?: string } = {};
    const container: Scanner = {
      kind: 'container',
      tool: { name: 'scripted', version: '1' },
      async run(task) {
        seen = { file: task.localFile, ...(task.localFile ? { text: readFileSync(task.localFile, 'utf8') } : {}) };
        return { findings: [] };
      },
    };
    const agent = createAgent({ client, scanners: [container], leaseWaitSeconds: 0 });
    const done = agent.start();
    await until(() => calls.uploads.length === 1, 'the upload');
    await agent.stop();
    await done;
    expect(calls.downloads).toEqual([{ scanId: 'c1', dest: seen.file }]);
    expect(seen.text).toBe('archive bytes');
    expect(existsSync(seen.file!)).toBe(false);
  });

  it('reports a scanner error with fail, retryable when the error is transient', async () => {
    const { client, calls } = fakeServer([leaseWith('s2', 'fail')]);
    const agent = createAgent({ client, scanners: [byScanId()], leaseWaitSeconds: 0 });
    const done = agent.start();
    await until(() => calls.fails.length === 1, 'the failure');
    await agent.stop();
    await done;
    expect(calls.fails[0]).toEqual({ scanId: 's2', error: 'resolver timed out', retryable: true });
    expect(calls.uploads).toEqual([]);
  });

  it('drops a scan the heartbeat reports cancelled: no upload, no fail', async () => {
    const { client, calls } = fakeServer([leaseWith('s3', 'block')], { heartbeatStates: { s3: 'cancelled' } });
    const agent = createAgent({ client, scanners: [byScanId()], leaseWaitSeconds: 0, heartbeatSeconds: 0.02 });
    const done = agent.start();
    await until(() => agent.stats.dropped === 1 && agent.held().length === 0, 'the drop');
    await agent.stop();
    await done;
    expect(calls.heartbeats.some((h) => h.some((l) => l.scanId === 's3' && l.leaseToken === 'tok-s3'))).toBe(true);
    expect(calls.uploads).toEqual([]);
    expect(calls.fails).toEqual([]);
    expect(calls.releases).toEqual([]);
  });

  it('drops a scan when a progress write answers 409 lease_lost', async () => {
    const { client, calls } = fakeServer([leaseWith('progress-lost', 'progress-lost')]);
    const agent = createAgent({ client, scanners: [byScanId()], leaseWaitSeconds: 0, progressIntervalMs: 0 });
    const done = agent.start();
    await until(() => agent.stats.dropped === 1 && agent.held().length === 0, 'the drop');
    await agent.stop();
    await done;
    expect(calls.uploads).toEqual([]);
    expect(calls.fails).toEqual([]);
  });

  it('stops gracefully: a scan that finishes in the grace period uploads, one that does not is released, nothing new is leased', async () => {
    const { client, calls } = fakeServer([leaseWith('quick', 'slow-ok'), leaseWith('stuck', 'block')]);
    const agent = createAgent({ client, scanners: [byScanId()], concurrency: 2, leaseWaitSeconds: 0, graceMs: 300 });
    const done = agent.start();
    await until(() => agent.held().length === 2, 'both scans to start');
    const leaseCalls = calls.leaseKinds.length;
    await agent.stop();
    await done;
    expect(calls.uploads.map((u) => u.scanId)).toEqual(['quick']);
    expect(calls.releases).toEqual(['stuck']);
    expect(calls.fails).toEqual([]);
    expect(calls.leaseKinds.length).toBe(leaseCalls);
    expect(agent.held()).toEqual([]);
  });

  it('stops with the error when the server refuses its credentials', async () => {
    const { client } = fakeServer([], { leaseError: new WorkerApiError(401, 'worker_unauthorized', 'revoked') });
    const agent = createAgent({ client, scanners: [byScanId()], leaseWaitSeconds: 0 });
    await expect(agent.start()).rejects.toMatchObject({ code: 'worker_unauthorized' });
  });

  it('stops when its signal is aborted', async () => {
    const { client, calls } = fakeServer([]);
    const controller = new AbortController();
    const agent = createAgent({ client, scanners: [byScanId()], leaseWaitSeconds: 0, signal: controller.signal });
    const done = agent.start();
    await until(() => calls.leaseKinds.length > 0, 'a lease request');
    controller.abort();
    await done;
    expect(agent.held()).toEqual([]);
  });
});
