/**
 * What a bench module gives the harness (run.ts): named measurements with their unit. A module
 * measures, it never asserts — targets are printed for people to read, not enforced.
 */
export interface BenchResult {
  name: string;
  value: number;
  unit: string;
}

export interface BenchModule {
  benchmarks(): Promise<BenchResult[]> | BenchResult[];
}
