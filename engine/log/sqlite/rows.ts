/** The shared row shapes and checks (../rows.ts), under the name sqlite/table-store.ts imports. */
export * from '../rows.js';
