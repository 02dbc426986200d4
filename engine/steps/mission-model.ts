/**
 * The mission as the runtime uses it: declarations indexed by name, and source positions
 * resolvable to lines (for `step.started` events and error messages). Built once per run from a
 * checked MissionUnit; read-only afterwards.
 */
import type {
  ActionDecl,
  MissionDecl,
  SchemaDecl,
  SourceDecl,
  Span,
  StoreDecl,
  TransformDecl,
} from '../lang/ast.js';
import type { ForStep, Step, StoreStep } from '../lang/ast.js';
import { LineIndex } from '../lang/line-index.js';
import type { MissionUnit } from '../lang/mission-unit.js';
import { findStreamedSyncs, type PagedFetch } from './streamed-sync.js';

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
  private readonly texts = new Map<string, string>();
  private readonly lineIndexes = new Map<string, LineIndex>();

  constructor(
    readonly unit: MissionUnit,
    readonly mission: MissionDecl,
  ) {
    for (const s of mission.sources) this.sources.set(s.name.name, s);
    for (const s of mission.stores) this.stores.set(s.name.name, s);
    for (const s of mission.schemas) this.schemas.set(s.name.name, s);
    for (const t of mission.transforms) this.transforms.set(t.name.name, t);
    for (const a of mission.actions) this.actions.set(a.name.name, a);
    for (const f of unit.files) this.texts.set(f.path, f.text);
    this.streamed = findStreamedSyncs(this.actions.values(), this.stores);
    this.hasMemoryStores = mission.stores.some((s) => s.type.kind === 'memory');
  }

  /** The store step `step` streams its pages into, when it is the fetch of a streamed sync. */
  streamedStore(step: Step): StoreStep | undefined {
    return step.kind === 'Fetch' || step.kind === 'Call' ? this.streamed.get(step) : undefined;
  }

  /**
   * True when an iteration of `loop` leaves nothing behind for later steps but its recorded
   * events and store writes: its scope is its own (Frame.child), and no step in its body —
   * nested bodies included — does more. Not so for a fetch with `since` (it hands the action a
   * pending checkpoint), nor for `pause`/`wait` (kept out of the shortcut: rare in long loops).
   */
  iterationsSkippable(loop: ForStep): boolean {
    let known = this.skippableLoops.get(loop);
    if (known === undefined) this.skippableLoops.set(loop, (known = loop.body.every(leavesOnlyEvents)));
    return known;
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

  /** The line of the step at `offset` in the file of `action` (1-based). */
  stepLine(action: string, offset: number): number {
    return this.line(this.actions.get(action)?.file ?? this.unit.root.file, offset);
  }

  line(file: string, offset: number): number {
    let index = this.lineIndexes.get(file);
    if (!index) {
      index = new LineIndex(this.texts.get(file) ?? '');
      this.lineIndexes.set(file, index);
    }
    return index.position(offset).line;
  }
}

/** See MissionModel.iterationsSkippable. */
function leavesOnlyEvents(step: Step): boolean {
  switch (step.kind) {
    case 'Fetch':
    case 'Call':
      return step.options.since === undefined;
    case 'Pause':
    case 'Wait':
      return false;
    case 'For':
      return step.body.every(leavesOnlyEvents);
    case 'Match':
      return step.arms.every((arm) => arm.body.kind !== 'Steps' || arm.body.steps.every(leavesOnlyEvents));
    case 'Validate':
      return (step.fallback ?? []).every(leavesOnlyEvents);
    case 'Let':
    case 'Map':
    case 'Apply':
    case 'Store':
    case 'Flow':
      return true;
  }
}
