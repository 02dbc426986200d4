/**
 * Shared state of one `checkMission` pass: the declared names of the mission, and a diagnostic
 * collector that keeps one DiagnosticBag per file (a folder mission's actions report into their
 * own files), so no two diagnostics land at the same offset of the same file.
 */
import type { ActionDecl, MissionDecl, Name, OptionSpans, Span } from './ast.js';
import { optionSpan } from './ast.js';
import type { DiagnosticCode } from './codes.js';
import { DiagnosticBag, type Diagnostic } from './diagnostics.js';
import { LineIndex } from './line-index.js';
import type { MissionUnit } from './mission-unit.js';
import { didYouMean } from './suggest.js';

export type NamedDecl = { name: Name; start: number; end: number };

export class CheckContext {
  readonly sources = new Map<string, MissionDecl['sources'][number]>();
  readonly stores = new Map<string, MissionDecl['stores'][number]>();
  readonly schemas = new Map<string, MissionDecl['schemas'][number]>();
  readonly transforms = new Map<string, MissionDecl['transforms'][number]>();
  readonly actions = new Map<string, ActionDecl>();
  /** The variables of the `for` loops around the step being checked, innermost last. */
  readonly loopVariables: string[] = [];

  private readonly bags = new Map<string, DiagnosticBag>();
  private readonly order: DiagnosticBag[] = [];
  private readonly indexes = new Map<string, LineIndex>();

  /**
   * True while checking a file that is a folder mission's part (only actions and transforms, no
   * mission): the stores, sources, schemas and actions it names are declared elsewhere, so an
   * unknown name is not a finding here; checking the folder resolves them.
   */
  part = false;

  constructor(readonly unit: MissionUnit) {}

  get rootFile(): string {
    return this.unit.root.file;
  }

  report(file: string, code: DiagnosticCode, span: Span, message: string, help?: string): void {
    let bag = this.bags.get(file);
    if (!bag) {
      bag = new DiagnosticBag(file);
      this.bags.set(file, bag);
      this.order.push(bag);
    }
    bag.error(code, span, message, help);
  }

  /** Reports `name` as unknown among `candidates`, with a suggestion when one is close. */
  unknown(file: string, code: DiagnosticCode, what: string, name: Name, candidates: Iterable<string>): void {
    if (this.part) return;
    this.report(file, code, name, `Unknown ${what} \`${name.name}\``, this.nameHelp(what, name, candidates));
  }

  /** "did you mean …?" when a candidate is close, else what is declared. */
  nameHelp(what: string, name: Name, candidates: Iterable<string>): string | undefined {
    const names = [...candidates];
    return didYouMean(name.name, names) ?? noneDeclared(what, names);
  }

  diagnostics(): Diagnostic[] {
    return this.order.flatMap((bag) => bag.items);
  }

  /** "line 4" in the same file, "actions.vague:4" in another; used in help texts. */
  where(file: string, offset: number, fromFile: string): string {
    const line = this.index(file)?.lineOf(offset);
    if (line === undefined) return file === fromFile ? 'earlier' : `in ${file}`;
    return file === fromFile ? `at line ${line}` : `at ${file}:${line}`;
  }

  /**
   * The span of the first occurrence of `word` inside `within`, for values the AST keeps without
   * a span of their own (`for … concurrency N`); falls back to `within`.
   */
  findWord(file: string, within: Span, word: string): Span {
    const text = this.text(file);
    if (text === undefined) return within;
    const at = text.indexOf(word, within.start);
    return at < 0 || at + word.length > within.end ? within : { start: at, end: at + word.length };
  }

  /**
   * The span of the value written after an option key (`maxAttempts: 0` → `0`), so a value
   * finding points where the parser would; falls back to the key's span.
   */
  valueAfter(file: string, key: Span): Span {
    const text = this.text(file);
    if (text === undefined) return key;
    let i = key.end;
    while (i < text.length && isBlank(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) === 58 /* : */) i++;
    while (i < text.length && isBlank(text.charCodeAt(i))) i++;
    const start = i;
    if (text.charCodeAt(i) === 34 /* " */) {
      const close = text.indexOf('"', i + 1);
      i = close < 0 ? text.length : close + 1;
    } else {
      while (i < text.length && !ENDS_VALUE.has(text.charCodeAt(i))) i++;
    }
    return i > start ? { start, end: i } : key;
  }

  /** Where the value of option `key` is written, when the block recorded the key; else `fallback`. */
  optionValue(file: string, spans: Readonly<OptionSpans> | undefined, key: string, fallback: Span): Span {
    const keySpan = optionSpan(spans, key);
    return keySpan ? this.valueAfter(file, keySpan) : fallback;
  }

  /** `valueAfter` for a keyword found inside `within` (`concurrency 0`, `size: 0`). */
  valueOf(file: string, within: Span, keyword: string): Span {
    const key = this.findWord(file, within, keyword);
    return key === within ? within : this.valueAfter(file, key);
  }

  /** The span of the word starting at `offset` (at least one character). */
  wordAt(file: string, offset: number): Span {
    const text = this.text(file) ?? '';
    let end = offset;
    while (end < text.length && /[A-Za-z0-9_]/.test(text[end]!)) end++;
    return { start: offset, end: Math.max(end, offset + 1) };
  }

  /** The source text of `span`, as written (for messages that quote an expression). */
  sourceOf(file: string, span: Span): string {
    return this.text(file)?.slice(span.start, span.end) ?? '';
  }

  private text(file: string): string | undefined {
    return this.unit.files.find((f) => f.path === file)?.text;
  }

  /** Built on first use only: most checks never need a line number. */
  private index(file: string): LineIndex | undefined {
    let index = this.indexes.get(file);
    if (!index) {
      const text = this.text(file);
      if (text === undefined) return undefined;
      index = new LineIndex(text);
      this.indexes.set(file, index);
    }
    return index;
  }
}

const ENDS_VALUE = new Set([32, 9, 10, 13, 44, 125, 93, 41]); // space tab LF CR , } ] )

function isBlank(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** Without a close match, a short list of what is declared helps more than nothing. */
function noneDeclared(what: string, names: readonly string[]): string | undefined {
  if (names.length === 0) return `the mission declares no ${what}s`;
  if (names.length > 5) return undefined;
  return `declared ${what}s: ${names.map((n) => `\`${n}\``).join(', ')}`;
}
