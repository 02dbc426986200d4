/**
 * The journal: one run's cursor over its own log — replaying, then live.
 *
 * On resume the executor re-walks the mission from the top. Every step asks the journal for the
 * events it would write (`take`): while the log holds them, the journal answers from the log
 * (recorded responses, recorded `now()` values, recorded store writes); once a step finds nothing
 * recorded, it runs live and its new events are buffered (`emit`) and committed (`commit`).
 *
 * Recorded events are matched by step path. A step path names one execution of one step
 * (action visit and attempt, step index, loop iteration, match arm), so the order of events
 * *within* a path is deterministic even when concurrent branches interleave differently from one
 * run to the next. Divergence is caught two ways: a step whose path holds a different event type
 * than it asks for, and — outside concurrent regions — a step that goes live while recorded
 * events elsewhere are still unconsumed (the original went somewhere the mission no longer goes).
 *
 * Sequential code asks for recorded events in log order, so the usual answer is simply the first
 * unconsumed event (a cursor, no lookup); only when a step asks for a path that is not next (in
 * concurrent regions, or at a divergence) is an index by path built, once, over what is left.
 * Both answer "the first unconsumed event at this path", so the two can be mixed freely.
 *
 * Invariant: nothing is appended before the replayed prefix is fully consumed in sequential code,
 * and every commit for this run goes through one promise chain, so the log sees this run's
 * commits strictly in order (the log's per-lease contract).
 *
 * The journal's state, changed in one place each:
 *   replaying — recorded events remain that the walk has not consumed (answers come from the log)
 *   live      — the log ran out: what the walk does is new, buffered by `emit`, written by `commit`
 *   closed    — the run ended (completed, failed, suspended) or gave up its lease: `close()`;
 *               any later emit, buffer or commit is refused — nothing may follow a run's end.
 */
import type { Clock } from '../env/env.js';
import type { EventPayloads, EventType, NewEvent, StoredEvent } from '../log/events.js';
import type { CommitEntry, EventLog, Lease, MissionFiles, ReplayReader, StatusChange } from '../log/log.js';
import { asLogged } from '../log/loggable.js';
import { isDeepStrictEqual } from 'node:util';
import { identityAt, type IdentitySegments } from './fork-identity.js';
import { NondeterminismError } from './nondeterminism-error.js';
import type { ConcurrentConstruct } from './step-path.js';

/** Events written by the resume machinery rather than by the mission walk: never asked for. */
export const META_EVENT_TYPES: readonly EventType[] = ['run.started', 'run.resumed'];
const META_TYPES: ReadonlySet<EventType> = new Set<EventType>(META_EVENT_TYPES);

/** Recorded events read as the walk reaches them (EventLog.replayReader, meta events skipped). */
export interface StreamedRecord {
  reader: ReplayReader;
  /** The run's last seq when the reader was made: the end of what is replayed. */
  lastSeq: number;
}

/** What Journal.skipFinishedPages took as recorded. */
export interface FinishedPages {
  pages: number;
  items: number;
  /** The first page's status (the fetch's status). */
  firstStatus?: number;
  /** The last page's answer: the page a walk from there holds the next one against. */
  lastAnswer?: StoredEvent<'http.response'>;
  /** The first page's answer whose body named the list field (skipFinishedPages' `namesList`). */
  listAnswer?: StoredEvent<'http.response'>;
}

/** Events read from a StreamedRecord at a time. */
const STREAM_CHUNK = 4096;
/** Passed events a streamed record's window lets go of at a time (one slice of what remains). */
const WINDOW_TRIM = 4096;
/** Events read at a time while finished pages are taken as recorded (skipFinishedPages): a request and its outcome. */
const SKIM_CHUNK = 2;

/** Thrown in verify mode when the walk reaches the end of the log (the normal end of a verify). */
export class ReplayExhausted extends Error {
  constructor(readonly stepPath: string) {
    super(`replay reached the end of the log at ${stepPath}`);
    this.name = 'ReplayExhausted';
  }
}

/**
 * The run's log is not one this engine wrote: events are missing (seq is contiguous from 1,
 * GUARANTEES 1, and a finished run ends with its closing event) or an event says two different
 * things. Rows were deleted or edited, or the file damaged, outside the engine. Never a replay's
 * normal end, and never a divergence of the mission.
 */
export class DamagedLogError extends Error {
  constructor(
    readonly runId: string,
    /** What is wrong, e.g. "seq 12 is missing, of the 64 events its run row counts". */
    readonly detail: string,
    /** The seq where the damage is, when known. */
    readonly atSeq?: number,
  ) {
    super(`the log of run ${runId} is damaged: ${detail}`);
    this.name = 'DamagedLogError';
  }

  /** Seq `seq` is not in the log, which the run row says holds `lastSeq` events. */
  static missing(runId: string, seq: number, lastSeq: number): DamagedLogError {
    return new DamagedLogError(runId, `seq ${seq} is missing, of the ${lastSeq} events its run row counts (deleted outside the engine)`, seq);
  }
}

/** Positions (in `events`) of one path's events, in log order; `next` skips consumed ones. */
interface PathQueue {
  at: number[];
  next: number;
}

/** What the mission asked for, in walk order: the "replayed" column of a verify report. */
export interface AskedEntry {
  seq: number;
  stepPath: string;
  type: EventType;
  effectId: string | null;
}

export interface JournalOptions {
  /** Verify mode: answer only from the log; reaching its end ends the walk. */
  verifyOnly?: boolean;
  /** Keep `asked` (what the walk asked for, in order): verify reports it; a run does not need it. */
  recordAsked?: boolean;
  /** Flush buffered non-durable events once this many are waiting. */
  flushThreshold?: number;
  /** …or once the oldest has waited this long (ms), so watchers see a run move. */
  flushIntervalMs?: number;
  /**
   * Allow `skipFinishedIteration` and `skipFinishedPages`: the mission is the very one that
   * recorded this log and no crash point is armed, so a finished iteration or page walked again
   * could only ask for what it recorded (see for-step.ts, fetch-step.ts).
   */
  skipFinished?: boolean;
  /** A fork: the stretches of the recorded log whose effects other runs named (fork-identity.ts). */
  identities?: IdentitySegments;
}

export class Journal {
  /**
   * Recorded events the walk asks for (meta events left out), in log order. With a streamed
   * record only a window is held: events are read as the cursor reaches them and dropped once
   * it has passed them (consumed, never asked again); an out-of-order ask reads the rest.
   */
  private events: (StoredEvent | undefined)[] = [];
  /**
   * The position of `events[0]`: a streamed record drops what the cursor has passed, so the
   * window holds positions `offset` to `loaded` (0 and all of them otherwise).
   */
  private offset = 0;
  /** How many positions have been read (or skipped unread, see finishedPageAt) so far. */
  private loaded = 0;
  private readonly total: number;
  private readonly stream: ReplayReader | null;
  /** 1 where `events[i]` was consumed (possibly out of order, through the path index). */
  private readonly consumed: Uint8Array;
  /** Every event before this position is consumed. */
  private cursor = 0;
  /** Built on the first out-of-order ask; null while the walk follows the log. */
  private byPath: Map<string, PathQueue> | null = null;
  private unconsumed = 0;
  private pending: CommitEntry[] = [];
  /** How many of `pending` are resume-machinery events (pendingMeta). */
  private pendingMetaCount = 0;
  private missionChange: { missionHash: string; missionFiles: MissionFiles } | undefined;
  private closed = false;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly flushThreshold: number;
  private readonly flushIntervalMs: number;
  private lastCommitAt: number;
  /** The concurrent constructs running now (nested ones, and side by side in parallel branches); relaxes the "went live too early" check (see goingLive). */
  private readonly constructs: ConcurrentConstruct[] = [];
  /** Branches (innermost branch keys) that went live with nothing of theirs left in the log. */
  private readonly liveBranches = new Set<string>();
  /** Filled only with `recordAsked` (verify). */
  readonly asked: AskedEntry[] = [];
  /**
   * Under verify: the failures the log shows arising at a step, by step path (failureKey), that a
   * failure passed up may be (checkPassedUp); one a loop tolerated is forgotten (forgetFailuresIn).
   */
  private readonly arisenFailures = new Map<string, string>();
  /** Under verify: the messages (as failureKey compares them) of the failures passed up so far that were checked. */
  private readonly passedUpMessages = new Set<string>();
  private readonly recordAsked: boolean;
  readonly lastRecordedSeq: number;

  constructor(
    private readonly log: EventLog | null,
    private lease: Lease | null,
    readonly runId: string,
    recorded: readonly StoredEvent[] | StreamedRecord,
    private readonly clock: Clock,
    private readonly options: JournalOptions = {},
  ) {
    this.flushThreshold = options.flushThreshold ?? 512;
    this.flushIntervalMs = options.flushIntervalMs ?? 50;
    this.lastCommitAt = clock.now();
    this.recordAsked = options.recordAsked ?? false;
    if ('reader' in recorded) {
      this.stream = recorded.reader;
      this.total = recorded.reader.total;
      this.lastRecordedSeq = recorded.lastSeq;
    } else {
      this.stream = null;
      let last = 0;
      for (const event of recorded) {
        last = event.seq;
        if (!META_TYPES.has(event.type)) this.events.push(event);
      }
      this.total = this.loaded = this.events.length;
      this.lastRecordedSeq = last;
    }
    this.consumed = new Uint8Array(this.total);
    this.unconsumed = this.total;
  }

  /** True while recorded events remain that the walk has not consumed yet. */
  get replaying(): boolean {
    return this.unconsumed > 0;
  }

  /** Verify mode: the walk only compares with the log, and ends where it ends (nothing goes live). */
  get verifying(): boolean {
    return this.options.verifyOnly === true;
  }

  get state(): 'replaying' | 'live' | 'closed' {
    return this.closed ? 'closed' : this.unconsumed > 0 ? 'replaying' : 'live';
  }

  /** The run ended here: from now on the journal refuses to record anything (see the header). */
  close(): void {
    this.closed = true;
  }

  private assertOpen(what: string): void {
    if (this.closed) throw new Error(`internal: run ${this.runId} has ended; its journal refuses ${what}`);
  }

  /** Live events are buffered, waiting for the next commit. */
  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  get currentLease(): Lease | null {
    return this.lease;
  }

  /**
   * Concurrent branches start: the iterations of a concurrent loop, or the actions of a parallel
   * stage. `construct` tells which branch of it a step path is in, so that a branch going live
   * while the log still holds events can be told apart from a divergence (goingLive).
   */
  enterConcurrent(construct: ConcurrentConstruct): void {
    this.constructs.push(construct);
  }

  leaveConcurrent(construct: ConcurrentConstruct): void {
    const at = this.constructs.lastIndexOf(construct);
    if (at >= 0) this.constructs.splice(at, 1);
  }

  /**
   * Whether the walk is inside concurrent branches (a parallel stage, a concurrent loop): a pause
   * or wait reached there leaves the run's suspension to the executor, once every branch has
   * ended or suspended (steps/signals.ts SuspendSignal.deferredAt).
   */
  get inConcurrent(): boolean {
    return this.constructs.length > 0;
  }

  /**
   * Whether an effect id derived now may differ from the one recorded for the same effect: a fork
   * recorded by an engine that named effects in concurrent branches by where the walk's cursor
   * stood (how the branches interleaved, which a replay does not repeat). Such ids are taken as
   * recorded, and counted.
   */
  get effectIdsInterleaved(): boolean {
    return this.constructs.length > 0 && this.holdsOtherRunsEffects;
  }

  /** A fork's log: some of its effects are named by the run it was copied from (fork-identity.ts). */
  get holdsOtherRunsEffects(): boolean {
    return (this.options.identities?.length ?? 0) > 0;
  }

  /** Recorded effect ids taken without being derived again (effectIdsInterleaved): verify names them as not checked. */
  uncomparedEffectIds = 0;

  /**
   * Whether a recorded effect id stands for the one derived now: the same, or (effectIdsInterleaved)
   * taken as recorded and counted as not compared.
   */
  takesEffectId(recorded: string, derived: string): boolean {
    if (recorded === derived) return true;
    if (!this.effectIdsInterleaved) return false;
    this.uncomparedEffectIds++;
    return true;
  }

  /**
   * The run id that names an effect (and a derived id) of the step at `stepPath` asked for now:
   * this run's, except in a fork for an effect recorded in the stretch copied from another run
   * (fork-identity.ts). In sequential code that is where the walk's cursor stands. In concurrent
   * branches the cursor stands wherever the other branches left it, so the step's own next
   * recorded event decides — none (the effect is live): this run's own. Before, concurrent
   * branches went by the cursor too, and a fork's own log diverged on its replay.
   */
  identityRunId(stepPath: string): string {
    const identities = this.options.identities;
    if (identities === undefined || identities.length === 0) return this.runId;
    if (this.constructs.length > 0) {
      // A step that logs nothing of its own (a `let` under `trace: minimal` deriving an id): the
      // next recorded event of its branch, as the cursor is in sequential code.
      let at = this.positionOf(stepPath);
      if (at < 0) at = this.nextInBranch(stepPath);
      return identityAt(identities, this.runId, at < 0 ? null : this.eventAt(at).seq);
    }
    return identityAt(identities, this.runId, this.unconsumed === 0 ? null : this.eventAt(this.cursor).seq);
  }

  /** The position of the first unconsumed event inside `stepPath`'s branch of every construct that has it in one, or -1. */
  private nextInBranch(stepPath: string): number {
    const branches = this.constructs.map((c) => c.branchOf(stepPath));
    if (branches.every((b) => b === undefined)) return -1;
    for (let i = this.cursor; i < this.total; i++) {
      if (this.consumed[i] === 1) continue;
      const path = this.eventAt(i).stepPath;
      if (this.constructs.every((c, k) => branches[k] === undefined || c.branchOf(path) === branches[k])) return i;
    }
    return -1;
  }

  /** The next recorded event at `stepPath`, without consuming it. */
  peek(stepPath: string): StoredEvent | undefined {
    const at = this.positionOf(stepPath);
    return at < 0 ? undefined : this.events[at - this.offset];
  }

  /**
   * Consume the next recorded event at `stepPath`, which must be of `type`. Returns undefined when
   * the path has nothing left: the caller runs live (and must `emit` what it does).
   */
  take<T extends EventType>(stepPath: string, type: T): StoredEvent<T> | undefined {
    const at = this.positionOf(stepPath);
    if (at >= 0) {
      const event = this.events[at - this.offset]!;
      if (event.type !== type) {
        throw new NondeterminismError(this.runId, stepPath, event.seq, describe(event), `a ${type} event`);
      }
      this.consumed[at] = 1;
      this.unconsumed--;
      if (at === this.cursor) this.advanceCursor();
      if (this.recordAsked) this.asked.push({ seq: event.seq, stepPath, type, effectId: effectIdOf(event.payload) });
      return event as StoredEvent<T>;
    }
    this.goingLive(stepPath, type);
    return undefined;
  }

  /**
   * Replay answer or live value: `compute` runs (and is recorded) only when live. A recorded input
   * (`value.recorded`) is handed back as the log will hold it, so live and replay act on one value.
   */
  record<T extends EventType>(stepPath: string, type: T, compute: () => EventPayloads[T]): EventPayloads[T] {
    const recorded = this.take(stepPath, type);
    if (recorded) return recorded.payload;
    let payload = compute();
    if (type === 'value.recorded') payload = asLogged(payload, `the value recorded at ${stepPath}`);
    this.emit(type, stepPath, payload);
    return payload;
  }

  /**
   * `record` for a marker (step.started, action.completed, …) whose payload the walk never reads
   * back: replayed, it is taken and checked exactly as `record` takes it (path and type), and its
   * recorded payload stays unread — a resume's reader reads a payload only when it is used.
   */
  mark<T extends Exclude<EventType, 'value.recorded'>>(stepPath: string, type: T, compute: () => EventPayloads[T]): void {
    if (!this.take(stepPath, type)) this.emit(type, stepPath, compute());
  }

  /**
   * `mark` for a pipeline stage's start or skip, whose recorded actions must be the ones the walk
   * runs there. Events are taken by step path, and every action's steps have paths of their own:
   * a pipeline edited from `run A then B` to `run B then A` took each action's events where they
   * were and verify said the run matched its log (helper 96). One small payload a stage, read on
   * every replay, so an edited resume is refused as verify is.
   */
  markStage(stepPath: string, type: 'stage.started' | 'stage.skipped', compute: () => EventPayloads['stage.started']): void {
    const recorded = this.take(stepPath, type);
    if (!recorded) {
      this.emit(type, stepPath, compute());
      return;
    }
    const was = (recorded.payload as { actions?: unknown } | null)?.actions;
    const now = compute().actions;
    if (!Array.isArray(was)) return;
    // A parallel stage's actions run side by side: their order in the list is not the run's.
    const inOrder = (names: readonly unknown[]) => (names.length > 1 ? [...names].map(String).sort() : names);
    const [a, b] = [inOrder(was), inOrder(now)];
    if (a.length === b.length && a.every((name, i) => name === b[i])) return;
    const told = (names: readonly unknown[]) => (names.length === 1 ? `action ${String(names[0])}` : `actions [${names.join(', ')}]`);
    throw new NondeterminismError(this.runId, stepPath, recorded.seq, `${type} of ${told(was)}`, `${type} of ${told(now)}`, {
      change: `the pipeline's stage ${stepPath} ran ${told(was)}, and now runs ${told(now)} (the stages' order or their actions changed)`,
    });
  }

  /**
   * `mark` for a step's failure: under verify the recorded one must be the same failure — the
   * same kind of step and, where the failure arose at this step (`arose`, not one of a step it
   * holds travelling up) and its message is the mission's own (`abort "…"`, a failed `validate`,
   * an expression's R-code), the same code and message. An edited `abort` with another reason, or
   * a failing `validate` in its place, was taken by path and type and reported as a match. Of a
   * request's or a store's failure only the step is compared (failureTold). A resume, edited or
   * not, reads no payload: what it carries on from is compared where it reaches an effect.
   */
  markFailure(stepPath: string, compute: () => EventPayloads['step.failed'], arose: boolean): void {
    const recorded = this.take(stepPath, 'step.failed');
    if (!recorded) {
      this.emit('step.failed', stepPath, compute());
      return;
    }
    if (!this.verifying) return;
    if (!arose) {
      this.checkPassedUp(recorded, () => compute().error);
      return;
    }
    const key = failureKey(recorded.payload?.error);
    if (key !== undefined) this.arisenFailures.set(stepPath, key);
    const was = failureTold(recorded.payload, arose);
    const now = failureTold(compute(), arose);
    if (was.stepType === now.stepType && was.code === now.code && was.compared === now.compared) return;
    const told = (t: FailureTold) => `${t.stepType} failing${t.message === undefined ? '' : ` (${t.code}: ${excerptOf(t.message)})`}`;
    throw new NondeterminismError(this.runId, stepPath, recorded.seq, told(was), told(now), { change: `the step failed otherwise: ${told(was)} became ${told(now)}` });
  }

  /**
   * `mark` for a failure passed up: an action's, a stage's (`action.failed`, `stage.failed`), or
   * the run's `run.failed`. Under verify its recorded error is checked as markFailure checks an
   * enclosing step's (checkPassedUp).
   */
  markPassedFailure<T extends 'action.failed' | 'stage.failed' | 'run.failed'>(stepPath: string, type: T, compute: () => EventPayloads[T]): void {
    const recorded = this.take(stepPath, type);
    if (!recorded) {
      this.emit(type, stepPath, compute());
      return;
    }
    if (this.verifying) this.checkPassedUp(recorded, () => compute().error);
  }

  /**
   * A failure passed up (an enclosing step's, an action's, a stage's, the run's) must be one the
   * log shows arising at a step (compared there with what the walk asks for), or the one the walk
   * reaches now: which one is the first of a concurrent loop's a replay need not repeat, but a
   * recorded one that no step failed with was written outside the engine (a damaged log) —
   * `reqon show` printed an edited run.failed as the run's failure, and verify passed it.
   */
  private checkPassedUp(recorded: { type: string; stepPath: string; seq: number; payload: unknown }, now: () => unknown): void {
    const error = (recorded.payload as { error?: unknown } | null)?.error;
    const key = failureKey(error);
    if (key !== undefined && (key === failureKey(now()) || this.arose(key))) {
      this.passedUpMessages.add(messageOf(key));
      return;
    }
    const e = error as { code: string; message: string };
    const told = key === undefined ? `an unreadable error ${excerptOf(JSON.stringify(error ?? null))}` : `"${excerptOf(`${e.code}: ${e.message}`)}"`;
    throw new DamagedLogError(
      this.runId,
      `its ${recorded.type} at seq ${recorded.seq}${recorded.stepPath ? ` (${recorded.stepPath})` : ''} says it failed with ${told}, which no step of the run failed with (changed outside the engine)`,
      recorded.seq,
    );
  }

  /**
   * Whether a failure passed up (failureKey) is one a step arose with and no loop tolerated; a
   * parallel stage's failure names each failed branch's (`Parallel stage failed: A: …; B: …`),
   * whichever a replay sees first, so it must be made of those and nothing else (composedOf).
   */
  private arose(key: string): boolean {
    for (const arisen of this.arisenFailures.values()) if (arisen === key) return true;
    if (!key.startsWith('parallel-failed\0')) return false;
    const parts = [...this.passedUpMessages, ...[...this.arisenFailures.values()].map((k) => withoutWhereWritten(messageOf(k)))];
    return composedOf(messageOf(key), parts);
  }

  /**
   * A loop tolerated the failure of its iteration at `iterationPath` (onError continue, queue):
   * it passes up no further, so no failure passed up may be it — a run.failed edited to such a
   * failure verified.
   */
  forgetFailuresIn(iterationPath: string): void {
    if (this.arisenFailures.size === 0) return;
    for (const path of [...this.arisenFailures.keys()]) {
      if (path === iterationPath || path.startsWith(`${iterationPath}/`) || path.startsWith(`${iterationPath}[`)) this.arisenFailures.delete(path);
    }
  }

  /**
   * `mark` for a step's end, whose payload holds what a pure step produced (a `let`'s binding, a
   * `map`'s record): under verify (`recordAsked`) the recorded payload must be the one the walk
   * derives now — an edited `let doubled = x * 3` re-derived its event while its value differed,
   * and verify said every event matched. A resume reads no such payload (its values are derived
   * again, and what reaches an effect is compared there).
   */
  markDerived<T extends Exclude<EventType, 'value.recorded'>>(stepPath: string, type: T, compute: () => EventPayloads[T]): void {
    const recorded = this.take(stepPath, type);
    if (!recorded) {
      this.emit(type, stepPath, compute());
      return;
    }
    if (!this.recordAsked) return;
    const computed = compute();
    let now: unknown;
    try {
      // As the log would hold it (a JSON round trip): what the recorded payload was read back from.
      now = JSON.parse(JSON.stringify(asLogged(computed, `the payload of ${type} at ${stepPath}`)));
    } catch {
      // A number the log cannot hold (Infinity, NaN): a live run's event held it as JSON writes
      // it, null, and so is it compared. A value JSON cannot write at all is no recorded one.
      try {
        now = JSON.parse(JSON.stringify(computed));
      } catch {
        now = { unwritable: String(computed) };
      }
    }
    // Deep equality, key order aside (an object's keys may be written in another order).
    if (isDeepStrictEqual(now, recorded.payload)) return;
    const excerpt = (value: unknown) => {
      const text = JSON.stringify(value);
      return text.length > 160 ? `${text.slice(0, 160)}…` : text;
    };
    throw new NondeterminismError(this.runId, stepPath, recorded.seq, `the step's result ${excerpt(recorded.payload)}`, `the result ${excerpt(now)}`, {
      change: `the step's result changed: ${excerpt(recorded.payload)} became ${excerpt(now)}`,
    });
  }

  /**
   * Consumes the recorded events of the loop iteration at `iterationPath` without the walk, when
   * the log shows that it finished: its events (its `loop.iteration` first, then everything at
   * paths below it) are next in the log and are followed by the `loop.iteration` of
   * `nextIterationPath`, and none of them is a `step.failed` (a tolerated failure leaves more
   * than events behind). Returns those events, for the caller to re-apply what they changed in
   * the run's memory; undefined when the iteration must be walked — also whenever the walk is not
   * simply following the log (concurrent branches, an out-of-order ask already made, verify).
   */
  skipFinishedIteration(iterationPath: string, nextIterationPath: string): StoredEvent[] | undefined {
    if (!this.followingLog()) return undefined;
    const first = this.eventAt(this.cursor);
    if (first.type !== 'loop.iteration' || first.stepPath !== iterationPath) return undefined;
    const below = `${iterationPath}/`;
    const events: StoredEvent[] = [first];
    let end = this.cursor + 1;
    for (; end < this.total; end++) {
      const event = this.eventAt(end);
      if (!event.stepPath.startsWith(below)) break;
      if (event.type === 'step.failed') return undefined;
      events.push(event);
    }
    // The log ends inside the iteration (a crash, a pause), or the loop did not go on to the next
    // iteration (a flow signal ended it): walk it.
    if (end === this.total) return undefined;
    const next = this.eventAt(end);
    if (next.type !== 'loop.iteration' || next.stepPath !== nextIterationPath) return undefined;
    // Without a path index, everything from the cursor on is unconsumed: mark the run of events.
    this.consumed.fill(1, this.cursor, end);
    this.unconsumed -= end - this.cursor;
    this.advanceCursor();
    return events;
  }

  /**
   * Consumes the recorded events of the finished leading pages of a streamed sync (fetch at
   * `fetchPath`, its store at `storePath`) without the walk, as skipFinishedIteration does for
   * loop iterations, and says how many pages and items they held. A page is finished when the
   * log shows, next from the cursor: its one attempt at `fetchPath` (an `http.request` and its
   * `http.response`; a page retried is walked, so that its failed attempts reach the circuit
   * breaker), then a batch of at least `minItems` (and at least one) `store.write` events at
   * `storePath` — a table batch commits with its events, so all of them mean all of its rows —
   * and then the NEXT page's `http.request` (the pagination went on).
   * Anything else — a retry with no outcome, a failure, a `page.completed`, the log's end —
   * stops the skip there: that page and the rest are walked. Of their payloads only these are
   * read: the first page's status (the fetch's status, fetch-step.ts), the last page's answer
   * (where the check against the previous page starts), and the answers `namesList` asks about
   * until it decides: true for the page that named the list field later pages are held to, false
   * for a page with records that names none (a list for a body: later pages are not read for
   * one), undefined for a page with no records (the next is asked) — page 1's decides, nearly
   * always. Reading every page's would load and parse every recorded body (most of a sync's log)
   * for nothing.
   */
  skipFinishedPages(
    fetchPath: string,
    storePath: string,
    minItems: number,
    namesList: (body: unknown) => boolean | undefined = () => false,
  ): FinishedPages {
    if (!this.followingLog()) return { pages: 0, items: 0 };
    const finished: FinishedPages = { pages: 0, items: 0 };
    let listDecided = false;
    for (;;) {
      const page = this.finishedPageAt(this.cursor, fetchPath, storePath, Math.max(1, minItems));
      if (page === undefined) return finished;
      finished.pages++;
      finished.items += page.writes;
      finished.firstStatus ??= page.answer.payload.response.status;
      finished.lastAnswer = page.answer;
      if (!listDecided) {
        const names = namesList(page.answer.payload.response.body);
        if (names !== undefined) listDecided = true;
        if (names === true) finished.listAnswer = page.answer;
      }
      // Without a path index, everything from the cursor on is unconsumed: mark the page's
      // events, and let the window go past them before reading the next page.
      this.consumed.fill(1, this.cursor, page.end);
      this.unconsumed -= page.end - this.cursor;
      this.advanceCursor();
    }
  }

  /** The finished page whose events start at `start` (see skipFinishedPages): where they end and its writes. */
  private finishedPageAt(
    start: number,
    fetchPath: string,
    storePath: string,
    minItems: number,
  ): { end: number; writes: number; answer: StoredEvent<'http.response'> } | undefined {
    // Read a few events at a time here: a chunk read ahead would bring the page's writes into
    // memory, which measureRun lets the log count where they lie.
    const at = (i: number): StoredEvent | undefined => (i < this.total ? this.eventAt(i, SKIM_CHUNK) : undefined);
    let i = start;
    let answer: StoredEvent<'http.response'> | undefined;
    for (let attempts = 0; ; attempts++) {
      const request = at(i);
      if (request?.type !== 'http.request' || request.stepPath !== fetchPath) break;
      // A page answered after a failed attempt is walked: its attempts must reach the source's
      // circuit breaker as they replay (fetch-step.ts), which a page taken as recorded would hide.
      if (attempts > 0) return undefined;
      const outcome = at(i + 1);
      if (outcome?.stepPath !== fetchPath || (outcome.type !== 'http.response' && outcome.type !== 'http.error')) return undefined;
      answer = outcome.type === 'http.response' ? (outcome as StoredEvent<'http.response'>) : undefined;
      i += 2;
    }
    if (answer === undefined) return undefined;
    let writes = 0;
    const isWrite = (e: Pick<StoredEvent, 'type' | 'stepPath'> | undefined) => e?.type === 'store.write' && e.stepPath === storePath;
    while (i < this.loaded && isWrite(this.events[i - this.offset])) {
      writes++;
      i++;
    }
    // The rest of the page's writes, still in the log: measured there, and passed over only if
    // the page turns out finished (else the walk reads them as usual).
    const run = i === this.loaded && i < this.total ? this.stream?.measureRun?.('store.write', storePath) : undefined;
    let next: Pick<StoredEvent, 'type' | 'stepPath'> | undefined;
    if (run !== undefined) {
      writes += run.length;
      i += run.length;
      next = run.after;
    } else {
      for (let e = at(i); isWrite(e); e = at(i)) {
        writes++;
        i++;
      }
      next = at(i);
    }
    if (writes < minItems || next?.type !== 'http.request' || next.stepPath !== fetchPath) return undefined;
    if (run !== undefined) {
      run.passOver();
      // Positions never read: the caller consumes them at once, and the window is empty after.
      this.loaded += run.length;
    }
    return { end: i, writes, answer };
  }

  /** The walk simply follows the log and may take finished work as recorded (JournalOptions.skipFinished). */
  private followingLog(): boolean {
    if (!this.options.skipFinished || this.recordAsked || this.options.verifyOnly) return false;
    return this.unconsumed > 0 && this.constructs.length === 0 && this.byPath === null;
  }

  /**
   * True when the log shows the fetch at `fetchPath` streamed into the store at `storePath` (both
   * steps started back to back, before any page): how the recorded part of a run went decides how
   * it replays, even if an edit after it changed what the mission would choose now. Answers only
   * while the walk follows the log in order (no path index, no concurrent branch).
   */
  recordedAsStreamed(fetchPath: string, storePath: string): boolean {
    if (this.byPath !== null || this.constructs.length > 0 || this.cursor + 1 >= this.total) return false;
    const first = this.eventAt(this.cursor);
    const second = this.eventAt(this.cursor + 1);
    return first.type === 'step.started' && first.stepPath === fetchPath && second.type === 'step.started' && second.stepPath === storePath;
  }

  /** Buffer a live event; it reaches the log with the next commit. */
  emit<T extends EventType>(type: T, stepPath: string, payload: EventPayloads[T]): void {
    this.assertOpen(`a ${type} event at ${stepPath}`);
    // Steps that peek (an HTTP attempt) emit without a `take`: the same check keeps a divergent
    // replay from recording — or sending — anything new while recorded events remain.
    this.goingLive(stepPath, type);
    const event: NewEvent = { type, stepPath, payload, recordedAt: this.clock.now() } as NewEvent;
    this.pending.push({ kind: 'event', event });
    if (this.recordAsked) this.asked.push({ seq: 0, stepPath, type, effectId: effectIdOf(payload) });
  }

  /** Buffer entries (table writes) that must land in the same transaction as the events around them. */
  buffer(entries: readonly CommitEntry[]): void {
    this.assertOpen('store writes');
    for (const entry of entries) this.pending.push(entry);
  }

  /** The run's new mission, committed with the next commit (an edit that replays the log). */
  adoptMission(mission: { missionHash: string; missionFiles: MissionFiles }): void {
    this.missionChange = mission;
  }

  /** Buffer a resume-machinery event (`run.resumed`): not part of the walk, never asked for. */
  pendingMeta(event: NewEvent): void {
    if (this.options.verifyOnly) return;
    this.pending.push({ kind: 'event', event });
    this.pendingMetaCount++;
  }

  /**
   * Commit buffered events when enough have accumulated or they have waited long enough. Pure
   * steps ride on this; it never waits for the disk (a lost tail is simply redone on replay).
   */
  async maybeFlush(): Promise<void> {
    // A resume's marker alone waits for the walk's first event of its own: a replay that diverges
    // before it goes live appends nothing (GUARANTEES 14), however long its walk took.
    if (this.pending.length === this.pendingMetaCount) return;
    if (this.pending.length >= this.flushThreshold || this.clock.now() - this.lastCommitAt >= this.flushIntervalMs) {
      await this.commit({ durable: false });
    }
  }

  /**
   * Commit everything buffered plus `extra` entries, atomically. `durable` waits for the disk:
   * required before anything leaves the process (output commit).
   */
  commit(options: { durable: boolean; extra?: CommitEntry[]; status?: StatusChange }): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`internal: run ${this.runId} has ended; its journal refuses a commit`));
    const entries = options.extra ? this.pending.concat(options.extra) : this.pending;
    this.pending = [];
    this.pendingMetaCount = 0;
    this.lastCommitAt = this.clock.now();
    if (this.options.verifyOnly || !this.log || !this.lease) return Promise.resolve();
    if (entries.length === 0 && !options.status) return this.chain.then(() => undefined);
    const log = this.log;
    const mission = this.missionChange;
    this.missionChange = undefined;
    const commitOptions = { durable: options.durable, status: options.status, returnEvents: false, ...(mission ? { mission } : {}) };
    const next = this.chain.then(async () => {
      await log.commit(this.lease!, entries, commitOptions);
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Renew the lease through the same chain as commits (the log wants them serialised). */
  renewLease(ttlMs: number): Promise<void> {
    if (!this.log || !this.lease) return Promise.resolve();
    const log = this.log;
    const next = this.chain.then(async () => {
      this.lease = await log.renew(this.lease!, this.clock.now(), ttlMs);
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Wait for every queued commit. */
  async settle(): Promise<void> {
    await this.chain;
  }

  /** The first recorded event the walk has not asked for, and how many such are left. */
  unreached(): { count: number; first: StoredEvent } | undefined {
    const first = this.unconsumed > 0 ? this.firstUnconsumed() : undefined;
    return first ? { count: this.unconsumed, first } : undefined;
  }

  /** After the walk: recorded events nobody asked for mean the mission no longer reaches them. */
  assertFullyConsumed(): void {
    if (this.unconsumed === 0) return;
    const first = this.firstUnconsumed();
    if (!first) return;
    // Recorded events after it were asked for: the walk went on past it (the step that recorded
    // it is gone), which "finished without reaching it" would misstate.
    const passed = this.consumed.indexOf(1, this.cursor + 1) >= 0;
    throw new NondeterminismError(
      this.runId,
      first.stepPath,
      first.seq,
      describe(first),
      passed ? 'nothing: the walk went on past it without asking for it (the step that recorded it is no longer where it was)' : 'nothing (the mission finished without reaching it)',
    );
  }

  /**
   * Verify mode, where a step is about to go live (`type` next at `stepPath`, no recorded one
   * left for it): what going live throws — the log's end, or a divergence — thrown now, before
   * the live work's waits (a rate limit's, a retry's delay), which a verify must never sit out
   * (probe 107 K2: an edit raising `maxWait` slept out a recorded Retry-After). Nothing outside verify.
   */
  verifyGoingLive(stepPath: string, type: EventType): void {
    if (this.verifying) this.goingLive(stepPath, type);
  }

  private goingLive(stepPath: string, type: EventType): void {
    // Divergence first: in verify mode too, going past the log while recorded events are left
    // is a divergence, not the normal end of a verify.
    if (this.unconsumed > 0) {
      const left = this.constructs.length === 0 ? this.firstUnconsumed() : this.leftBehindByBranch(stepPath);
      if (left) {
        throw new NondeterminismError(this.runId, stepPath, left.seq, `${describe(left)} next`, `a ${type} event at ${stepPath}`);
      }
    }
    if (this.options.verifyOnly) throw new ReplayExhausted(stepPath);
  }

  /**
   * Inside concurrent branches one branch may go live while others still replay: the log is a
   * prefix of a run whose branches interleaved (a crash caught them at different points). What
   * the log holds then is only other branches' events. A recorded event left in the going-live
   * branch itself (its steps run in order), or outside every construct that separates it from
   * this branch (the loop's end, a step after the stage), means the log went on where the mission
   * now does something else: an edit inserted or appended a step there. That event is returned.
   */
  private leftBehindByBranch(stepPath: string): StoredEvent | undefined {
    const key = this.constructs.map((c) => c.branchOf(stepPath) ?? '').join('\u0000');
    // The events left only shrink: a branch found clean stays clean.
    if (this.liveBranches.has(key)) return undefined;
    for (let i = this.cursor; i < this.total; i++) {
      if (this.consumed[i] === 1) continue;
      const event = this.eventAt(i);
      const separated = this.constructs.some((c) => {
        const mine = c.branchOf(stepPath);
        const theirs = c.branchOf(event.stepPath);
        return mine !== undefined && theirs !== undefined && mine !== theirs;
      });
      if (!separated) return event;
    }
    this.liveBranches.add(key);
    return undefined;
  }

  private firstUnconsumed(): StoredEvent | undefined {
    return this.cursor < this.total ? this.eventAt(this.cursor) : undefined;
  }

  /** The recorded event at `index` (< total), read from the stream (`chunk` at a time) if it is not yet. */
  private eventAt(index: number, chunk = STREAM_CHUNK): StoredEvent {
    while (index >= this.loaded) this.readChunk(chunk);
    return this.events[index - this.offset]!;
  }

  private readChunk(max: number): void {
    const chunk = this.stream?.next(max) ?? [];
    if (chunk.length === 0) {
      throw new DamagedLogError(this.runId, `it holds ${this.loaded} of the ${this.total} replayed events its run row counts (deleted outside the engine)`);
    }
    for (const event of chunk) this.events[this.loaded++ - this.offset] = event;
  }

  /** Position of the first unconsumed event at `stepPath`, or -1. */
  private positionOf(stepPath: string): number {
    if (this.unconsumed === 0) return -1;
    // In log order (sequential code): the first unconsumed event overall is the first at its path.
    if (this.eventAt(this.cursor).stepPath === stepPath) return this.cursor;
    const queue = (this.byPath ??= this.indexRemaining()).get(stepPath);
    if (!queue) return -1;
    while (queue.next < queue.at.length && this.consumed[queue.at[queue.next]!] === 1) queue.next++;
    return queue.next < queue.at.length ? queue.at[queue.next]! : -1;
  }

  private advanceCursor(): void {
    while (this.cursor < this.total && this.consumed[this.cursor] === 1) this.cursor++;
    // Passed: never asked again. A streamed record lets it go (a resume holds a window): at once
    // when the window is empty, else once the passed part is most of it (so each slice copies
    // less than it drops).
    const passed = this.cursor - this.offset;
    if (this.stream !== null && passed > 0 && (this.cursor >= this.loaded || (passed >= WINDOW_TRIM && passed >= this.loaded - this.cursor))) {
      this.events = this.cursor >= this.loaded ? [] : this.events.slice(passed);
      this.offset = this.cursor;
    }
  }

  /** Index by path of the events not consumed yet (those before the cursor never will be asked). */
  private indexRemaining(): Map<string, PathQueue> {
    // Out of log order, any remaining event may be next: read them all.
    while (this.loaded < this.total) this.readChunk(this.total - this.loaded);
    const index = new Map<string, PathQueue>();
    for (let i = this.cursor; i < this.total; i++) {
      if (this.consumed[i] === 1) continue;
      const path = this.events[i - this.offset]!.stepPath;
      let queue = index.get(path);
      if (!queue) index.set(path, (queue = { at: [], next: 0 }));
      queue.at.push(i);
    }
    return index;
  }
}

function describe(event: StoredEvent): string {
  const payload = event.payload as unknown as Record<string, unknown>;
  const detail =
    typeof payload?.stepType === 'string'
      ? ` (${payload.stepType})`
      : typeof payload?.effectId === 'string'
        ? ` (effect ${payload.effectId})`
        : '';
  return `a ${event.type} event${detail} at ${event.stepPath || '(run)'}`;
}

function effectIdOf(payload: unknown): string | null {
  const value = (payload as Record<string, unknown> | null)?.effectId;
  return typeof value === 'string' ? value : null;
}

interface FailureTold {
  stepType: string;
  code: string;
  /** As shown. */
  message?: string;
  /** As compared: an abort reason as it is, another message withoutWhereWritten. */
  compared?: string;
}

/**
 * A step's failure as verify compares it: the kind of step, and the code and message where the
 * failure arose at this step and its message is the mission's own (abort, validate, an
 * expression's R-code) — an abort's reason exactly, an engine-written message without what an
 * edit that moves or reformats the step changes (withoutWhereWritten). A payload missing its
 * parts (a log edited outside the engine) is compared as it is.
 */
function failureTold(payload: EventPayloads['step.failed'], arose: boolean): FailureTold {
  const stepType = typeof payload?.stepType === 'string' ? payload.stepType : String(payload?.stepType);
  const error = payload?.error as Partial<EventPayloads['step.failed']['error']> | undefined;
  if (typeof error?.code !== 'string' || typeof error.message !== 'string') return { stepType, code: `unreadable: ${JSON.stringify(error ?? null)}` };
  // Any other failure (a request's, a store's) is told apart by its step alone: a replay rebuilds
  // a request's failure from its recorded attempts, under a code of its own (`fetch-failed` for
  // the live `http-status`), and its message tells of attempts and waits it does not time again.
  const own = error.code === 'aborted' || error.code === 'validation-failed' || /^R\d{4}$/.test(error.code);
  if (!arose || !own) return { stepType, code: 'not compared' };
  return { stepType, code: error.code, message: error.message, compared: error.code === 'aborted' ? error.message : withoutWhereWritten(error.message) };
}

/**
 * An engine-written failure message (a failed `validate`, an R-code) without what an edit that
 * moves or reformats the mission changes: the locations the engine adds (`m.vague:6:5`, `(line
 * 7)`) and the white space of the source it quotes between backticks. The rest — values, records,
 * the words — is compared as it is, white space runs as one. An `abort` reason is the mission's
 * own value, compared exactly: "see line 5" to "see line 9", or "too big" to "toobig", is an edit.
 */
function withoutWhereWritten(message: string): string {
  return message
    .replace(/\S+\.(vague|reqon):\d+(:\d+)?/g, 'FILE:LINE')
    .replace(/\(line \d+\)/g, '(line N)')
    .split('`')
    .map((part, i) => (i % 2 === 1 ? part.replace(/\s+/g, '') : part.replace(/\s+/g, ' ')))
    .join('`')
    .trim();
}

/** The message part of a failureKey. */
function messageOf(key: string): string {
  return key.slice(key.indexOf('\0') + 1);
}

/** How a parallel stage's failure starts (executor.ts runParallel), its failed branches after it. */
export const PARALLEL_FAILED = 'Parallel stage failed: ';

/**
 * Whether a parallel stage's failure (normalized, withoutWhereWritten) is its branches' names and
 * places around failures in `parts` only: with every part taken out, nothing but `A: ` (and
 * `FILE:LINE: `) and `; ` is left. Holding one of them was not enough: "…; B: all fine" verified.
 */
function composedOf(message: string, parts: readonly string[]): boolean {
  if (!message.startsWith(PARALLEL_FAILED)) return false;
  let rest = message.slice(PARALLEL_FAILED.length);
  for (const part of [...new Set(parts)].filter((p) => p !== '').sort((a, b) => b.length - a.length)) rest = rest.split(part).join('');
  return /^\s*[A-Za-z_][A-Za-z0-9_]*:( FILE:LINE:)?\s*(;\s*[A-Za-z_][A-Za-z0-9_]*:( FILE:LINE:)?\s*)*$/.test(rest);
}

/**
 * A failure's code and message, as a passed-up failure is matched by: an abort's reason as it is,
 * another message withoutWhereWritten (a parallel stage's names its branches' places, which a
 * verify against the mission at another path, or moved by a comment, gives otherwise).
 */
function failureKey(error: unknown): string | undefined {
  const e = error as { code?: unknown; message?: unknown } | null | undefined;
  if (typeof e?.code !== 'string' || typeof e.message !== 'string') return undefined;
  return `${e.code}\0${e.code === 'aborted' ? e.message : withoutWhereWritten(e.message)}`;
}

function excerptOf(text: string): string {
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}
