import type { Sql } from 'postgres';
import type { AuditSink } from '../auth/accounts.ts';
import type { Actor, AuditEntry, AuditRecord } from '../log/audit.ts';
import { describeProblem } from '../storage/problems.ts';

/**
 * The admins' record (README, Audit log) in `audit_log`: every admin action, committed before
 * the action is reported done, never pruned. Entries read back exactly as log/audit.ts
 * returns them: `before`/`after` are kept as their JSON text (an absent one as SQL NULL).
 */
export class PgAudit implements AuditSink {
  #chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly sql: Sql,
    private readonly now: () => number = Date.now,
    /** Told when an entry cannot be written (the server's log). */
    private readonly warn: (message: string) => void = () => undefined,
  ) {}

  /**
   * Inserts one entry; entries from this process go in the order recorded. The action it
   * records is already done, so a failed insert does not undo or fail it: it is reported to `warn`.
   */
  record(actor: Actor, r: AuditRecord): Promise<void> {
    const at = this.now();
    const run = this.#chain.then(async () => {
      await this.sql`
        insert into audit_log (time, via, user_id, user_name, ip, action, target, before, after)
        values (to_timestamp(${at}::float8 / 1000), ${actor.via}, ${actor.user_id}::integer, ${actor.name}::text,
          ${actor.ip}::text, ${r.action}, ${r.target}, ${jsonText(r.before)}::text::json,
          ${jsonText(r.after)}::text::json)`;
    });
    this.#chain = run.catch((err: unknown) =>
      this.warn(`audit log: ${r.action} ${r.target} was done but could not be recorded: ${describeProblem(err)}`),
    );
    return this.#chain;
  }

  /** One page of entries, newest first, skipping `offset` of them. */
  async read(offset: number, limit: number): Promise<{ entries: AuditEntry[]; more: boolean }> {
    const rows = await this.sql`
      select (extract(epoch from time) * 1000)::float8 as at, via, user_id, user_name, ip, action, target,
        before::text as before, after::text as after
      from audit_log order by id desc offset ${offset} limit ${limit + 1}`;
    const entries = rows.slice(0, limit).map((row) => {
      const entry: Record<string, unknown> = {
        time: new Date(row['at'] as number).toISOString(),
        via: row['via'],
        user_id: row['user_id'],
        user: row['user_name'],
        ip: row['ip'],
        action: row['action'],
        target: row['target'],
      };
      // As JSON.stringify wrote the file's line: an undefined value leaves its key out.
      if (row['before'] !== null) entry['before'] = JSON.parse(row['before'] as string);
      if (row['after'] !== null) entry['after'] = JSON.parse(row['after'] as string);
      return entry as unknown as AuditEntry;
    });
    return { entries, more: rows.length > limit };
  }
}

/** A value as the file's line holds it, or null for one JSON leaves out (undefined, a function). */
const jsonText = (value: unknown): string | null => JSON.stringify(value) ?? null;
