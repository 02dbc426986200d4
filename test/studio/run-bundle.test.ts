/** What a run bundle keeps of a run's options (engine/executor/run-bundle.ts `withoutSecrets`). */
import { describe, expect, it } from 'vitest';
import { withoutSecrets } from '../../engine/executor/run-bundle.js';
import { digestCredentials } from '../../engine/http/given-credentials.js';

describe('withoutSecrets', () => {
  it('drops the auth file and redacts credential-named env values and URL parameters, keeping the rest', () => {
    const kept = withoutSecrets({
      sources: { Api: 'https://api.example.com/v1?api_key=K-123&region=eu', Other: 'https://u:pw-9@other.example.com/', Plain: 'not a url' },
      env: { API_TOKEN: 't-1', DB_PASSWORD: 'p-2', client_secret: 's-3', REGION: 'eu', EMPTY: '' },
      authFile: '/home/me/auth.json',
    });
    expect(kept).toEqual({
      sources: { Api: 'https://api.example.com/v1?api_key=%5Bredacted%5D&region=eu', Other: 'https://u:%5Bredacted%5D@other.example.com/', Plain: 'not a url' },
      env: { API_TOKEN: '[redacted]', DB_PASSWORD: '[redacted]', client_secret: '[redacted]', REGION: 'eu', EMPTY: '' },
    });
    expect(JSON.stringify(kept)).not.toMatch(/K-123|pw-9|t-1|p-2|s-3|auth\.json/);
  });

  it('redacts a setting of any name whose value is a credential the run was given (its digests name it)', () => {
    // Helper 57: `--env PAT=<the --auth token>` was exported in clear.
    const digests = [digestCredentials(['tok-given-0123456789'], 'salt-1')!];
    const kept = withoutSecrets({ sources: {}, env: { PAT: 'tok-given-0123456789', REGION: 'eu', SHORT: 'tok' } }, digests);
    expect(kept.env).toEqual({ PAT: '[redacted]', REGION: 'eu', SHORT: 'tok' });
    expect(withoutSecrets({ sources: {}, env: { PAT: 'tok-given-0123456789' } }).env).toEqual({ PAT: 'tok-given-0123456789' });
  });
});
