import { PgIdempotency } from '../../src/pg/idempotency.ts';
import { IdempotencyRecords } from '../../src/store/idempotency.ts';
import { freshState } from '../helpers/fresh-storage.ts';
import { idempotencyContract } from './idempotency.ts';

idempotencyContract(async () => {
  const { dir, files, sql } = await freshState();
  return sql === null ? new IdempotencyRecords(dir, files) : new PgIdempotency(sql);
});
