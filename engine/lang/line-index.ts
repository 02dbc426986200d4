/**
 * Offset → line/column for one file's text, built once and queried by binary search.
 *
 * Spans are UTF-16 offsets (ast.ts). Lines are 1-based and split on LF only (a CR before the LF
 * belongs to the line break, never to the shown text). Columns are 1-based and count characters
 * (code points, so an emoji is one column; a tab is one column), which is what an editor's
 * "go to line:column" expects.
 */

export interface Position {
  line: number;
  column: number;
}

export class LineIndex {
  /** UTF-16 offset at which each line starts; `starts[0]` is 0, or 1 past a byte-order mark (which no editor counts as a column). */
  private readonly starts: number[];

  constructor(readonly text: string) {
    const starts = [text.charCodeAt(0) === 0xfeff ? 1 : 0];
    let from = 0;
    for (;;) {
      const nl = text.indexOf('\n', from);
      if (nl < 0) break;
      starts.push(nl + 1);
      from = nl + 1;
    }
    this.starts = starts;
  }

  get lineCount(): number {
    return this.starts.length;
  }

  /** Offsets past the end are clamped to the end of the text, negative ones to 0. */
  position(offset: number): Position {
    const at = this.clamp(offset);
    const line = this.lineOf(at);
    const start = this.starts[line - 1]!;
    return { line, column: codePointCount(this.text, start, at) + 1 };
  }

  /** 1-based line number holding `offset`. */
  lineOf(offset: number): number {
    const at = this.clamp(offset);
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.starts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  /** Offset of the first character of a 1-based line. */
  lineStart(line: number): number {
    return this.starts[Math.min(Math.max(line, 1), this.starts.length) - 1]!;
  }

  /** Offset just past the last shown character of a line (before its CR LF / LF). */
  lineEnd(line: number): number {
    const next = line < this.starts.length ? this.starts[line]! - 1 : this.text.length;
    const start = this.lineStart(line);
    return next > start && this.text.charCodeAt(next - 1) === 13 ? next - 1 : next;
  }

  /** The text of a 1-based line without its line break. */
  lineText(line: number): string {
    return this.text.slice(this.lineStart(line), this.lineEnd(line));
  }

  private clamp(offset: number): number {
    if (!(offset > 0)) return 0;
    return offset > this.text.length ? this.text.length : offset;
  }
}

/** Number of code points in `text[from, to)`: a surrogate pair counts once. */
export function codePointCount(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one character; skip the low half.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}
