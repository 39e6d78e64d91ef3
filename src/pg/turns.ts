import type { Sql } from 'postgres';

/**
 * Whose turn a periodic job is (README, Running several instances): the instances sharing a
 * database each try every job when their own timer says it is due, and the one whose
 * statement moves the job's `last_run` on (upkeep_runs, migrations/004-instances.sql) does
 * the round. The row lock makes concurrent tries take turns, and the later one finds the
 * round taken, so each round is done once across the instances, whatever their number.
 */
export class UpkeepTurns {
  constructor(
    private readonly sql: Sql,
    private readonly now: () => number,
  ) {}

  /**
   * Whether this instance does `job` now: true when its last round, anywhere, is `everyMs` old
   * or more (or further ahead than that: a clock that ran ahead must not stop the job for good).
   */
  async take(job: string, everyMs: number): Promise<boolean> {
    const now = this.now();
    const rows = await this.sql`
      insert into upkeep_runs as u (job, last_run) values (${job}, to_timestamp(${now}::float8 / 1000))
      on conflict (job) do update set last_run = excluded.last_run
      where u.last_run <= to_timestamp(${now - everyMs}::float8 / 1000)
        or u.last_run > to_timestamp(${now + everyMs}::float8 / 1000)
      returning job`;
    return rows.length === 1;
  }
}
