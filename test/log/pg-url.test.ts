/**
 * `--db postgres://…` read as libpq reads it: a percent-encoded database name, a socket folder as
 * `?host=`, and `sslmode` with libpq's meanings — `require` encrypts without checking the
 * certificate (pg's own reading took it for `verify-full`, refused a self-signed server psql
 * connects to, and printed an 11-line warning); a setting the driver refuses is a PgUrlError
 * (one line), not an internal error.
 */
import { describe, expect, it } from 'vitest';
import { pgConfigOf, PgUrlError, redactPgUrl } from '../../engine/log/postgres/pg-url.js';

describe('pgConfigOf', () => {
  it('reads the database name and a socket folder as libpq does', () => {
    const tcp = pgConfigOf('postgres://reqon@127.0.0.1:5433/reqon%2Fprod');
    expect(tcp).toMatchObject({ user: 'reqon', host: '127.0.0.1', database: 'reqon/prod' });
    expect(String(tcp.port)).toBe('5433');
    expect(pgConfigOf('postgres://reqon@/reqon?host=/var/run/postgresql')).toMatchObject({ host: '/var/run/postgresql', database: 'reqon' });
  });

  it('takes sslmode with libpq meanings, and no driver warning', () => {
    const warnings: string[] = [];
    const listen = (w: Error) => warnings.push(w.message);
    process.on('warning', listen);
    try {
      expect(pgConfigOf('postgres://u@db.example/x?sslmode=require').ssl).toMatchObject({ rejectUnauthorized: false });
      expect(pgConfigOf('postgres://u@db.example/x?sslmode=disable').ssl).toBe(false);
      const full = pgConfigOf('postgres://u@db.example/x?sslmode=verify-full').ssl;
      expect(full).toBeTruthy();
      expect((full as { rejectUnauthorized?: boolean }).rejectUnauthorized).not.toBe(false);
      expect(pgConfigOf('postgres://u@db.example/x').ssl).toBeUndefined();
    } finally {
      process.off('warning', listen);
    }
    expect(warnings.filter((w) => /SECURITY WARNING/.test(w))).toEqual([]);
  });

  it('a setting the driver refuses is one PgUrlError naming the URL without its password', () => {
    const url = 'postgres://u:hunter2@db.example/x?sslmode=verify-ca';
    expect(() => pgConfigOf(url)).toThrow(PgUrlError);
    expect(() => pgConfigOf(url)).toThrow(/sslrootcert/);
    try {
      pgConfigOf(url);
    } catch (error) {
      expect((error as Error).message).not.toContain('hunter2');
      expect((error as Error).message).toContain(redactPgUrl(url));
    }
  });
});

describe('redactPgUrl', () => {
  it('hides a password given in the user info or as a ?password= parameter (libpq takes both)', () => {
    expect(redactPgUrl('postgres://u:S3cret@h:5432/db')).toBe('postgres://u:***@h:5432/db');
    const shown = redactPgUrl('postgres://reqon@127.0.0.1:5499/reqon?password=S3cret&sslmode=disable');
    expect(shown).toBe('postgres://reqon@127.0.0.1:5499/reqon?password=***&sslmode=disable');
    expect(redactPgUrl('postgres://reqon@h/db?PassWord=S3cret')).not.toContain('S3cret');
  });
});
