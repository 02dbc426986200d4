/**
 * The Link response header (RFC 8288), as far as pagination reads it: GitHub and others name the
 * next page there (`Link: <…?page=2>; rel="next", <…?page=9>; rel="last"`) instead of in the body.
 */

/** The target of the `rel="next"` link of a Link header (RFC 8288), if it names one. */
export function linkHeaderNext(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const link of header.split(/,(?=\s*<)/)) {
    const target = /^\s*<([^>]*)>/.exec(link);
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(link);
    const rels = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (target && rels.includes('next')) return target[1];
  }
  return undefined;
}
