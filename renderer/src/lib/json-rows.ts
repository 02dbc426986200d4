/**
 * A JSON value as the rows of a tree view, built lazily: only open containers contribute their
 * children, and the children of a big container that are not opened are one *range* segment
 * (row i of it is child i, made when it is drawn), so a `response` of 25k records costs a few
 * segments per scrub step, not 25k row objects — the view (JsonBlock) draws only the rows in
 * sight. Opening one record in the middle splits the range around it.
 *
 * A node is named by its path from the root (`$`, `$.items`, `$[3]`); `expanded` overrides the
 * default (`defaultOpen`) per path, so a user's clicks survive a scrub to the next seq.
 */
import { jsonText, visibleControls } from './visible-text.js';

export interface JsonRow {
  path: string;
  depth: number;
  /** The key or index in the parent; null for the root. */
  label: string | null;
  value: unknown;
  /** Child count of an object or array (of the whole array when a window of it was sent); null for a primitive. */
  size: number | null;
  open: boolean;
  /** An array the engine sent a window of: its items `from`..`from + count - 1` are here. */
  window?: ArrayWindow;
}

export interface ArrayWindow {
  from: number;
  count: number;
  total: number;
  /** A string the engine sent a window of characters of (inspect/state-slice.ts TEXT_LIMIT). */
  unit?: 'chars';
}

/** Characters of a string drawn in a row; the rest is counted, and copied on demand. */
export const ROW_TEXT = 500;

/**
 * A long string cut for display: its first `limit` characters (not between a surrogate pair's
 * halves) and how many more there are. Drawing a 20 MB string whole froze the page for ~40 s.
 */
export function cutText(text: string, limit = ROW_TEXT): { shown: string; more: number } {
  if (text.length <= limit) return { shown: text, more: 0 };
  const end = /[\uD800-\uDBFF]/.test(text.charAt(limit - 1)) ? limit - 1 : limit;
  return { shown: text.slice(0, end), more: text.length - end };
}

/** Containers with more children than this keep their children closed unless opened. */
const OPEN_LIMIT = 100;

/** Open by default: the root, and the children of a small root (with `all`, of any small container). */
export function defaultOpen(depth: number, parentSize: number, all: boolean): boolean {
  return depth === 0 || (parentSize <= OPEN_LIMIT && (all || depth === 1));
}

function sizeOf(value: unknown): number | null {
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'object' && value !== null) return Object.keys(value).length;
  return null;
}

export function childPath(parent: string, key: string | number): string {
  return typeof key === 'number' ? `${parent}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

type Segment =
  | { kind: 'row'; row: JsonRow }
  /** Children `from..to-1` of `parent`, all closed: drawn on demand (`offset`: index of the parent's first item in the whole array). */
  | { kind: 'range'; parent: unknown; parentPath: string; keys: string[] | null; depth: number; from: number; to: number; offset: number };

/** The rows of a value: `count`, and `at(i)` for the i-th visible row. */
export class JsonRows {
  readonly count: number;
  private readonly segments: Segment[] = [];
  /** starts[k] = index of the first row of segments[k]. */
  private readonly starts: number[] = [];

  constructor(
    root: unknown,
    private readonly expanded: ReadonlyMap<string, boolean>,
    private readonly expandAll = false,
    /** Arrays sent as a window, by path (`$`, `$.items`). */
    windows: ReadonlyMap<string, ArrayWindow> = new Map(),
  ) {
    let count = 0;
    const emit = (segment: Segment) => {
      this.starts.push(count);
      this.segments.push(segment);
      count += segment.kind === 'row' ? 1 : segment.to - segment.from;
    };
    // Depth first with an explicit stack, so deep values cannot overflow the call stack.
    type Task = { kind: 'node'; path: string; depth: number; label: string | null; value: unknown; parentSize: number } | { kind: 'segment'; segment: Segment };
    const stack: Task[] = [{ kind: 'node', path: '$', depth: 0, label: null, value: root, parentSize: 1 }];
    while (stack.length > 0) {
      const task = stack.pop()!;
      if (task.kind === 'segment') {
        emit(task.segment);
        continue;
      }
      const size = sizeOf(task.value);
      const window = Array.isArray(task.value) || typeof task.value === 'string' ? windows.get(task.path) : undefined;
      const open = size !== null && (expanded.get(task.path) ?? defaultOpen(task.depth, window?.total ?? task.parentSize, expandAll));
      emit({ kind: 'row', row: { path: task.path, depth: task.depth, label: task.label, value: task.value, size: size === null ? null : (window?.total ?? size), open, ...(window ? { window } : {}) } });
      const offset = window?.from ?? 0;
      if (!open || size === null || size === 0) continue;
      const keys = Array.isArray(task.value) ? null : Object.keys(task.value as object);
      const childDepth = task.depth + 1;
      const childrenOpen = defaultOpen(childDepth, window?.total ?? size, expandAll);
      const children: Task[] = [];
      const node = (i: number): Task => {
        const key = keys === null ? i : keys[i]!;
        const name = keys === null ? offset + i : key;
        return { kind: 'node', path: childPath(task.path, name), depth: childDepth, label: String(name), value: (task.value as Record<string, unknown>)[key as string], parentSize: window?.total ?? size };
      };
      if (childrenOpen || size <= OPEN_LIMIT) {
        for (let i = 0; i < size; i += 1) children.push(node(i));
      } else {
        // Closed by default: one range, split around the children a user opened.
        const opened = this.openedChildren(task.path, keys, size, offset);
        let from = 0;
        for (const i of opened) {
          if (i > from) children.push({ kind: 'segment', segment: { kind: 'range', parent: task.value, parentPath: task.path, keys, depth: childDepth, from, to: i, offset } });
          children.push(node(i));
          from = i + 1;
        }
        if (from < size) children.push({ kind: 'segment', segment: { kind: 'range', parent: task.value, parentPath: task.path, keys, depth: childDepth, from, to: size, offset } });
      }
      for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i]!);
    }
    this.count = count;
  }

  at(index: number): JsonRow {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.starts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    const segment = this.segments[lo]!;
    if (segment.kind === 'row') return segment.row;
    const i = segment.from + (index - this.starts[lo]!);
    const key = segment.keys === null ? i : segment.keys[i]!;
    const name = segment.keys === null ? segment.offset + i : key;
    const value = (segment.parent as Record<string, unknown>)[key as string];
    const size = sizeOf(value);
    return { path: childPath(segment.parentPath, name), depth: segment.depth, label: String(name), value, size, open: false };
  }

  /** Indices of the children of `path` opened by the user, ascending (the map holds only clicks). */
  private openedChildren(path: string, keys: string[] | null, size: number, offset: number): number[] {
    const out: number[] = [];
    for (const [p, open] of this.expanded) {
      if (!open || !p.startsWith(path) || p.length === path.length) continue;
      const rest = p.slice(path.length);
      let index: number;
      if (keys === null) {
        const m = /^\[(\d+)\]$/.exec(rest);
        if (m === null) continue;
        index = Number(m[1]) - offset;
      } else {
        index = keys.findIndex((k) => childPath(path, k) === p);
      }
      if (index >= 0 && index < size) out.push(index);
    }
    return out.sort((a, b) => a - b);
  }
}

/** One line for a value: primitives as JSON, containers as a bounded preview (`{id: "a", qty: 2}`). */
export function preview(value: unknown, budget = 120): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') {
    const { shown, more } = cutText(value, Math.max(budget, ROW_TEXT));
    return more === 0 ? jsonText(value)! : `${jsonText(shown)!.slice(0, -1)}…`;
  }
  if (value === null || typeof value !== 'object') return jsonText(value) ?? String(value);
  const isArray = Array.isArray(value);
  const close = isArray ? ']' : '}';
  let out = isArray ? '[' : '{';
  const keys = isArray ? null : Object.keys(value);
  const length = isArray ? value.length : keys!.length;
  for (let i = 0; i < length; i += 1) {
    const child = isArray ? value[i] : (value as Record<string, unknown>)[keys![i]!];
    // A long string child is cut before it is quoted: the preview shows `budget` characters at most.
    const shown = child !== null && typeof child === 'object' ? (Array.isArray(child) ? `[…${child.length}]` : '{…}') : typeof child === 'string' ? preview(child, budget) : (jsonText(child) ?? String(child));
    const part = (i > 0 ? ', ' : '') + (isArray ? shown : `${visibleControls(keys![i]!)}: ${shown}`);
    if (out.length + part.length > budget) return `${out}${i > 0 ? ', ' : ''}…${close}`;
    out += part;
  }
  return out + close;
}
