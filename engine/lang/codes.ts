/**
 * The one registry of diagnostic codes. A code is never reused or renumbered once it has shipped;
 * retire it by leaving it here with `retired: true`. Messages have fixed shapes:
 * `Expected X but found Y`; for values `expected an object but got: number (128)`.
 *
 *   E1xxx  lexer          E2xxx  parser          E3xxx  static checks (names, options, values)
 */
import type { Severity } from './diagnostics.js';

interface CodeInfo {
  severity: Severity;
  /** One line saying what the mistake is, for docs and the studio's hover. */
  title: string;
  retired?: boolean;
}

export const CODES = {
  // --- E1xxx: lexer -----------------------------------------------------------------------
  // (lexer codes go here)
  E1001: { severity: 'error', title: 'a character that cannot start any token' },
  E1002: { severity: 'error', title: 'a string literal with no closing `"`' },
  E1003: { severity: 'error', title: 'a malformed number (digit separators, letters after digits)' },
  E1004: { severity: 'error', title: 'a block comment `/* … */` (only `//` comments exist)' },
  E1005: { severity: 'error', title: 'a `\\u` escape without four hex digits (`\\u00e9`) or a code point in braces (`\\u{1F600}`)' },
  E1006: { severity: 'error', title: 'an integer literal beyond 2^53 that a number cannot hold exactly (it would run as another number)' },
  E1007: { severity: 'warning', title: 'a bidirectional control character (U+202E and kin) that makes a line display otherwise than it runs ("Trojan Source")' },

  // --- E2xxx: parser ----------------------------------------------------------------------
  // (parser codes go here)
  E2001: { severity: 'error', title: 'a token other than the one the grammar requires here' },
  E2002: { severity: 'error', title: 'something other than a declaration at the top level of a file' },
  E2003: { severity: 'error', title: 'something other than a mission item inside `mission { … }`' },
  E2004: { severity: 'error', title: 'something other than a step inside an action or block' },
  E2005: { severity: 'error', title: 'a token that cannot start an expression' },
  E2006: { severity: 'error', title: 'an unknown option key in an option block' },
  E2007: { severity: 'error', title: 'a value outside the fixed set an option or keyword accepts' },
  E2008: { severity: 'error', title: 'malformed `paginate:` arguments' },
  E2009: { severity: 'error', title: 'an unknown schedule unit' },
  E2010: { severity: 'error', title: 'a pause `duration` that is not a number with a unit' },
  E2011: { severity: 'error', title: 'an expression form that parses but is not supported yet' },
  E2012: { severity: 'error', title: 'nesting deeper than 200 levels' },
  E2013: { severity: 'error', title: 'a non-integer where an integer option value is required' },
  E2014: { severity: 'error', title: 'the same option key given twice in one block' },
  E2015: { severity: 'error', title: 'transform variants that produce different schemas' },
  E2016: { severity: 'error', title: 'a call on something that is not a function name' },
  E2017: { severity: 'error', title: 'a required option missing from an option block' },

  // --- E3xxx: static checks ---------------------------------------------------------------
  E3001: { severity: 'error', title: 'the file declares no mission' },
  E3002: { severity: 'warning', title: 'more than one mission in a file (only the first runs; upstream accepts the file)' },
  E3003: { severity: 'error', title: 'the mission has no `run` pipeline' },
  E3004: { severity: 'warning', title: 'several `run` lines (the last one wins)' },
  E3005: { severity: 'warning', title: 'several `schedule`s (the last one wins)' },
  E3006: { severity: 'error', title: 'a name is declared twice' },
  E3007: { severity: 'error', title: 'unknown store' },
  E3008: { severity: 'error', title: 'unknown source' },
  E3009: { severity: 'error', title: '`call` on a source that has no OpenAPI spec (`from`)' },
  E3010: { severity: 'error', title: 'unknown action' },
  E3011: { severity: 'error', title: '`jump` to an action that runs only in parallel stages' },
  E3012: { severity: 'error', title: '`jump` to an action that is not a stage of the pipeline' },
  E3013: { severity: 'error', title: 'unknown transform' },
  E3014: { severity: 'error', title: 'unknown schema' },
  E3015: { severity: 'error', title: 'a source without `auth`' },
  E3016: { severity: 'error', title: 'a source with neither `base` nor `from`' },
  E3017: { severity: 'error', title: 'a source `base` that is not an http(s) URL' },
  E3018: { severity: 'error', title: 'unknown function' },
  E3019: { severity: 'error', title: 'a function that is documented but not supported yet' },
  E3020: { severity: 'error', title: 'wrong number of arguments to a built-in function' },
  E3021: { severity: 'error', title: '`env(...)` with an argument that is not a string literal' },
  E3022: { severity: 'error', title: 'a `store` step with no way to compute a stable key' },
  E3023: { severity: 'error', title: 'a number outside its allowed range' },
  E3024: { severity: 'error', title: 'an HTTP status outside 100–599' },
  E3025: { severity: 'error', title: 'the same status handled by two match arms' },
  E3026: { severity: 'error', title: 'an invalid cron expression, or one no date matches (it never fires)' },
  E3027: { severity: 'error', title: 'a schedule `at` that is not a date-time' },
  E3028: { severity: 'error', title: 'an unknown time zone' },
  E3029: { severity: 'error', title: 'a webhook path no delivery can arrive at (no leading "/", a query or fragment, or characters a request sends percent-encoded)' },
  E3030: { severity: 'warning', title: 'match arms after a bare `_` arm can never run' },
  E3031: { severity: 'error', title: 'an action file holds something other than `action`s' },
  E3032: { severity: 'warning', title: 'a top-level declaration outside the mission is ignored' },
  E3033: { severity: 'warning', title: 'a fetch step with no source to send it to (running it fails; upstream accepts it)' },
  E3034: { severity: 'warning', title: 'a file of actions only (part of a folder mission) checked on its own: its names are not resolved' },
  E3035: { severity: 'warning', title: 'a store or source declared twice (the first is used; upstream accepts it)' },
  E3036: { severity: 'warning', title: 'a pipeline stage naming an undeclared action (running fails at that stage; upstream accepts it)' },
  E3037: { severity: 'warning', title: 'a schedule `at` instant already past (it fires once, as soon as a worker registers it)' },
  E3038: { severity: 'warning', title: '`delete x[key]` where `x` is no declared store: an HTTP DELETE of the path the expression gives, not a store removal' },
  E3039: { severity: 'error', title: '`delete store[key]` (a store removal) takes no request options' },
  E3040: { severity: 'warning', title: 'a `let` in a concurrent loop body naming a variable bound outside the loop (it binds a new one per iteration; the outer keeps its value)' },
  E3041: { severity: 'warning', title: 'a request path placeholder `{NAME}` that no variable binds (running fails there, R4010)' },
  E3042: { severity: 'error', title: 'a literal the step can never use: a `for` over a literal that is no array, a `store` of a literal that is no record, a `key:` that is null (running fails at the step)' },
  E3043: { severity: 'warning', title: 'a variable named `response` (`let`, `apply … as`, a loop variable): bare `response` reads it, `response.x` and later requests still the response' },
  E3044: { severity: 'warning', title: 'a division or remainder by a literal zero (it fails wherever it is evaluated, R4003)' },
  E3045: { severity: 'warning', title: 'a match status arm for a non-2xx status the request before it does not `allow` (the request fails on it first: the arm never takes it)' },
  E3046: { severity: 'warning', title: 'a key given twice in one object literal or `map` block (the last one wins; the first is never used)' },
  E3047: { severity: 'warning', title: 'a `for` over a bare name that is no store and no variable bound before the loop (it runs zero times)' },
  E3048: { severity: 'warning', title: 'a store target its kind can never use: a sql/nosql table name that is no plain identifier or is reserved, a file path that leaves the data folder (running fails at the store\'s first read or write)' },
  E3049: { severity: 'warning', title: 'a pagination option (`itemsPath`, `until`, `maxItems`, `maxPages`) on a request with no `paginate` (its answer is taken whole)' },
  E3050: { severity: 'warning', title: 'a pagination parameter also set by the request\'s own query or `params` (it is sent twice; which one the API reads varies)' },
  E3051: { severity: 'warning', title: 'a match arm whose pattern is the bare name `else`, `default` or `otherwise`: compared as a value, not a catch-all (`_` is)' },
  E3052: { severity: 'warning', title: 'a file of a mission folder that is not read: the other mission extension, or a subfolder (a folder mission reads the files beside its root with the root\'s extension)' },
  E3053: { severity: 'warning', title: 'an `is` test naming no type `is` knows, a schema name included (running fails where it is evaluated, R4007)' },
  E3054: { severity: 'warning', title: 'a schema field type that is no built-in type and no declared schema (it matches any value, §B.5)' },
  E3055: { severity: 'warning', title: 'a `body` on a GET (sent as a JSON request body, which APIs ignore on a GET; `params` sends a query)' },
  E3056: { severity: 'error', title: 'a function (`x => …`) where none is taken, or with a parameter count its built-in does not call it with' },
  E3057: { severity: 'error', title: 'a source\'s OpenAPI document (`from "spec.yaml"`) that cannot be read or is no OpenAPI 3 document (`reqon check` reads it)' },
  E3058: { severity: 'error', title: 'a `call S.operation` whose source\'s OpenAPI document has no such operationId (`reqon check` reads it)' },
  E3059: { severity: 'warning', title: 'a source\'s OpenAPI document that cannot be read or used, where no `call` needs it and the source has its own `base`' },
  E3060: { severity: 'warning', title: 'a `retry` (or `retryOnTimeout`) on a `wait` with `timeout: 0`: a zero timeout is a check that carries on with `webhook` null, so the retry never runs' },
  E3062: { severity: 'warning', title: 'a source without `base` whose OpenAPI document gives no absolute http(s) server URL (none, relative such as `/api/v3`, or an unfilled `{variable}`)' },
  E3061: { severity: 'warning', title: 'a `{` in a request path that starts no placeholder (`{}`, `{a b}`): it is sent as text' },
  E3063: { severity: 'error', title: 'a number arm (an HTTP status) in a match step whose subject is a loop\'s record or a value: it tests the last response\'s status, not the subject' },
  E3064: { severity: 'warning', title: 'a number arm (an HTTP status) in a match step whose subject is a name other than `response` (it may hold the response): it tests the last response\'s status, not the subject' },
  E3065: { severity: 'warning', title: 'a `for` over a bare name that is both a declared store and a variable bound before the loop: it iterates the store (as upstream Reqon does), not the variable' },
  E3066: { severity: 'warning', title: 'a name in a pipeline stage\'s condition that is no store: a condition has no variables and no response (it is evaluated before the stage), so the name is absent' },
  E3067: { severity: 'warning', title: 'a pause with a `duration` that resumes on a webhook only: no timer is armed, so the duration is never used' },
  E3068: { severity: 'warning', title: 'a `timezone` on an `every` schedule: an interval counts from when the schedule was registered, in no zone, so the timezone is never used' },
  E3069: { severity: 'warning', title: 'a page counter\'s name (`page`) in a fetch\'s `until`: `until` has no page counter, so the name reads a field of each page (absent unless the API sends one)' },
} satisfies Record<string, CodeInfo>;

export type DiagnosticCode = keyof typeof CODES;
