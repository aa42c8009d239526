import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, peerEnvSuffix } from './config.ts';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 3000,
      DATA_DIR: './.data',
      PUBLIC_BASE_URL: 'http://localhost:3000',
      SVC_SELF_NAME: 'rampart',
      EMBEDDED_WORKER: true,
      embedded: true,
      STAFF_EMAIL_DOMAINS: [],
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('names every invalid variable', () => {
    try {
      loadConfig({
        PORT: 'abc',
        DATABASE_URL: 'mysql://x',
        APP_ENCRYPTION_KEY: 'short',
        SVC_PEER_URL_BID: 'not a url',
      });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const msg = (e as Error).message;
      for (const name of ['PORT', 'DATABASE_URL', 'APP_ENCRYPTION_KEY', 'SVC_PEER_URL_BID'])
        expect(msg).toContain(name);
    }
  });

  it('takes the embedded database page cache as a PostgreSQL size from 1MB to 4GB', () => {
    expect(loadConfig({}).PGLITE_SHARED_BUFFERS).toBe('16MB');
    expect(loadConfig({ PGLITE_SHARED_BUFFERS: ' 256MB ' }).PGLITE_SHARED_BUFFERS).toBe('256MB');
    expect(loadConfig({ PGLITE_SHARED_BUFFERS: '2048kB' }).PGLITE_SHARED_BUFFERS).toBe('2048kB');
    for (const bad of ['16', '16mb', '512kB', '5GB', '0MB', '16MB; drop table x', '-1MB']) {
      expect(() => loadConfig({ PGLITE_SHARED_BUFFERS: bad }), bad).toThrow(/PGLITE_SHARED_BUFFERS/);
    }
  });

  it('treats empty strings as unset, parses booleans and domain lists', () => {
    const c = loadConfig({
      PORT: '',
      DATABASE_URL: 'postgres://u@h/db',
      EMBEDDED_WORKER: 'on',
      STAFF_EMAIL_DOMAINS: ' Rampart.io, ops.rampart.io ,',
    });
    expect(c).toMatchObject({
      PORT: 3000,
      embedded: false,
      EMBEDDED_WORKER: true,
      STAFF_EMAIL_DOMAINS: ['rampart.io', 'ops.rampart.io'],
    });
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@h/db' }).EMBEDDED_WORKER).toBe(false);
  });

  it('collects mesh peers from their env entries', () => {
    const c = loadConfig({
      SVC_PEER_URL_BID_PORTAL: 'https://bid.example',
      SVC_SECRET_TO_BID_PORTAL: 's1',
      SVC_PEER_FLOWS_BID_PORTAL: 'ping, event_report',
      SVC_PEER_FLOWS_LONELY: 'ping',
    });
    expect(c.peers).toEqual({
      BID_PORTAL: { suffix: 'BID_PORTAL', url: 'https://bid.example', secretTo: 's1', flows: ['ping', 'event_report'] },
    });
    expect(peerEnvSuffix('bid-portal')).toBe('BID_PORTAL');
    expect(peerEnvSuffix('mgmt.v2')).toBe('MGMT_V2');
  });
});
