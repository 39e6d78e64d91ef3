import { join } from 'node:path';
import { PgFileClaims } from '../../src/pg/file-bytes.ts';
import { DiskFileClaims } from '../../src/store/file-bytes.ts';
import { BACKEND } from '../helpers/backend.ts';
import { freshDatabase, freshFolder } from '../helpers/fresh-storage.ts';
import { fileClaimsContract } from './file-claims.ts';

// Each backend's claims, as store/open.ts and pg/open.ts make them, over fresh storage.
fileClaimsContract(async () => {
  const { dir, files } = await freshFolder();
  if (BACKEND === 'files') return new DiskFileClaims(dir, files);
  const { sql } = await freshDatabase();
  return new PgFileClaims(sql, join(dir, 'tmp'));
});
