/**
 * Which log backends the tests run against: `$REQON_TEST_BACKENDS` (a comma list of sqlite,
 * postgres), by default both. Read by the global setup (whether to start PostgreSQL) and by
 * temp-log.ts.
 */
export type Backend = 'sqlite' | 'postgres';

const KNOWN: readonly Backend[] = ['sqlite', 'postgres'];

export function requestedBackends(): Backend[] {
  const raw = process.env['REQON_TEST_BACKENDS'];
  if (raw === undefined || raw.trim() === '') return [...KNOWN];
  const names = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const name of names) {
    if (!KNOWN.includes(name as Backend)) throw new Error(`REQON_TEST_BACKENDS: unknown backend '${name}'; expected a comma list of ${KNOWN.join(', ')}`);
  }
  return names as Backend[];
}

/** True when the backends were named explicitly (a missing PostgreSQL is then an error, not a skip). */
export function backendsExplicit(): boolean {
  return (process.env['REQON_TEST_BACKENDS'] ?? '').trim() !== '';
}
