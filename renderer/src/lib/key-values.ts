/**
 * `NAME=VALUE` lines (the studio's form of the CLI's repeated `--env K=V` / `--source NAME=URL`).
 */
/** Parses "K=V" lines into a map; blank lines are ignored, anything else is an error. */
export function parseKeyValues(text: string, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`${what} line ${i + 1}: expected NAME=VALUE but found "${line}"`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  });
  return out;
}
