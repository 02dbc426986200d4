/**
 * Where the crash lab's proxy forwards each source: a `--source` override first, then the
 * mission's own `base`; a bad URL or a source with neither is refused, naming the source.
 */
import { describe, expect, it } from 'vitest';
import { declaredSources, labUpstreams } from '../../engine/server/lab-upstreams.js';

const files = (text: string) => ({ entry: '/m/mission.vague', files: [{ path: '/m/mission.vague', text }] });
const TWO = `mission Two {
  source Ledger { auth: none, base: "http://127.0.0.1:9/v1" }
  source Spec from "missing.yaml" { auth: none }
  store s: memory("s")
  action A { get "/x" }
  run A
}
`;

describe('crash lab upstreams', () => {
  it("reads each source's declared base, null where the mission gives none", () => {
    expect(declaredSources(files(TWO))).toEqual({ Ledger: 'http://127.0.0.1:9/v1', Spec: null });
  });

  it('prefers the --source override and refuses a source it cannot reach', () => {
    expect(labUpstreams(files(TWO), { Spec: 'http://127.0.0.1:7', Ledger: 'http://127.0.0.1:8' })).toEqual({ Ledger: 'http://127.0.0.1:8', Spec: 'http://127.0.0.1:7' });
    expect(() => labUpstreams(files(TWO), {})).toThrow('crash lab: source Spec declares no base URL; give Spec=URL in Sources');
    expect(() => labUpstreams(files(TWO), { Spec: 'not a url' })).toThrow('crash lab: source Spec: "not a url" is not a URL (expected NAME=http://host:port/…)');
  });
});
