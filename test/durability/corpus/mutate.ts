/**
 * Mutations of a stored mission at the steps its recording holds effects for, generated from the
 * log itself, so a new corpus entry gets mutation cases without a line of test code.
 *
 * A recorded event's step path names one execution of one step (journal/step-path.ts); parsing
 * the stored mission (engine/lang/parser.ts, spans in UTF-16 offsets) resolves the path to the
 * AST node, and each mutation is ONE string edit of the mission text at that node's span:
 *
 *   url      the request path gets a suffix            (a `call`: another operation of the mission)
 *   method   GET→POST, POST→PUT, PUT→PATCH, PATCH→PUT, DELETE→POST
 *   body     a field is added to the request body      (only where the body is an object literal)
 *   store    the store step writes to another store    (declared beside the original, same kind)
 *   order    the step swaps places with its next sibling (the previous one when it is last)
 *   remove   the step is deleted
 *
 * What a replay must answer (`expectedAt`): for url/method/body/store, a divergence at the first
 * recorded execution of the mutated step. For order and remove the walk first differs at the
 * first recorded execution of the earlier *position* the edit changed (the lower of the two
 * swapped indices, the removed index): from there on, the step at that position is another one.
 */
import type { ActionDecl, CallStep, FetchStep, MissionDecl, Span, Step, StoreDecl, StoreStep } from '../../../engine/lang/ast.js';
import { parseProgram } from '../../../engine/lang/parser.js';
import type { StoredEvent } from '../../../engine/log/events.js';
import { spanOf } from '../../../engine/lang/ast.js';

export type MutationKind = 'url' | 'method' | 'body' | 'store' | 'order' | 'remove';

export interface Mutation {
  kind: MutationKind;
  /** The mutated step's first recorded path, e.g. "Sync/1[0]/3". */
  stepPath: string;
  /** Its step type (Fetch, Call, Store) and line in the stored mission. */
  stepType: string;
  line: number;
  /** The mutated mission text. */
  text: string;
  /** What the edit did, for the case's name. */
  edit: string;
  /** Where verify must report the divergence. */
  expectedAt: string;
  /** The seq of the first recorded event at `expectedAt`. */
  expectedSeq: number;
  /**
   * A removed step that was the last of its block: the walk leaves the block early, so it may
   * first differ at the block's own path (the action, the iteration, the arm) — asking there for
   * what the removed step would have led to (an action's checkpoint) while the log holds the
   * block's end.
   */
  orAt?: string;
}

/** A step found in the mission: its node, the block it sits in, and its index there. */
interface Located {
  node: Step;
  block: Step[];
  index: number;
  /** The path of the block (the step path without the final `/index`). */
  blockPath: string;
}

const META = new Set(['run.started', 'run.resumed']);

export function parseMission(text: string, file: string): MissionDecl {
  const { program, diagnostics } = parseProgram(text, file);
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new Error(`the stored mission ${file} does not parse: ${errors.map((d) => d.message).join('; ')}`);
  const mission = program.items?.find((i): i is MissionDecl => i?.kind === 'Mission');
  if (!mission) throw new Error(`no mission in ${file}`);
  return mission;
}

/**
 * The step a path names, or undefined for a path that names no step (an action, a stage, the
 * run, a loop iteration). Grammar: `Action(#visit)?(~attempt)?` then `/index` steps, each maybe
 * followed by `[iteration]`, `>arm` or `!` (a validate's fallback) before the next `/index`.
 */
export function locate(mission: MissionDecl, path: string): Located | undefined {
  const head = /^([A-Za-z_][\w]*)(#\d+)?(~\d+)?/.exec(path);
  if (!head) return undefined;
  const action: ActionDecl | undefined = mission.actions.find((a) => a.name.name === head[1]);
  if (!action) return undefined;
  let block: Step[] = action.steps;
  let rest = path.slice(head[0].length);
  let blockPath = head[0];
  let found: Located | undefined;
  while (rest.length > 0) {
    const step = /^\/(\d+)/.exec(rest);
    if (step) {
      const index = Number(step[1]);
      const node = block[index];
      if (!node) return undefined;
      found = { node, block, index, blockPath };
      blockPath += step[0];
      rest = rest.slice(step[0].length);
      continue;
    }
    // Anything after a step descends into it; a path that ends there names no step of its own.
    const inner = /^(\[\d+\]|>\d+|!)/.exec(rest);
    if (!inner || !found) return undefined;
    const node = found.node;
    if (inner[0].startsWith('[') && node.kind === 'For') block = node.body;
    else if (inner[0].startsWith('>') && node.kind === 'Match') {
      const arm = node.arms[Number(inner[0].slice(1))];
      if (arm?.body.kind !== 'Steps') return undefined;
      block = arm.body.steps;
    } else if (inner[0] === '!' && node.kind === 'Validate' && node.fallback) block = node.fallback;
    else return undefined;
    blockPath += inner[0];
    rest = rest.slice(inner[0].length);
    if (rest.length === 0) return undefined;
    found = undefined;
  }
  return found;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function replace(text: string, span: Span, by: string): string {
  return text.slice(0, span.start) + by + text.slice(span.end);
}

const NEXT_METHOD: Record<string, string> = { GET: 'post', POST: 'put', PUT: 'patch', PATCH: 'put', DELETE: 'post' };

/** Every mutation of `text` at the effects `events` recorded (one per step and kind). */
export function mutationsOf(text: string, file: string, events: readonly StoredEvent[]): Mutation[] {
  const mission = parseMission(text, file);
  const walked = events.filter((e) => !META.has(e.type));
  /** First recorded event of each step node, in log order. */
  const firstAt = new Map<Step, StoredEvent>();
  const locatedBy = new Map<Step, Located>();
  for (const event of walked) {
    const at = locate(mission, event.stepPath);
    if (!at || firstAt.has(at.node)) continue;
    firstAt.set(at.node, event);
    locatedBy.set(at.node, at);
  }
  /** Steps that recorded an effect: an HTTP request, or a batch of store writes. */
  const effectSteps: Step[] = [];
  for (const event of walked) {
    if (event.type !== 'http.request' && event.type !== 'store.write') continue;
    const at = locate(mission, event.stepPath);
    if (at && !effectSteps.includes(at.node)) effectSteps.push(at.node);
  }

  const out: Mutation[] = [];
  for (const node of effectSteps) {
    const at = locatedBy.get(node)!;
    const first = firstAt.get(node)!;
    const base = { stepPath: first.stepPath, stepType: node.kind, line: lineOf(text, node.start) };
    const atSelf: { expectedAt: string; expectedSeq: number; orAt?: string } = { expectedAt: first.stepPath, expectedSeq: first.seq };
    const add = (kind: MutationKind, edit: string, mutated: string | undefined, expected = atSelf): void => {
      if (mutated === undefined || mutated === text) return;
      out.push({ kind, ...base, text: mutated, edit, ...expected });
    };
    if (node.kind === 'Fetch') {
      add('url', 'the request path gets "-mutated"', fetchPathEdit(text, node));
      const verb = NEXT_METHOD[node.method]!;
      add('method', `${node.method} became ${verb.toUpperCase()}`, replace(text, { start: node.start, end: node.start + node.method.length }, verb));
      if (node.options.body?.kind === 'Object') {
        const brace = node.options.body.start;
        add('body', 'the body gets a field', `${text.slice(0, brace + 1)} mutatedByCorpus: 1,${text.slice(brace + 1)}`);
      }
    } else if (node.kind === 'Call') {
      const other = otherOperation(text, node);
      if (other) add('url', `call ${node.source.name}.${node.operation.name} became ${other}`, replace(text, spanOf(node.operation), other));
    } else if (node.kind === 'Store') {
      add('store', `-> ${node.store.name} became -> ${node.store.name}Mutated`, storeEdit(text, mission, node));
    }
    // Order and remove: the earlier position the edit changes is where the walk first differs.
    const positionAt = (index: number): { expectedAt: string; expectedSeq: number } | undefined => {
      const event = firstAt.get(at.block[index]!);
      return event ? { expectedAt: event.stepPath, expectedSeq: event.seq } : undefined;
    };
    if (at.block.length > 1) {
      const other = at.index + 1 < at.block.length ? at.index + 1 : at.index - 1;
      const [a, b] = [Math.min(at.index, other), Math.max(at.index, other)];
      const first = at.block[a]!;
      const second = at.block[b]!;
      const swapped =
        text.slice(0, first.start) +
        text.slice(second.start, second.end) +
        text.slice(first.end, second.start) +
        text.slice(first.start, first.end) +
        text.slice(second.end);
      const expected = positionAt(a);
      if (expected) add('order', `swapped with its ${other > at.index ? 'next' : 'previous'} sibling`, swapped, expected);
      const last = at.index === at.block.length - 1;
      add('remove', 'removed', replace(text, spanOf(node), ''), last ? { ...atSelf, orAt: atSelf.expectedAt.replace(/\/\d+$/, '') } : atSelf);
    }
  }
  return out;
}

function fetchPathEdit(text: string, node: FetchStep): string | undefined {
  if (node.path.kind !== 'String') return undefined;
  const closing = node.path.end - 1;
  if (text[closing] !== '"') return undefined;
  return `${text.slice(0, closing)}-mutated${text.slice(closing)}`;
}

/** Another operation the mission calls on the same source, if any. */
function otherOperation(text: string, node: CallStep): string | undefined {
  const names = [...text.matchAll(new RegExp(`call\\s+${node.source.name}\\.(\\w+)`, 'g'))].map((m) => m[1]!);
  return names.find((n) => n !== node.operation.name);
}

/** Declares `<name>Mutated` beside the store (same kind, its own target) and points the step at it. */
function storeEdit(text: string, mission: MissionDecl, node: StoreStep): string | undefined {
  const decl: StoreDecl | undefined = mission.stores.find((s) => s.name.name === node.store.name);
  if (!decl) return undefined;
  const declText = text.slice(decl.start, decl.end);
  const copy =
    declText.slice(0, decl.name.start - decl.start) +
    `${decl.name.name}Mutated` +
    declText.slice(decl.name.end - decl.start, decl.target.start - decl.start) +
    JSON.stringify(`${decl.target.value}_mutated`) +
    declText.slice(decl.target.end - decl.start);
  // The step comes after the declarations: edit it first, so the declaration's offsets still hold.
  const retargeted = replace(text, spanOf(node.store), `${node.store.name}Mutated`);
  return `${retargeted.slice(0, decl.end)}\n  ${copy}${retargeted.slice(decl.end)}`;
}

/**
 * The stored mission with a step added right after the last step the log reached — the edit
 * GUARANTEES 14 calls compatible — or undefined when no such place exists in the text. "After"
 * in walk order: when the last recorded step sits in a loop body, earlier iterations walked
 * every position of that body, so the step goes after the outermost loop instead; an action the
 * log shows visited or attempted more than once is left alone (its earlier visits walked it all).
 */
export function appendAfterLastRecorded(
  text: string,
  file: string,
  events: readonly StoredEvent[],
): { text: string; line: number; after: string; breaksStreamedSync: boolean } | undefined {
  const mission = parseMission(text, file);
  const walked = events.filter((e) => !META.has(e.type));
  const final = [...walked].reverse().find((e) => locate(mission, e.stepPath));
  // The furthest step of that action the log reached, in text order: not always the last event's
  // — a streamed sync starts its store before its fetch's later pages, so a log that ends in the
  // fetch has reached the store already, and a step put after the fetch would come before it.
  const action = final?.stepPath.split('/')[0];
  const last = walked
    .filter((e) => e.stepPath.split('/')[0] === action && locate(mission, e.stepPath))
    .reduce<StoredEvent | undefined>((far, e) => (far === undefined || locate(mission, e.stepPath)!.node.start > locate(mission, far.stepPath)!.node.start ? e : far), undefined);
  if (!last || /^[^/]*[#~]/.test(last.stepPath)) return undefined;
  let anchor = locate(mission, last.stepPath)!;
  let anchorPath = last.stepPath;
  // The outermost loop on the way down: its iterations walked the whole body.
  const steps = [...last.stepPath.matchAll(/\/\d+/g)];
  for (const m of steps) {
    const prefix = last.stepPath.slice(0, m.index + m[0].length);
    const at = locate(mission, prefix);
    if (at?.node.kind === 'For' && last.stepPath.length > prefix.length) {
      anchor = at;
      anchorPath = prefix;
      break;
    }
  }
  // The log went past the step (its action's end, a checkpoint there): no place in this action is unreached.
  const tail = walked[walked.length - 1]!;
  if (tail.stepPath !== anchorPath && !tail.stepPath.startsWith(anchorPath)) return undefined;
  const end = anchor.node.end;
  const inserted = `${text.slice(0, end)}\n    let appendedByCorpus = 1${text.slice(end)}`;
  return { text: inserted, line: lineOf(text, end) + 1, after: anchorPath, breaksStreamedSync: endsStreamedSync(anchor) };
}

/**
 * The step is the `store response -> S` that ends its block right after a paginated fetch: a
 * streamed sync (GUARANTEES 15), which a step added after it turns back into a gathered one.
 */
function endsStreamedSync(at: Located): boolean {
  const before = at.block[at.index - 1];
  return (
    at.node.kind === 'Store' &&
    at.index === at.block.length - 1 &&
    (before?.kind === 'Fetch' || before?.kind === 'Call') &&
    before.options.paginate !== undefined &&
    at.node.source.kind === 'Ref' &&
    at.node.source.parts.join('.') === 'response'
  );
}
