/**
 * Parse + check throughput: a generated multi-megabyte mission (thousands of actions mixing every
 * step kind and a spread of expressions) goes through `loadMissionFromText` — lexer, parser,
 * static checks, diagnostic merge — several times after a warm-up; the best run gives MB/s.
 *
 * Two clocks: CPU time (`process.cpuUsage`, user + system of this process, GC threads included)
 * is the honest figure of our own cost on a shared machine and is what `parse+check throughput`
 * reports; wall time is printed beside it, and so is the kernel's share of the best run (system
 * time, nearly all of it page faults of the fresh heap pages the tree is allocated in: on this
 * machine about a quarter of the CPU, and the part that varies most between runs). The stages (tokenize, parse without the lexer, check)
 * are measured on their own so the next person knows where the time goes. The goal is ≥ 20 MB/s;
 * it is printed, never asserted. The generated mission must check clean, so a parser or checker
 * that starts rejecting valid code shows up here as a failure, not as speed.
 */
import { performance } from 'node:perf_hooks';
import { checkMission } from '../../engine/lang/check.js';
import { DiagnosticBag } from '../../engine/lang/diagnostics.js';
import { formatDiagnostics } from '../../engine/lang/format.js';
import { lexTokens } from '../../engine/lang/lexer.js';
import { loadMissionFromText } from '../../engine/lang/loader.js';
import type { MissionUnit } from '../../engine/lang/mission-unit.js';
import { parseProgram } from '../../engine/lang/parser.js';
import type { BenchResult } from './bench-types.js';

const TARGET_BYTES = 4_000_000;
const WARMUPS = 3;
const ITERATIONS = 10;
const FILE = 'bench.vague';

/** Eight action shapes, rotated, so every step kind and most expression forms appear. */
function action(i: number): string {
  const n = `Action${i}`;
  switch (i % 8) {
    case 0:
      return `  action ${n} {
    get "/items/${i}" {
      paginate: offset(offset, 100),
      until: length(response.items) == 0,
      retry: { maxAttempts: 3, backoff: exponential, initialDelay: 100, maxDelay: 5000 }
    }
    store each response -> items { key: .sku, upsert: true }
  }
`;
    case 1:
      return `  action ${n} {
    get "/people" { source: Api, since: lastSync("people${i}") { param: "updated_since", format: unix } }
    let all = response
    for p in all where .age >= 18 and not (.age > 64) {
      map p -> Person { id: .id, label: .first + " " + .last, left: 100 - .age, half: .age * 0.5, kind: .age > 64 ? "senior" : "adult" }
      store response -> people { key: .id, partial: true }
    }
  }
`;
    case 2:
      return `  action ${n} {
    get "/orders/${i}" { allow: [404, 410] }
    match response {
      404 -> skip,
      Bad -> abort "server reported an error",
      Good where .total > 1000 -> { store response -> audit { key: .id } },
      [Ref] -> continue,
      _ -> continue
    }
    validate response { assume .total >= 0, assume .id is number } or { store response -> audit { key: .id } }
  }
`;
    case 3:
      return `  action ${n} {
    post "/payments" { body: { amount: ${i} * 100, currency: "GBP", tags: ["a", "b", "c"], note: concat("n-", ${i}) } }
    let paymentId = response.id
    wait { path: "/hooks/p${i}", timeout: 5000, expectedEvents: 1, storage: { target: hooks, key: .eventId } }
    store { id: paymentId, status: response.status ?? "unknown" } -> payments { key: .id }
  }
`;
    case 4:
      return `  action ${n} {
    get "/payments"
    let list = response
    for pm in list concurrency 4 onError queue dlq {
      apply ToMethod to pm as method
      let tier = match pm.score { s where s >= 800 => "gold", s where s >= 500 => "silver", _ => "none" }
      store { ...method, id: pm.id, tier: tier, first: pm.tags[0] ?? "none", vip: "vip" in (pm.tags ?? ["x"]), total: round(sum([pm.score ?? 0, 0.6])) } -> out { key: .id }
    }
  }
`;
    case 5:
      return `  action ${n} {
    get "/job/${i}"
    match response {
      _ where .state == "pending" -> retry { maxAttempts: 3, backoff: constant, initialDelay: 5 },
      _ where .state == "failed" -> queue dlq,
      _ -> continue
    }
    store response -> jobs { key: .id }
  }
`;
    case 6:
      return `  action ${n} {
    post "/approvals" { body: { doc: "D${i}", at: now(), n: max(1, 2, 3) + min([4, 5]) - abs(-2) } }
    let ticket = response.ticket
    pause { duration: "2d", resumeOn: timeout | webhook "/approved/${i}" }
    put "/approvals/{ticket}/finalize" { body: { ok: true, count: count([1, 2]), f: floor(2.7) + ceil(1.2) } }
    store { id: ticket, state: "final" } -> approvals { key: .id }
  }
`;
    default:
      return `  action ${n} {
    call Spec.listPets { paginate: cursor(cursor, 20, "next") }
    for t in items where .done == false {
      patch "/tasks/{t.id}" { body: { done: true, at: fromUnix(0), r: range(2, 5), p: parseNumber("7.5") } }
      delete "/tasks/{t.id}" { source: Legacy }
    }
  }
`;
  }
}

export function generateMission(targetBytes: number): string {
  const head = `// generated by test/bench/parse-check.bench.ts
mission Bench {
  source Api { auth: bearer, base: "https://api.example.com", headers: { "X-Client": env("CLIENT") } }
  source Legacy { auth: basic, base: "http://legacy.example.com" }
  source Spec from "./pets.yaml" { auth: none }
  store items: memory("items")
  store people: memory("people")
  store audit: sql("audit")
  store payments: memory("payments")
  store hooks: memory("hooks")
  store out: nosql("out")
  store dlq: memory("dlq")
  store jobs: file("jobs")
  store approvals: memory("approvals")
  schema Ref { id: number }
  schema Good { id: number, total: number }
  schema Bad { error: string }
  schema Card { brand: string, last4: string }
  schema Bank { iban: string }
  transform ToMethod {
    (Card) -> Method { kind: "card", ref: .brand + "-" + .last4 },
    (Bank) where length(.iban) > 4 -> Method { kind: "bank", ref: .iban },
    (_) -> Method { kind: "unknown", ref: "n/a" }
  }
`;
  const parts = [head];
  let size = head.length;
  const names: string[] = [];
  for (let i = 0; size < targetBytes; i++) {
    const a = action(i);
    parts.push(a);
    names.push(`Action${i}`);
    size += a.length;
  }
  parts.push(`  run ${names.join(' then ')}\n}\n`);
  return parts.join('');
}

/** Best CPU and best wall time (ms) of `ITERATIONS` runs of `run`, after `WARMUPS` unmeasured ones. */
interface Timing {
  cpuMs: number;
  wallMs: number;
  /** Of the best CPU run: time in the kernel (page faults of fresh heap pages, mostly) and those faults. */
  systemMs: number;
  minorFaults: number;
}

function measure(run: () => void): Timing {
  for (let i = 0; i < WARMUPS; i++) run();
  let best: Timing = { cpuMs: Infinity, wallMs: Infinity, systemMs: 0, minorFaults: 0 };
  for (let i = 0; i < ITERATIONS; i++) {
    const usage0 = process.resourceUsage();
    const t0 = performance.now();
    run();
    const wall = performance.now() - t0;
    const usage = process.resourceUsage();
    const systemMs = (usage.systemCPUTime - usage0.systemCPUTime) / 1000;
    const cpuMs = (usage.userCPUTime - usage0.userCPUTime) / 1000 + systemMs;
    if (cpuMs < best.cpuMs) best = { ...best, cpuMs, systemMs, minorFaults: usage.minorPageFault - usage0.minorPageFault };
    best.wallMs = Math.min(best.wallMs, wall);
  }
  return best;
}

const mbPerSecond = (bytes: number, ms: number): number => bytes / 1e6 / (ms / 1000);

export function benchmarks(): BenchResult[] {
  const text = generateMission(TARGET_BYTES);
  const bytes = Buffer.byteLength(text, 'utf8');
  const first = loadMissionFromText(text, FILE);
  if (first.diagnostics.length > 0) {
    const shown = formatDiagnostics(first.diagnostics.slice(0, 5), { [FILE]: text });
    throw new Error(`the generated bench mission does not check clean:\n${shown}`);
  }
  const unit: MissionUnit = first.unit!;

  const total = measure(() => loadMissionFromText(text, FILE));
  const tokenize = measure(() => lexTokens(text, new DiagnosticBag(FILE)));
  const lexAndParse = measure(() => parseProgram(text, FILE));
  const check = measure(() => checkMission(unit));
  // The parser alone is lex+parse minus the lexer (both best-of runs, so an estimate).
  const parseCpu = Math.max(0, lexAndParse.cpuMs - tokenize.cpuMs);
  const parseWall = Math.max(0, lexAndParse.wallMs - tokenize.wallMs);

  const cpuRate = mbPerSecond(bytes, total.cpuMs);
  const wallRate = mbPerSecond(bytes, total.wallMs);
  const goal = (rate: number) => (rate >= 20 ? 'met' : 'NOT met');
  const mb = (bytes / 1e6).toFixed(1);
  process.stderr.write(
    `parse+check: ${mb} MB, best of ${ITERATIONS} after ${WARMUPS} warm-ups (goal ≥ 20 MB/s)\n` +
      `  cpu : ${total.cpuMs.toFixed(1)} ms = ${cpuRate.toFixed(1)} MB/s (${goal(cpuRate)}); of it in the kernel ${total.systemMs.toFixed(1)} ms, ${total.minorFaults} page faults\n` +
      `  wall: ${total.wallMs.toFixed(1)} ms = ${wallRate.toFixed(1)} MB/s (${goal(wallRate)})\n` +
      `  stages (cpu / wall ms): tokenize ${tokenize.cpuMs.toFixed(1)} / ${tokenize.wallMs.toFixed(1)}, ` +
      `parse without lexer ≈${parseCpu.toFixed(1)} / ${parseWall.toFixed(1)}, ` +
      `check ${check.cpuMs.toFixed(1)} / ${check.wallMs.toFixed(1)}\n`,
  );
  return [
    { name: 'parse+check throughput', value: cpuRate, unit: 'MB/s' },
    { name: 'parse+check throughput (wall)', value: wallRate, unit: 'MB/s' },
    { name: 'parse+check mission size', value: bytes / 1e6, unit: 'MB' },
    { name: 'parse+check best time (cpu)', value: total.cpuMs, unit: 'ms' },
    { name: 'parse+check best time (wall)', value: total.wallMs, unit: 'ms' },
    { name: 'parse+check best run: kernel time (cpu)', value: total.systemMs, unit: 'ms' },
    { name: 'parse+check best run: page faults', value: total.minorFaults, unit: 'faults' },
    { name: 'parse+check stage tokenize (cpu)', value: tokenize.cpuMs, unit: 'ms' },
    { name: 'parse+check stage parse, lexer excluded (cpu)', value: parseCpu, unit: 'ms' },
    { name: 'parse+check stage check (cpu)', value: check.cpuMs, unit: 'ms' },
  ];
}
