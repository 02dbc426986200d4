/**
 * Missions both log-copy suites copy: a run waiting on a webhook (its delivery, inbox row and
 * table row must all arrive), and a scheduled mission (its schedule and firings); OPTIONS are the
 * run options they start with (the tests' time world answers http://api.test itself).
 */
export const waitOn = (name: string, hook: string) => `mission ${name} {
  source Api { auth: none, base: "http://api.test" }
  store got: sql("copy_got")
  action A {
    wait { path: "${hook}", timeout: 864000000 }
    store response -> got { key: .id }
    post "/done" { body: { mission: "${name}" } }
  }
  run A
}
`;

export const SCHEDULED = `mission Hourly {
  schedule: every 1 hours
  source Api { auth: none, base: "http://api.test" }
  action A {
    post "/done" { body: { mission: "hourly" } }
  }
  run A
}
`;

export const OPTIONS = { sources: { Api: 'http://api.test' }, env: {} };
