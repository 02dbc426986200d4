/**
 * Where each source of a mission really is: the base URL a crash lab's proxy forwards to, and what
 * the crash lab offers to prefill. A `--source NAME=URL` override wins over the mission's own
 * `base`; a source with neither cannot be reached, and the lab refuses to start, naming it.
 */
import path from 'node:path';
import { loadMissionFromFiles } from '../lang/loader.js';
import type { MissionFiles } from '../log/log.js';
import { StudioError } from './studio-error.js';

/** Each source the mission declares → its declared base URL, or null when it declares none. */
export function declaredSources(files: MissionFiles): Record<string, string | null> {
  const ordered = [...files.files].sort((a, b) => (a.path === files.entry ? -1 : b.path === files.entry ? 1 : 0));
  const { unit } = loadMissionFromFiles(ordered, path.dirname(files.entry));
  const out: Record<string, string | null> = {};
  for (const source of unit?.mission?.sources ?? []) out[source.name.name] = source.base?.value ?? null;
  return out;
}

/** Source name → real base URL for a lab's runs: overrides first, then the mission's own base. */
export function labUpstreams(files: MissionFiles, overrides: Record<string, string>): Record<string, string> {
  const declared = declaredSources(files);
  const out: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, base] of Object.entries(declared)) {
    const url = overrides[name] ?? base;
    if (url === null || url === undefined) missing.push(name);
    else out[name] = url;
  }
  if (missing.length > 0) {
    throw new StudioError('bad-request', `crash lab: source${missing.length > 1 ? 's' : ''} ${missing.join(', ')} declare${missing.length > 1 ? '' : 's'} no base URL; give ${missing.map((m) => `${m}=URL`).join(', ')} in Sources`);
  }
  for (const [name, url] of Object.entries(out)) {
    try {
      new URL(url);
    } catch {
      throw new StudioError('bad-request', `crash lab: source ${name}: "${url}" is not a URL (expected NAME=http://host:port/…)`);
    }
  }
  return out;
}
