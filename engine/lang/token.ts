/**
 * Tokens of the Reqon lexer, in two shapes: the compact `TokenStream` the parser reads, and the
 * `Token` object that `tokenize` hands to tools and tests; plus the `WordTable` that interns the
 * stream's words.
 *
 * Every word is one kind, `Word`: whether `store` or `from` is a keyword is decided by the parser
 * from its position (contextual keywords), so any word can be a property, field or store name.
 * Punctuation tokens use their own text as their kind. Invariant: a token list always ends with
 * exactly one `EOF` token whose span is empty and sits at the end of the text.
 *
 * Why a stream of typed arrays: a multi-megabyte mission has about a million tokens. As objects
 * (each with a nested span) they all outlive the young generation and the garbage collector copies
 * every one of them; as columns (kind, start, end, one auxiliary index) they are four flat
 * buffers the collector never scans. Text is produced only on demand: words are interned while
 * lexing (a mission repeats a few hundred words a million times), string values are decoded once,
 * other token texts are sliced only when asked for.
 */
import type { Span } from './ast.js';

export type PunctKind =
  | '{' | '}' | '(' | ')' | '[' | ']'
  | ',' | ':' | '.' | '..' | '...'
  | '->' | '=>'
  | '==' | '!=' | '<=' | '>=' | '<' | '>'
  | '=' | '+' | '-' | '*' | '/' | '%'
  | '?' | '??' | '|' | '^';

export type TokenKind = 'Word' | 'Number' | 'String' | 'EOF' | PunctKind;

export interface Token {
  kind: TokenKind;
  /**
   * The token as written in the source (quotes and escapes included for strings). Exception: the
   * lexer's stand-ins for `&&` and `||` (already reported) carry the text `and` / `or`.
   */
  text: string;
  /** Decoded contents of a `String` token; the same as `text` for every other kind. */
  value: string;
  /** Numeric value of a `Number` token; `NaN` for every other kind. */
  number: number;
  span: Span;
}

/**
 * Every kind, indexed by its small-integer code in `TokenStream.kinds`. The order is fixed by the
 * `KIND` codes below; the parser compares kinds by name through this table.
 */
export const KIND_NAMES: readonly TokenKind[] = [
  'Word', 'Number', 'String', 'EOF',
  '{', '}', '(', ')', '[', ']',
  ',', ':', '.', '..', '...',
  '->', '=>',
  '==', '!=', '<=', '>=', '<', '>',
  '=', '+', '-', '*', '/', '%',
  '?', '??', '|', '^',
];

/** The code of each kind (the inverse of KIND_NAMES). */
export const KIND: Readonly<Record<TokenKind, number>> = Object.fromEntries(
  KIND_NAMES.map((k, i) => [k, i]),
) as Record<TokenKind, number>;

const WORD = KIND.Word;
const NUMBER = KIND.Number;
const STRING = KIND.String;
const EOF = KIND.EOF;
const L_BRACE = KIND['{'];
const L_PAREN = KIND['('];
const L_BRACKET = KIND['['];

/**
 * The lexer's output: token `i` is `kinds[i]` (a KIND code) covering `starts[i]`..`ends[i]` of
 * `text`. `aux[i]` depends on the kind: an index into `words` (Word tokens) or `numbers` (Number
 * tokens); for String tokens an index into `strings` when the value is not simply the text
 * between the quotes (escapes, unterminated or single-quoted strings), else -1 and the value is
 * sliced only when asked for; for an opening bracket the index of its matching closer, -1 when
 * unmatched (filled in by the lexer when it meets the closer).
 */
export class TokenStream {
  /** Number of tokens, the final EOF included once the lexer is done. */
  count = 0;
  kinds: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
  aux: Int32Array;
  /** Interned word texts, by id. */
  readonly words: string[] = [];
  /** Decoded values of the String tokens that need decoding (see `aux`). */
  readonly strings: string[] = [];
  /** Values of Number tokens. */
  readonly numbers: number[] = [];

  constructor(
    readonly text: string,
    capacity: number,
  ) {
    const n = capacity > 16 ? capacity : 16;
    this.kinds = new Uint8Array(n);
    this.starts = new Int32Array(n);
    this.ends = new Int32Array(n);
    this.aux = new Int32Array(n);
  }

  /** Appends a token and returns its index. */
  push(kind: number, start: number, end: number, aux: number): number {
    const i = this.count;
    if (i === this.kinds.length) this.grow();
    this.kinds[i] = kind;
    this.starts[i] = start;
    this.ends[i] = end;
    this.aux[i] = aux;
    this.count = i + 1;
    return i;
  }

  private grow(): void {
    const n = this.kinds.length * 2;
    const kinds = new Uint8Array(n);
    kinds.set(this.kinds);
    this.kinds = kinds;
    const starts = new Int32Array(n);
    starts.set(this.starts);
    this.starts = starts;
    const ends = new Int32Array(n);
    ends.set(this.ends);
    this.ends = ends;
    const aux = new Int32Array(n);
    aux.set(this.aux);
    this.aux = aux;
  }

  kindOf(i: number): TokenKind {
    return KIND_NAMES[this.kinds[i]!]!;
  }

  /** The token's text, as `Token.text` defines it. */
  textOf(i: number): string {
    const k = this.kinds[i]!;
    if (k === WORD) return this.words[this.aux[i]!]!;
    if (k === NUMBER || k === STRING) return this.text.slice(this.starts[i]!, this.ends[i]!);
    if (k === EOF) return '';
    return KIND_NAMES[k]!;
  }

  /** The decoded value of a String token; the text of any other token. */
  valueOf(i: number): string {
    if (this.kinds[i] !== STRING) return this.textOf(i);
    const a = this.aux[i]!;
    return a < 0 ? this.text.slice(this.starts[i]! + 1, this.ends[i]! - 1) : this.strings[a]!;
  }

  /** The value of a Number token; NaN for any other token. */
  numberOf(i: number): number {
    return this.kinds[i] === NUMBER ? this.numbers[this.aux[i]!]! : NaN;
  }

  /** Index of the bracket closing token `i` if it is a matched opener, else -1. */
  partnerOf(i: number): number {
    const k = this.kinds[i];
    return k === L_BRACE || k === L_PAREN || k === L_BRACKET ? this.aux[i]! : -1;
  }

  /** Token `i` as an object (for `tokenize`, and for messages on the error path). */
  token(i: number): Token {
    return {
      kind: this.kindOf(i),
      text: this.textOf(i),
      value: this.valueOf(i),
      number: this.numberOf(i),
      span: { start: this.starts[i]!, end: this.ends[i]! },
    };
  }
}

/**
 * Word texts interned while lexing: a hash table (open addressing) from the characters of a word
 * to its id in `words`, so a word seen before costs no allocation and every occurrence of a name
 * shares one string. A candidate of the same hash and length is confirmed with one native
 * `startsWith` (a char-by-char loop here was a fifth of the lexer's time).
 */
export class WordTable {
  private slots = new Int32Array(1024); // id + 1, 0 = empty
  private readonly hashes: number[] = [];

  constructor(
    readonly words: string[],
    private readonly text: string,
  ) {}

  /** The id of `text[start..end)`, whose hash (`hashStep` over its chars from 0) is `hash`. */
  intern(start: number, end: number, hash: number): number {
    const text = this.text;
    const mask = this.slots.length - 1;
    const len = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]!;
      if (entry === 0) return this.add(slot, text.slice(start, end), hash);
      const id = entry - 1;
      if (this.hashes[id] !== hash) continue;
      const w = this.words[id]!;
      if (w.length !== len) continue;
      if (text.startsWith(w, start)) return id;
    }
  }

  /** The id of `word` (the lexer's stand-ins `and` / `or`). */
  internString(word: string): number {
    let h = 0;
    for (let k = 0; k < word.length; k++) h = hashStep(h, word.charCodeAt(k));
    const mask = this.slots.length - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]!;
      if (entry === 0) return this.add(slot, word, h);
      if (this.words[entry - 1] === word) return entry - 1;
    }
  }

  private add(slot: number, word: string, hash: number): number {
    const id = this.words.length;
    this.words.push(word);
    this.hashes.push(hash);
    this.slots[slot] = id + 1;
    if (this.words.length * 2 > this.slots.length) this.rehash();
    return id;
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let id = 0; id < this.hashes.length; id++) {
      let slot = this.hashes[id]! & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = id + 1;
    }
    this.slots = slots;
  }
}

/** One step of the word hash the lexer computes while it scans a word (`h` starts at 0). */
export function hashStep(h: number, c: number): number {
  return (Math.imul(h, 31) + c) | 0;
}

/** How a token is named in "Expected X but found Y" messages. */
export function describeToken(t: Token): string {
  switch (t.kind) {
    case 'EOF':
      return 'end of file';
    case 'String':
      return 'a string';
    case 'Number':
    case 'Word': {
      const text = t.text.length > 40 ? `${t.text.slice(0, 40)}…` : t.text;
      return `"${text}"`;
    }
    default:
      return `"${t.kind}"`;
  }
}
