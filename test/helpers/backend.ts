import { createTestDatabase } from './postgres.ts';

/**
 * Which backend the suite runs on (CONTRIBUTING, Tests): the data folder, or with
 * `TEST_BACKEND=postgres` (`npm run test:postgres`) PostgreSQL, the same test files either way.
 */
export const BACKEND: 'files' | 'postgres' = process.env['TEST_BACKEND'] === 'postgres' ? 'postgres' : 'files';

/** Each data folder's database: a server restarted on the same folder finds its state again. */
const databases = new Map<string, Promise<string>>();

/** The variables that point a server or the CLI of this data folder at its backend. */
export async function backendEnv(dataDir: string): Promise<Record<string, string>> {
  if (BACKEND === 'files') return {};
  let url = databases.get(dataDir);
  if (url === undefined) {
    url = createTestDatabase();
    databases.set(dataDir, url);
  }
  return { DATABASE_URL: await url };
}
