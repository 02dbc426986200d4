/**
 * The mission as the runtime uses it: declarations indexed by name, and source positions
 * resolvable to lines (for `step.started` events and error messages). Built once per run from a
 * checked MissionUnit; read-only afterwards.
 */
import { basename } from 'node:path';
import type {
  ActionDecl,
  MissionDecl,
  SchemaDecl,
  SourceDecl,
  Span,
  StoreDecl,
  TransformDecl,
} from '../lang/ast.js';
import type { Expr, ForStep, LetStep, Step, StoreStep } from '../lang/ast.js';
import { CHECKPOINT_STORE } from '../lang/builtin-names.js';
import { loopAssignments } from '../lang/check-bindings.js';
import { walkExpr } from '../lang/check-expressions.js';
import { LineIndex } from '../lang/line-index.js';
import { storeDeleteOf, type StoreDelete } from '../lang/store-delete.js';
import type { MissionUnit } from '../lang/mission-unit.js';
import { findStreamedSyncs, type PagedFetch } from './streamed-sync.js';

/** See MissionModel.readsOf. */
export interface StepReads {
  readonly stores: readonly string[];
  readonly syncKeys: readonly string[];
  /** Nothing to read: the step runs at once. */
  readonly none: boolean;
}

const NO_READS: StepReads = { stores: [], syncKeys: [], none: true };

export class MissionModel {
  readonly sources = new Map<string, SourceDecl>();
  readonly stores = new Map<string, StoreDecl>();
  readonly schemas = new Map<string, SchemaDecl>();
  readonly transforms = new Map<string, TransformDecl>();
  readonly actions = new Map<string, ActionDecl>();
  /** Paginated fetches whose pages stream straight into the next store step (streamed-sync.ts). */
  private readonly streamed: Map<PagedFetch, StoreStep>;
  /** Whether any store is `memory` (run-local state that replay rebuilds from store.write events). */
  readonly hasMemoryStores: boolean;
  private readonly skippableLoops = new WeakMap<ForStep, boolean>();
  /** Lets in loop bodies that set a variable outside their loop (check-bindings.ts), built on first use. */
  private outerLets: ReadonlySet<LetStep> | undefined;
  private readonly stepReads = new WeakMap<object, StepReads>();
  private readonly texts = new Map<string, string>();
  private readonly lineIndexes = new Map<string, LineIndex>();

  /** Files the run remembered besides the mission's own, by path (MissionFiles.attachments). */
  private readonly attachments: ReadonlyMap<string, string>;

  constructor(
    readonly unit: MissionUnit,
    readonly mission: MissionDecl,
    attachments: readonly { path: string; text: string }[] = [],
  ) {
    this.attachments = new Map(attachments.map((a) => [a.path, a.text]));
    // A duplicate store or source is a warning (E3035): the first declaration is the one used.
    for (const s of mission.sources) if (!this.sources.has(s.name.name)) this.sources.set(s.name.name, s);
    for (const s of mission.stores) if (!this.stores.has(s.name.name)) this.stores.set(s.name.name, s);
    for (const s of mission.schemas) this.schemas.set(s.name.name, s);
    for (const t of mission.transforms) this.transforms.set(t.name.name, t);
    for (const a of mission.actions) this.actions.set(a.name.name, a);
    for (const f of unit.files) this.texts.set(f.path, f.text);
    this.streamed = findStreamedSyncs(this.actions.values(), this.stores);
    this.hasMemoryStores = mission.stores.some((s) => s.type.kind === 'memory');
  }

  /** The text of `file` as the run remembered it, or undefined (read it from disk, as runs recorded before did). */
  attachment(file: string): string | undefined {
    return this.attachments.get(file);
  }

  /** The store removal `step` is (`delete S[k]`, S a declared store), or undefined: a request. */
  storeDelete(step: Step): StoreDelete | undefined {
    return storeDeleteOf(step, (name) => this.stores.has(name));
  }

  /** The store step `step` streams its pages into, when it is the fetch of a streamed sync. */
  streamedStore(step: Step): StoreStep | undefined {
    return step.kind === 'Fetch' || step.kind === 'Call' ? this.streamed.get(step) : undefined;
  }

  /**
   * True when an iteration of `loop` leaves nothing behind for later steps but its recorded
   * events and store writes: its scope is its own (Frame.child), and no step in its body —
   * nested bodies included — does more. Not so for a request (its attempts must reach the source's
   * circuit breaker as they replay, and a `since` fetch hands the action a pending checkpoint, as
   * a store into `sync_state` does),
   * nor for a `let` that sets a variable outside the loop (a total the steps after the loop
   * read), nor for `pause`/`wait` (kept out of the shortcut: rare in long loops).
   */
  iterationsSkippable(loop: ForStep): boolean {
    let known = this.skippableLoops.get(loop);
    if (known === undefined) {
      this.outerLets ??= new Set([...this.actions.values()].flatMap((a) => [...loopAssignments(a)]));
      const outerLets = this.outerLets;
      // A store into the undeclared checkpoint store hands the action a pending checkpoint (sync-state.ts).
      const setsCheckpoint = (step: StoreStep) => step.store.name === CHECKPOINT_STORE && !this.stores.has(CHECKPOINT_STORE);
      this.skippableLoops.set(loop, (known = loop.body.every((step) => leavesOnlyEvents(step, outerLets, setsCheckpoint))));
    }
    return known;
  }

  /**
   * What the expressions of `step` itself read besides their values (nested steps read their own),
   * for the journal to read and record before the step runs (step-runtime.ts, prefetchReads):
   * the persistent (non-memory) stores they name as values (`length(orders)`, `orders where …`,
   * `products[id]`) and the checkpoints they read (`sync_state.get("k")`), in the order they
   * first appear. Memory stores are left out (expressions read them as they are), and so is the
   * collection of `for x in store` (the loop reads it itself, for-step.ts).
   */
  readsOf(step: Step): StepReads {
    let reads = this.stepReads.get(step);
    if (reads === undefined) {
      // A store removal reads its key, never its store (the record the key names is removed, not read).
      const removal = this.storeDelete(step);
      this.stepReads.set(step, (reads = this.readsIn(removal ? [removal.key] : stepExpressions(step, this.transforms))));
    }
    return reads;
  }

  /** readsOf for a pipeline stage's `when` condition. */
  readsOfExpr(expr: Expr): StepReads {
    let reads = this.stepReads.get(expr);
    if (reads === undefined) this.stepReads.set(expr, (reads = this.readsIn([expr])));
    return reads;
  }

  private readsIn(exprs: readonly (Expr | undefined)[]): StepReads {
    const stores = new Set<string>();
    const syncKeys = new Set<string>();
    for (const expr of exprs) {
      walkExpr(expr, (e) => {
        if (e.kind === 'Call' && e.callee.name === 'sync_state.get' && e.args[0]?.kind === 'String') {
          // A declared `sync_state` is an ordinary store, and its `get` reads it (eval/builtins.ts).
          const declared = this.stores.get('sync_state');
          if (!declared) syncKeys.add(e.args[0].value);
          else if (declared.type.kind !== 'memory') stores.add('sync_state');
        }
        if (e.kind !== 'Ref' || e.leadingDot) return; // `orders` and `orders.total` both read the store
        const decl = this.stores.get(e.parts[0]!);
        if (decl && decl.type.kind !== 'memory') stores.add(e.parts[0]!);
      });
    }
    return stores.size === 0 && syncKeys.size === 0 ? NO_READS : { stores: [...stores], syncKeys: [...syncKeys], none: false };
  }

  /** The source declared first: the default for fetches without `source:` (§C.1.1). */
  get defaultSource(): SourceDecl | undefined {
    return this.mission.sources[0];
  }

  get pipeline() {
    return this.mission.pipelines[this.mission.pipelines.length - 1];
  }

  text(file: string, span: Span): string {
    return (this.texts.get(file) ?? '').slice(span.start, span.end);
  }

  /** In a mission of several files (a folder), the name of the file `action` is declared in; undefined in a one-file mission. */
  actionFile(action: string): string | undefined {
    const file = this.actions.get(action)?.file;
    return this.texts.size > 1 && file !== undefined ? basename(file) : undefined;
  }

  /** The line of the step at `offset` in the file of `action` (1-based). */
  stepLine(action: string, offset: number): number {
    return this.line(this.actions.get(action)?.file ?? this.unit.root.file, offset);
  }

  line(file: string, offset: number): number {
    return this.position(file, offset).line;
  }

  /** Line and column (1-based, as `reqon check` gives them) of `offset` in `file`. */
  position(file: string, offset: number): { line: number; column: number } {
    let index = this.lineIndexes.get(file);
    if (!index) {
      index = new LineIndex(this.texts.get(file) ?? '');
      this.lineIndexes.set(file, index);
    }
    return index.position(offset);
  }
}

/** The expressions a step evaluates itself (not those of nested steps); an `apply`'s transform's too. */
function stepExpressions(step: Step, transforms: ReadonlyMap<string, import('../lang/ast.js').TransformDecl>): (Expr | undefined)[] {
  switch (step.kind) {
    case 'Fetch':
    case 'Call': {
      const o = step.options;
      return [step.kind === 'Fetch' ? step.path : undefined, o.body, o.params, o.headers, o.until, o.since?.kind === 'SinceExpr' ? o.since.value : o.since?.key];
    }
    case 'For': {
      const c = step.collection;
      const bareStore = c.kind === 'Ref' && c.parts.length === 1;
      return [bareStore ? undefined : c, step.where];
    }
    case 'Map':
      return [step.source, ...step.fields.map((f) => f.value)];
    case 'Apply': {
      const t = transforms.get(step.transform.name);
      return [step.target, ...(t?.variants.flatMap((v) => [v.guard, ...v.fields.map((f) => f.value)]) ?? [])];
    }
    case 'Validate':
      return [step.target, ...step.constraints.map((c) => c.condition)];
    case 'Store':
      return [step.source, step.key];
    case 'Let':
      return [step.value];
    case 'Match':
      return [step.subject, ...step.arms.flatMap((a) => [a.guard, ...(a.body.kind === 'Directive' ? directiveExpressions(a.body.directive) : [])])];
    case 'Wait':
      return [step.eventFilter, step.storage?.key];
    case 'Flow':
      return directiveExpressions(step.directive);
    case 'Pause':
      return [];
  }
}

/** An `abort`'s message, a `queue S { item, key }`'s record and key. */
function directiveExpressions(d: import('../lang/ast.js').Directive): (Expr | undefined)[] {
  if (d.kind === 'Abort') return [d.messageExpr];
  if (d.kind === 'Queue') return [d.item, d.key];
  return [];
}

/** See MissionModel.iterationsSkippable. */
function leavesOnlyEvents(step: Step, outerLets: ReadonlySet<LetStep>, setsCheckpoint: (step: StoreStep) => boolean): boolean {
  const only = (steps: readonly Step[]) => steps.every((s) => leavesOnlyEvents(s, outerLets, setsCheckpoint));
  switch (step.kind) {
    case 'Fetch':
    case 'Call':
      // A request's attempts are told to its source's circuit breaker (and rate limiter) as they
      // replay: an iteration taken as recorded would hide them, and a resume would send what a
      // run without the crash refused (a `since` fetch also hands the action a checkpoint).
      return false;
    case 'Pause':
    case 'Wait':
      return false;
    case 'For':
      return only(step.body);
    case 'Match':
      return step.arms.every((arm) => arm.body.kind !== 'Steps' || only(arm.body.steps));
    case 'Validate':
      return only(step.fallback ?? []);
    case 'Let':
      return !outerLets.has(step);
    case 'Store':
      return !setsCheckpoint(step);
    case 'Map':
    case 'Apply':
    case 'Flow':
      return true;
  }
}
