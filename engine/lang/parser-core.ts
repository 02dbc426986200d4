/**
 * The parser's cursor, error reporting and recovery — shared by the declaration, step, option and
 * expression parsers (parser-*.ts), which are plain functions over one `Parser`.
 *
 * Recovery model: a grammar rule that meets a token it cannot use reports one diagnostic and throws
 * `ABORT`. Only block loops (`parseBlock`: files, missions, actions, option blocks, field blocks,
 * match arms) catch it: they rewind to the start of the failed item and skip it — jumping over
 * bracketed groups using a bracket-match table built once, never past the block's own closing
 * brace — up to the next token that can start an item. So an error never escapes its block, one
 * typo gives one error, and every loop consumes at least one token per iteration (no hangs).
 */
import type { Name, Span, StringLiteral } from './ast.js';
import type { DiagnosticBag } from './diagnostics.js';
import type { DiagnosticCode } from './codes.js';
import { editDistance, suggest } from './suggest.js';
import { describeToken, type Token, type TokenKind } from './token.js';

/** Thrown (never escapes the parser) to unwind to the nearest block loop. */
export const ABORT: unique symbol = Symbol('parse-abort');

/** Deepest nesting of expressions and blocks; deeper input gets one E2012 and is skipped. */
export const MAX_DEPTH = 200;

export class Parser {
  pos = 0;
  depth = 0;
  /** For each opening bracket token, the index of its matching closer, else -1. */
  private readonly partner: Int32Array;
  private readonly last: number;

  constructor(
    readonly tokens: Token[],
    readonly bag: DiagnosticBag,
    readonly file: string,
  ) {
    this.last = tokens.length - 1;
    this.partner = matchBrackets(tokens);
  }

  get tok(): Token {
    return this.tokens[this.pos]!;
  }

  peek(ahead = 1): Token {
    const i = this.pos + ahead;
    return this.tokens[i < this.last ? i : this.last]!;
  }

  /** End offset of the last consumed token (the end of the node being built). */
  get prevEnd(): number {
    return this.pos > 0 ? this.tokens[this.pos - 1]!.span.end : 0;
  }

  span(start: number): Span {
    const end = this.prevEnd;
    return { start, end: end > start ? end : start };
  }

  advance(): Token {
    const t = this.tokens[this.pos]!;
    if (this.pos < this.last) this.pos++;
    return t;
  }

  at(kind: TokenKind): boolean {
    return this.tokens[this.pos]!.kind === kind;
  }

  atWord(word: string): boolean {
    const t = this.tokens[this.pos]!;
    return t.kind === 'Word' && t.text === word;
  }

  eat(kind: TokenKind): boolean {
    if (this.tokens[this.pos]!.kind !== kind) return false;
    this.advance();
    return true;
  }

  eatWord(word: string): boolean {
    if (!this.atWord(word)) return false;
    this.advance();
    return true;
  }

  /** Consumes a token of `kind` or reports `Expected "kind" but found …` and aborts. */
  expect(kind: TokenKind, help?: string): Token {
    if (this.tokens[this.pos]!.kind === kind) return this.advance();
    return this.fail('E2001', `"${kind}"`, help);
  }

  expectWord(word: string, help?: string): Token {
    if (this.atWord(word)) return this.advance();
    return this.fail('E2001', `\`${word}\``, help);
  }

  /** Any word is a name here (contextual keywords). */
  expectName(what: string): Name {
    const t = this.tok;
    if (t.kind !== 'Word') this.fail('E2001', what);
    this.advance();
    return { name: t.text, span: t.span };
  }

  expectString(what: string): StringLiteral {
    const t = this.tok;
    if (t.kind !== 'String') this.fail('E2001', what);
    this.advance();
    return { value: t.value, span: t.span };
  }

  /** Reports `Expected <what> but found <current token>` at the current token and aborts. */
  fail(code: DiagnosticCode, what: string, help?: string): never {
    const t = this.tok;
    this.bag.error(code, t.span, `Expected ${what} but found ${describeToken(t)}`, help);
    throw ABORT;
  }

  error(code: DiagnosticCode, span: Span, message: string, help?: string): void {
    this.bag.error(code, span, message, help);
  }

  /** Enters one nesting level (block or expression); reports E2012 once and aborts when too deep. */
  enter(): void {
    if (++this.depth > MAX_DEPTH) {
      this.bag.error('E2012', this.tok.span, `Nesting is too deep (more than ${MAX_DEPTH} levels)`, 'split it up with `let` or separate actions');
      throw ABORT;
    }
  }

  /**
   * Parses `{ item … }`: optional commas between items, per-item recovery (see the file header).
   * `isItemStart(i)` says whether token `i` can begin an item, for resynchronising after an error.
   * `leaveOn` lets a loop stop early without consuming (e.g. an action body meeting `action`,
   * which means its `}` is missing); it must report its own error.
   */
  parseBlock(
    context: string,
    parseItem: () => void,
    isItemStart: (i: number) => boolean,
    leaveOn?: (t: Token) => boolean,
  ): void {
    this.expect('{');
    const open = this.pos - 1;
    const close = this.partner[open]! >= 0 ? this.partner[open]! : this.last;
    this.enter();
    for (;;) {
      const t = this.tok;
      if (t.kind === '}') {
        this.advance();
        break;
      }
      if (t.kind === 'EOF') {
        this.bag.error('E2001', t.span, `Expected "}" to close ${context} but found end of file`);
        break;
      }
      if (t.kind === ',') {
        this.advance();
        continue;
      }
      if (leaveOn !== undefined && leaveOn(t)) break;
      this.item(parseItem, close, isItemStart);
    }
    this.depth--;
  }

  /** Runs one item parser; on ABORT rewinds and skips the item (never past `limit`). */
  item(parseItem: () => void, limit: number, isItemStart: (i: number) => boolean): void {
    const start = this.pos;
    const depth = this.depth;
    try {
      parseItem();
      if (this.pos === start) this.advance(); // an item parser that consumed nothing still moves on
    } catch (e) {
      if (e !== ABORT) throw e;
      this.depth = depth;
      this.skipItem(start, this.pos, limit, isItemStart);
    }
  }

  /**
   * Skips the failed item that began at `start`. Tokens before `failedAt` were accepted by the
   * grammar, so a step word among them (`let g = match …`) is not a new item; resynchronise only
   * from the failure onwards.
   */
  private skipItem(start: number, failedAt: number, limit: number, isItemStart: (i: number) => boolean): void {
    let i = start;
    if (i < limit) {
      const first = this.partner[i]!;
      i = first > i && first < limit ? first + 1 : i + 1;
    }
    while (i < limit) {
      const t = this.tokens[i]!;
      if (i >= failedAt && (t.kind === '}' || isItemStart(i))) break;
      const partner = this.partner[i]!;
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
      const t = this.tokens[i]!;
      if (t.kind === ',' || t.kind === '}' || t.kind === ')' || t.kind === ']') break;
      if (i > this.pos && t.kind === 'Word' && this.tokens[i + 1]!.kind === ':') break;
      const partner = this.partner[i]!;
      i = partner > i ? partner + 1 : i + 1;
    }
    this.pos = i;
  }

  isWordAt(i: number, words: ReadonlySet<string>): boolean {
    const t = this.tokens[i]!;
    return t.kind === 'Word' && words.has(t.text);
  }

  /** Token `i` is `word :` (the start of an option or field entry). */
  isKeyAt(i: number): boolean {
    const t = this.tokens[i]!;
    return (t.kind === 'Word' || t.kind === 'String') && i < this.last && this.tokens[i + 1]!.kind === ':';
  }
}

/** Bracket matching over the token list: `partner[open] = close`, -1 where unmatched. */
function matchBrackets(tokens: Token[]): Int32Array {
  const partner = new Int32Array(tokens.length).fill(-1);
  const stack: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const k = tokens[i]!.kind;
    if (k === '{' || k === '(' || k === '[') {
      stack.push(i);
    } else if (k === '}' || k === ')' || k === ']') {
      const want = k === '}' ? '{' : k === ')' ? '(' : '[';
      // Pop to the nearest opener of the same kind; openers skipped over stay unmatched.
      for (let s = stack.length - 1; s >= 0; s--) {
        if (tokens[stack[s]!]!.kind === want) {
          partner[stack[s]!] = i;
          stack.length = s;
          break;
        }
      }
    }
  }
  return partner;
}

/** "did you mean `x`?" for option keys and enumerated values: close in spelling, or a prefix. */
export function didYouMeanWord(name: string, candidates: readonly string[]): string | undefined {
  let best = suggest(name, candidates);
  if (best === undefined && name.length > 2) {
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
