/** The one Chromium lookup of the e2e suite and the paint bench (test/support/chromium.ts). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { locateChromium } from './chromium.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('locateChromium', () => {
  it('takes the binary $REQON_CHROMIUM names', () => {
    vi.stubEnv('REQON_CHROMIUM', process.execPath);
    expect(locateChromium()).toEqual({ path: process.execPath });
  });

  it('says which named binary is missing instead of quietly using another', () => {
    vi.stubEnv('REQON_CHROMIUM', '');
    vi.stubEnv('CHROMIUM_PATH', '/nonexistent/chromium');
    expect(locateChromium()).toEqual({ missing: expect.stringContaining('does not exist: /nonexistent/chromium') as string });
  });
});
