/**
 * Renders diagnostics as text — the one formatter used by the CLI, the tests and the studio:
 *
 *   h1.vague:12:35: error[E2003]: Expected ")" but found ","
 *      12 |     get "/x" { paginate: offset(a,, 2) }
 *         |                                   ^
 *      = help: did you mean `invoices`?
 *
 * Pure functions of (diagnostic, file text). The caret is as wide as the span (at least one
 * column) and clipped at the end of the span's first line. Tabs before the caret are copied into
 * the caret line so it stays aligned in any terminal.
 */
import { codePointCount, LineIndex } from './line-index.js';
import type { Diagnostic } from './diagnostics.js';
import { BIDI_CONTROL } from './lexer.js';

/**
 * What an excerpt shows as one U+FFFD: a bidi control (it would reorder the line on screen) and
 * the C0 and C1 controls but the tab (the caret line copies tabs to stay aligned) — a terminal's
 * output escapes them into several columns, or they go out raw (a NUL).
 */
const UNSHOWABLE = new RegExp(`${BIDI_CONTROL.source}|[\\u0000-\\u0008\\u000a-\\u001f\\u007f-\\u009f]`, 'g');

/** Texts of the files diagnostics point into, keyed by the `file` they carry. */
export type TextsByFile = ReadonlyMap<string, string> | Readonly<Record<string, string>>;

export function formatDiagnostic(d: Diagnostic, text: string | undefined, index?: LineIndex): string {
  if (text === undefined) {
    return withHelp(`${d.file}: ${d.severity}[${d.code}]: ${d.message}`, d);
  }
  const lines = index ?? new LineIndex(text);
  const { line, column } = lines.position(d.span.start);
  const header = `${d.file}:${line}:${column}: ${d.severity}[${d.code}]: ${d.message}`;

  const lineStart = lines.lineStart(line);
  const lineEnd = lines.lineEnd(line);
  const start = Math.min(Math.max(d.span.start, lineStart), lineEnd);
  // A long line (a minified file, one huge string) is shown as a window around the span: the
  // whole of a 5 MB line went to the terminal for every diagnostic on it.
  let from = lineStart;
  let to = lineEnd;
  if (lineEnd - lineStart > MAX_EXCERPT) {
    from = notInsidePair(text, Math.max(lineStart, start - EXCERPT_BEFORE));
    to = notInsidePair(text, Math.min(lineEnd, from + MAX_EXCERPT));
  }
  const end = Math.min(Math.max(d.span.end, start), to);
  const before = from > lineStart ? '…' : '';
  const after = to < lineEnd ? '…' : '';
  // One visible character in the column of each that cannot be shown: the caret stays under what it points at.
  const source = text.slice(from, to).replace(UNSHOWABLE, '\uFFFD');
  const width = Math.max(1, codePointCount(text, start, end));
  const pad = (before ? ' ' : '') + caretPadding(text, from, start);

  const number = String(line);
  const gutter = ' '.repeat(3 + number.length + 1);
  const out = `${header}\n   ${number} | ${before}${source}${after}\n${gutter}| ${pad}${'^'.repeat(width)}`;
  return withHelp(out, d);
}

/** Lines longer than this (UTF-16 units) are shown as a window of it, from EXCERPT_BEFORE before the span. */
const MAX_EXCERPT = 200;
const EXCERPT_BEFORE = 80;

/** `i`, or one before it if it would split a surrogate pair. */
function notInsidePair(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return i > 0 && c >= 0xdc00 && c <= 0xdfff ? i - 1 : i;
}

/**
 * Renders many diagnostics in the order given, one block each, separated by blank lines; the
 * result ends with a newline unless there is nothing to say. Each file's line index is built once.
 */
export function formatDiagnostics(ds: readonly Diagnostic[], textsByFile: TextsByFile): string {
  const indexes = new Map<string, LineIndex>();
  const blocks: string[] = [];
  for (const d of ds) {
    const text = textOf(textsByFile, d.file);
    let index: LineIndex | undefined;
    if (text !== undefined) {
      index = indexes.get(d.file);
      if (!index) {
        index = new LineIndex(text);
        indexes.set(d.file, index);
      }
    }
    blocks.push(formatDiagnostic(d, text, index));
  }
  return blocks.length === 0 ? '' : `${blocks.join('\n\n')}\n`;
}

/** "2 errors, 1 warning"; "no errors" when clean; warnings are named only when there are some. */
export function summarize(ds: readonly Diagnostic[]): string {
  let errors = 0;
  let warnings = 0;
  for (const d of ds) {
    if (d.severity === 'error') errors++;
    else warnings++;
  }
  const e = errors === 0 ? 'no errors' : plural(errors, 'error');
  return warnings === 0 ? e : `${e}, ${plural(warnings, 'warning')}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function withHelp(out: string, d: Diagnostic): string {
  return d.help ? `${out}\n   = help: ${d.help}` : out;
}

function textOf(texts: TextsByFile, file: string): string | undefined {
  if (texts instanceof Map) return texts.get(file);
  const record = texts as Readonly<Record<string, string>>;
  return Object.prototype.hasOwnProperty.call(record, file) ? record[file] : undefined;
}

/** Spaces (tabs kept as tabs) covering the characters of the line before the caret. */
function caretPadding(text: string, from: number, to: number): string {
  let pad = '';
  let spaces = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 9) {
      pad += ' '.repeat(spaces) + '\t';
      spaces = 0;
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff && i > from) {
      const h = text.charCodeAt(i - 1);
      if (h >= 0xd800 && h <= 0xdbff) continue; // low half of a pair already counted
    }
    spaces++;
  }
  return pad + ' '.repeat(spaces);
}
