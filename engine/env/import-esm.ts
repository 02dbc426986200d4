/**
 * `import()` of what stays outside the CLI bundle: an external package (undici) or a file by its
 * URL (the demo API asset).
 *
 * The bundle runs as a `vm.Script` compiled from a V8 code cache (cli/cli-bundle.ts), and on
 * Node 20 such a script's own `import()` has no loader ("A dynamic import callback was not
 * specified"). So the bundle's runner, a real ES module, hands in its `import()` under
 * IMPORT_HOOK; outside the bundle this is plain `import()`.
 */
export const IMPORT_HOOK = Symbol.for('reqon.importEsm');

export function importEsm<T>(specifier: string): Promise<T> {
  const hook = (globalThis as Record<symbol, unknown>)[IMPORT_HOOK] as ((s: string) => Promise<unknown>) | undefined;
  return (hook === undefined ? import(specifier) : hook(specifier)) as Promise<T>;
}
