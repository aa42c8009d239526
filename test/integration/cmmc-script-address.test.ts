// Device-check scripts whose address (PUBLIC_BASE_URL) the company's laptops cannot reach: the
// scripts' header comment says so (the API answer's baseUrlWarning, shown by the Device check tab,
// is checked in cmmc-script-syntax.test.ts for an address that needs none). No database.
import { describe, expect, it } from 'vitest';
import { baseUrlWarning, generateMacScript, generateWindowsScript } from '../../src/cmmc/index.ts';

describe('script address warnings', () => {
  it('classifies loopback, private and local-only addresses, and leaves public ones alone', () => {
    for (const u of ['http://localhost:3000', 'http://127.0.0.1', 'http://[::1]:8080', 'http://app.localhost'])
      expect(baseUrlWarning(u), u).toMatch(/a loopback address/);
    for (const u of ['http://10.1.2.3', 'https://172.20.0.5', 'http://192.168.1.10:3000', 'http://[fd00::1]'])
      expect(baseUrlWarning(u), u).toMatch(/a private network address/);
    for (const u of ['http://rampart', 'http://server.local']) expect(baseUrlWarning(u), u).toMatch(/local network/);
    for (const u of ['https://rampart.example.com', 'https://8.8.8.8', 'http://172.32.0.1'])
      expect(baseUrlWarning(u), u).toBeNull();
  });

  it('writes the warning into the header comment of both scripts (the API answers it as baseUrlWarning)', () => {
    const baseUrl = 'http://localhost:3000';
    const warning = baseUrlWarning(baseUrl);
    expect(warning).toMatch(/^The scripts send their results to http:\/\/localhost:3000, a loopback/);
    const input = { token: 'rcd_test', baseUrl, generatedAt: new Date(), cageCode: '1AB23', warning };
    for (const content of [generateWindowsScript(input), generateMacScript(input)]) {
      const header = content.split('\n').slice(0, 12).join('\n');
      expect(header).toContain('# WARNING: The scripts send their results to http://localhost:3000, a loopback');
      expect(header).toContain("#   this server can reach it, not the company's computers.");
    }
    const plain = generateMacScript({ ...input, warning: null });
    expect(plain).not.toContain('# WARNING');
  });
});
