/**
 * Tokens of the Reqon lexer.
 *
 * Every word is one kind, `Word`: whether `store` or `from` is a keyword is decided by the parser
 * from its position (contextual keywords), so any word can be a property, field or store name.
 * Punctuation tokens use their own text as their kind. Invariant: a token list always ends with
 * exactly one `EOF` token whose span is empty and sits at the end of the text.
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
