/**
 * Diagnostics are data. The lexer, parser and checker collect them instead of throwing; they are
 * rendered at the edge (`format.ts`) into `FILE:LINE:COL: error[CODE]: MESSAGE`, the numbered
 * source line and a caret — the same text in the CLI, the tests and the studio.
 */
import type { Span } from './ast.js';
import { CODES, type DiagnosticCode } from './codes.js';

export type Severity = 'error' | 'warning';

export interface Diagnostic {
  code: DiagnosticCode;
  severity: Severity;
  message: string;
  file: string;
  span: Span;
  /** A fix to offer, e.g. 'did you mean `invoices`?'. Rendered as a `help:` line. */
  help?: string;
}

/** Collects diagnostics for one file, refusing a second error at the same offset. */
export class DiagnosticBag {
  readonly items: Diagnostic[] = [];
  private readonly errorOffsets = new Set<number>();

  constructor(readonly file: string) {}

  /** `span` may be a syntax-tree node (nodes carry start/end): the diagnostic keeps a copy. */
  error(code: DiagnosticCode, span: Span, message: string, help?: string): void {
    if (this.errorOffsets.has(span.start)) return;
    this.errorOffsets.add(span.start);
    this.items.push({ code, severity: CODES[code].severity, message, file: this.file, span: { start: span.start, end: span.end }, help });
  }

  get hasErrors(): boolean {
    return this.items.some((d) => d.severity === 'error');
  }
}
