/**
 * The parser's cursor, error reporting and recovery — shared by the declaration, step, option and
 * expression parsers (parser-*.ts), which are plain functions over one `Parser`.
 *
 * Tokens are read by index from the lexer's TokenStream (token.ts): grammar functions hold token
 * indexes, ask for a token's kind, text or offsets, and allocate a `Span` only when an AST node
 * keeps one — so parsing allocates the tree and little else.
 *
 * Recovery model: a grammar rule that meets a token it cannot use reports one diagnostic and throws
 * `ABORT`. Only block loops (`parseBlock`: files, missions, actions, option blocks, field blocks,
 * match arms) catch it: they rewind to the start of the failed item and skip it — jumping over
 * bracketed groups using the bracket-match table the lexer built, never past the block's own
 * closing brace — up to the next token that can start an item. So an error never escapes its
 * block, one typo gives one error, and every loop consumes at least one token per iteration (no
 * hangs).
 *
 * One literal per node: the tree outlives the parse, so V8 learns (allocation-site pretenuring)
 * to create each node-making literal's objects in the old generation, where no scavenge copies
 * them. That holds only while (1) a literal makes only objects the tree keeps — a temporary made
 * by the same literal as kept nodes (a span for an error and for the tree, a Ref later dropped)
 * stops it for all of them — and (2) a node gets no property after its literal: one added later
 * goes into a separate young property array that every scavenge copies. So nodes with optional
 * fields are made once their parts are parsed, optional fields in the literal as `undefined`
 * when absent (JSON, and so the goldens, leave them out), and option blocks fill targets whose
 * literal lists every option. Measured on the 4.2 MB bench mission: the scavenges of one load
 * copied 23 MB before these rules, 10 MB after the first two fixes.
 */
import type { Name, Span, StringLiteral } from './ast.js';
import type { DiagnosticBag } from './diagnostics.js';
import type { DiagnosticCode } from './codes.js';
import { editDistance, suggest } from './suggest.js';
import { describeToken, KIND, KIND_NAMES, type TokenKind, type TokenStream } from './token.js';

/** Thrown (never escapes the parser) to unwind to the nearest block loop. */
export const ABORT: unique symbol = Symbol('parse-abort');

/** Deepest nesting of expressions and blocks; deeper input gets one E2012 and is skipped. */
export const MAX_DEPTH = 200;

const WORD = KIND.Word;
const STRING = KIND.String;
const EOF = KIND.EOF;
const COMMA = KIND[','];
const COLON = KIND[':'];
const R_BRACE = KIND['}'];
const R_PAREN = KIND[')'];
const R_BRACKET = KIND[']'];

/** How the items of one kind of list are parsed, and found again after an error. */
export interface ItemRules<S> {
  /** Parses one item; `state` is what the caller passed along. */
  item(p: Parser, state: S): void;
  /** Token `i` can begin an item (to resynchronise after an error). */
  isItemStart(p: Parser, i: number): boolean;
}

/** The rules of one kind of `{ … }` block. */
export interface BlockRules<S> extends ItemRules<S> {
  /** Names the block in messages ("action `Load`"); asked only when a message needs it. */
  describe(state: S): string;
  /**
   * Stops the block early at word token `t` without consuming it (e.g. an action body meeting
   * `action`, which means its `}` is missing); reports its own error.
   */
  leaveOn?(p: Parser, t: number, state: S): boolean;
}

export class Parser {
  /** Index of the current token. */
  pos = 0;
  depth = 0;
  /**
   * Set just before parsing an expression that a `where` of its own construct follows
   * (`for x in coll where …`, a match-expression pattern, `any of coll where …`): that
   * expression must leave the `where` alone. Nested expressions (in parentheses, arguments)
   * take `where` as a filter again.
   */
  noFilter = false;
  /**
   * One-name parts lists (`[name]`) of Ref nodes, one per distinct name, shared by every Ref of
   * it: a big mission names a few hundred variables and fields tens of thousands of times, and
   * the tree keeps each list. Frozen, since they are shared.
   */
  private readonly singleNames = new Map<string, string[]>();
  /** The list stack (see `mark`) and its height. */
  private readonly stack: unknown[] = [];
  private top = 0;
  /** Index of the EOF token (the cursor never moves past it). */
  readonly last: number;
  private readonly kinds: Uint8Array;
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;

  constructor(
    readonly tokens: TokenStream,
    readonly bag: DiagnosticBag,
    readonly file: string,
  ) {
    this.last = tokens.count - 1;
    this.kinds = tokens.kinds;
    this.starts = tokens.starts;
    this.ends = tokens.ends;
  }

  /** Kind of the current token. */
  get kind(): TokenKind {
    return KIND_NAMES[this.kinds[this.pos]!]!;
  }

  /** Start offset of the current token. */
  get start(): number {
    return this.starts[this.pos]!;
  }

  kindAt(i: number): TokenKind {
    return KIND_NAMES[this.kinds[i]!]!;
  }

  /** Kind of the token `ahead` of the cursor (EOF past the end). */
  peekKind(ahead = 1): TokenKind {
    const i = this.pos + ahead;
    return KIND_NAMES[this.kinds[i < this.last ? i : this.last]!]!;
  }

  /** Index of the token `ahead` of the cursor (EOF past the end). */
  peekIndex(ahead = 1): number {
    const i = this.pos + ahead;
    return i < this.last ? i : this.last;
  }

  /** `Token.text` of token `i` (words are interned, other texts sliced on demand). */
  textAt(i: number): string {
    return this.tokens.textOf(i);
  }

  /** `Token.value` of token `i`: the decoded contents of a string, else its text. */
  valueAt(i: number): string {
    return this.tokens.valueOf(i);
  }

  numberAt(i: number): number {
    return this.tokens.numberOf(i);
  }

  startAt(i: number): number {
    return this.starts[i]!;
  }

  endAt(i: number): number {
    return this.ends[i]!;
  }

  /** The shared, frozen `[name]` (see singleNames). */
  singleName(name: string): string[] {
    let parts = this.singleNames.get(name);
    if (parts === undefined) this.singleNames.set(name, (parts = Object.freeze([name]) as string[]));
    return parts;
  }

  /** A new span object for token `i` (for the AST node that keeps it). */
  spanAt(i: number): Span {
    return { start: this.starts[i]!, end: this.ends[i]! };
  }

  /** Token `i`'s source text contains a `.` (a decimal number); checked without slicing it. */
  hasDot(i: number): boolean {
    const text = this.tokens.text;
    const end = this.ends[i]!;
    for (let k = this.starts[i]!; k < end; k++) if (text.charCodeAt(k) === 46) return true;
    return false;
  }

  /** Token `i` is the word `word`. */
  isWord(i: number, word: string): boolean {
    return this.kinds[i] === WORD && this.tokens.textOf(i) === word;
  }

  /** End offset of the last consumed token (the end of the node being built). */
  get prevEnd(): number {
    return this.pos > 0 ? this.ends[this.pos - 1]! : 0;
  }

  span(start: number): Span {
    return { start, end: this.endFrom(start) };
  }

  /** The end of a node that began at `start`: the last consumed token's end, never before `start`. */
  endFrom(start: number): number {
    const end = this.prevEnd;
    return end > start ? end : start;
  }

  /** Consumes the current token and returns its index. */
  advance(): number {
    const t = this.pos;
    if (t < this.last) this.pos = t + 1;
    return t;
  }

  at(kind: TokenKind): boolean {
    return KIND_NAMES[this.kinds[this.pos]!] === kind;
  }

  atWord(word: string): boolean {
    return this.kinds[this.pos] === WORD && this.tokens.textOf(this.pos) === word;
  }

  eat(kind: TokenKind): boolean {
    if (KIND_NAMES[this.kinds[this.pos]!] !== kind) return false;
    this.advance();
    return true;
  }

  eatWord(word: string): boolean {
    if (!this.atWord(word)) return false;
    this.advance();
    return true;
  }

  /** Consumes a token of `kind` (returning its index) or reports `Expected "kind" but found …` and aborts. */
  expect(kind: TokenKind, help?: string): number {
    if (KIND_NAMES[this.kinds[this.pos]!] === kind) return this.advance();
    return this.fail('E2001', `"${kind}"`, help);
  }

  expectWord(word: string, help?: string): number {
    if (this.atWord(word)) return this.advance();
    return this.fail('E2001', `\`${word}\``, help);
  }

  /** Any word is a name here (contextual keywords). */
  expectName(what: string): Name {
    const t = this.expectNameToken(what);
    return { name: this.tokens.textOf(t), start: this.startAt(t), end: this.endAt(t) };
  }

  /** `expectName` for a caller that needs only the token (its index). */
  expectNameToken(what: string): number {
    const t = this.pos;
    if (this.kinds[t] !== WORD) this.fail('E2001', what);
    return this.advance();
  }

  expectString(what: string): StringLiteral {
    const t = this.pos;
    if (this.kinds[t] !== STRING) this.fail('E2001', what);
    this.advance();
    return { value: this.tokens.valueOf(t), start: this.startAt(t), end: this.endAt(t) };
  }

  /** How token `i` is named in messages (`describeToken`). */
  describe(i: number): string {
    return describeToken(this.tokens.token(i));
  }

  /** Reports `Expected <what> but found <current token>` at the current token and aborts. */
  fail(code: DiagnosticCode, what: string, help?: string): never {
    const t = this.pos;
    this.bag.error(code, this.spanAt(t), `Expected ${what} but found ${this.describe(t)}`, help);
    throw ABORT;
  }

  error(code: DiagnosticCode, span: Span, message: string, help?: string): void {
    this.bag.error(code, span, message, help);
  }

  /** Enters one nesting level (block or expression); reports E2012 once and aborts when too deep. */
  enter(): void {
    if (++this.depth > MAX_DEPTH) {
      this.bag.error('E2012', this.spanAt(this.pos), `Nesting is too deep (more than ${MAX_DEPTH} levels)`, 'split it up with `let` or separate actions');
      throw ABORT;
    }
  }

  /**
   * Parses `{ item … }`: optional commas between items, per-item recovery (see the file header).
   * `rules` (a module-level constant, so no closure is made per block) parses the items;
   * `state` is handed to its functions.
   */
  parseBlock<S>(rules: BlockRules<S>, state: S): void {
    this.expect('{');
    const open = this.pos - 1;
    const partner = this.tokens.partnerOf(open);
    const close = partner >= 0 ? partner : this.last;
    this.enter();
    for (;;) {
      const t = this.pos;
      const k = this.kinds[t];
      if (k === R_BRACE) {
        this.advance();
        break;
      }
      if (k === EOF) {
        this.bag.error('E2001', this.spanAt(t), `Expected "}" to close ${rules.describe(state)} but found end of file`);
        break;
      }
      if (k === COMMA) {
        this.advance();
        continue;
      }
      if (rules.leaveOn !== undefined && k === WORD && rules.leaveOn(this, t, state)) break;
      this.item(rules, state, close);
    }
    this.depth--;
  }

  /** Runs one item parser; on ABORT rewinds and skips the item (never past `limit`). */
  item<S>(rules: ItemRules<S>, state: S, limit: number): void {
    const start = this.pos;
    const depth = this.depth;
    const top = this.top;
    try {
      rules.item(this, state);
      if (this.pos === start) this.advance(); // an item parser that consumed nothing still moves on
    } catch (e) {
      if (e !== ABORT) throw e;
      this.depth = depth;
      this.top = top; // lists the item had begun are abandoned
      this.skipItem(start, this.pos, limit, rules);
    }
  }

  /**
   * Lists are collected on one shared stack instead of in arrays grown by `push`, which keep room
   * for about sixteen more elements (several times the size of a short list, and the AST keeps
   * tens of thousands of short lists). A list is `mark()`, `add(x)` per element, `take(mark)`:
   * an array of exactly its length. Lists nest, since an inner list is taken before the outer one
   * adds again; `item` drops the lists of an item that failed.
   */
  mark(): number {
    return this.top;
  }

  add(x: unknown): void {
    this.stack[this.top++] = x;
  }

  take<T>(mark: number): T[] {
    const s = this.stack;
    const n = this.top - mark;
    this.top = mark;
    // Short lists (nearly all of them: up to eight elements) come from array literals: V8 learns
    // that what these literals allocate lives on and creates it in the old generation directly,
    // so the young generation's collector never copies it. Arrays made by `slice` do not get that.
    switch (n) {
      case 0:
        return [];
      case 1:
        return [s[mark]] as T[];
      case 2:
        return [s[mark], s[mark + 1]] as T[];
      case 3:
        return [s[mark], s[mark + 1], s[mark + 2]] as T[];
      case 4:
        return [s[mark], s[mark + 1], s[mark + 2], s[mark + 3]] as T[];
      case 5:
        return [s[mark], s[mark + 1], s[mark + 2], s[mark + 3], s[mark + 4]] as T[];
      case 6:
        return [s[mark], s[mark + 1], s[mark + 2], s[mark + 3], s[mark + 4], s[mark + 5]] as T[];
      case 7:
        return [s[mark], s[mark + 1], s[mark + 2], s[mark + 3], s[mark + 4], s[mark + 5], s[mark + 6]] as T[];
      case 8:
        return [s[mark], s[mark + 1], s[mark + 2], s[mark + 3], s[mark + 4], s[mark + 5], s[mark + 6], s[mark + 7]] as T[];
      default:
        return s.slice(mark, mark + n) as T[];
    }
  }

  /**
   * Skips the failed item that began at `start`. Tokens before `failedAt` were accepted by the
   * grammar, so a step word among them (`let g = match …`) is not a new item; resynchronise only
   * from the failure onwards.
   */
  private skipItem<S>(start: number, failedAt: number, limit: number, rules: ItemRules<S>): void {
    let i = start;
    if (i < limit) {
      const first = this.tokens.partnerOf(i);
      i = first > i && first < limit ? first + 1 : i + 1;
    }
    while (i < limit) {
      if (i >= failedAt && (this.kinds[i] === R_BRACE || rules.isItemStart(this, i))) break;
      const partner = this.tokens.partnerOf(i);
      i = partner > i && partner < limit ? partner + 1 : i + 1;
    }
    this.pos = i;
  }

  /**
   * Skips an option value that could not be used: balanced groups are jumped, and the skip stops
   * at `,`, `}` or the next `key:` so the following option still parses.
   */
  skipValue(): void {
    let i = this.pos;
    while (i < this.last) {
      const k = this.kinds[i];
      if (k === COMMA || k === R_BRACE || k === R_PAREN || k === R_BRACKET) break;
      if (i > this.pos && k === WORD && this.kinds[i + 1] === COLON) break;
      const partner = this.tokens.partnerOf(i);
      i = partner > i ? partner + 1 : i + 1;
    }
    this.pos = i;
  }

  isWordAt(i: number, words: ReadonlySet<string>): boolean {
    return this.kinds[i] === WORD && words.has(this.tokens.textOf(i));
  }

  /** Token `i` is `word :` (the start of an option or field entry). */
  isKeyAt(i: number): boolean {
    const k = this.kinds[i];
    return (k === WORD || k === STRING) && i < this.last && this.kinds[i + 1] === COLON;
  }
}

/** "did you mean `x`?" for option keys and enumerated values: close in spelling, or a prefix. */
export function didYouMeanWord(name: string, candidates: readonly string[]): string | undefined {
  let best = suggest(name, candidates);
  // Two edits away only for a longer word: of a short one (`log`, `emit`, `const`) they change
  // most of it, and "did you mean `for`?" for `log` points nowhere useful.
  if (best === undefined && name.length >= 6) {
    let bestDistance = 3;
    for (const c of candidates) {
      const d = editDistance(name.toLowerCase(), c.toLowerCase(), 2);
      if (d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
  }
  if (best === undefined && name.length >= 3) {
    const lower = name.toLowerCase();
    best = candidates.find((c) => c.toLowerCase().startsWith(lower) || lower.startsWith(c.toLowerCase()));
  }
  return best === undefined ? undefined : `did you mean \`${best}\`?`;
}

export function listWords(words: readonly string[]): string {
  return words.map((w) => `\`${w}\``).join(', ');
}
