import {
  createRequest,
  load,
  mixed,
  openIdlePool,
  randomGet,
  type IdlePool,
  type LoadPlan,
  type Measure,
} from './load.ts';
import type { Goal } from './report.ts';

/** What the scenarios need to build their requests; the same for both servers. */
export interface Fixture {
  hashes: readonly string[];
  bigHash: string;
  /** The paste holding the 1 MB PNG (bench/seed.ts, benchPng), and its file's name. */
  image: { hash: string; name: string };
  /** Authorization header of the unlimited token. */
  auth: Record<string, string>;
  /** Authorization header of the rate-limited token. */
  limitedAuth: Record<string, string>;
  /** The web scenarios' pastes (bench/seed.ts), and a cookie with an unlock grant for the password one. */
  web: { page: string; burn: string; locked: string; markdown: string; grant: Record<string, string> };
}

export interface Scenario {
  name: string;
  goal: Goal;
  /** Keep-alive sockets held open (and idle) while measuring. */
  idleSockets?: number;
  /** What the load sends (as data, so either generator can send it). */
  plan: (f: Fixture) => LoadPlan;
}

/** The goals of bench/README.md: API reads, creates, and the pages people open. */
const READ: Goal = { minRatio: 0.8, maxP99Ratio: 2 };
const PAGE: Goal = { minRatio: 0.5, maxP99Ratio: 3 };
const OTHER_PAGE: Goal = { minRatio: 0.35 };
const one = (path: string, headers: Record<string, string> = {}): LoadPlan => ({
  kinds: [{ method: 'GET', path, headers }],
});
const each = (path: string, hashes: readonly string[]): LoadPlan => ({
  kinds: [{ method: 'GET', path, headers: {} }],
  hashes,
});

export const SCENARIOS: Scenario[] = [
  { name: 'GET paste.php', goal: READ, plan: (f) => randomGet('/api/v1/paste.php', f.hashes, f.auth) },
  { name: 'GET raw.php', goal: READ, plan: (f) => randomGet('/api/v1/raw.php', f.hashes, f.auth) },
  { name: 'POST paste_create.php 1 KB', goal: { minRatio: 0.9 }, plan: (f) => ({ kinds: [createRequest(f.auth)] }) },
  {
    name: 'GET raw.php 512 KB paste',
    goal: READ,
    plan: (f) => ({
      kinds: [{ method: 'GET', path: `/api/v1/raw.php?hash=${f.bigHash}`, headers: f.auth }],
      largeResponses: true,
    }),
  },
  {
    name: 'GET file.php 1 MB image',
    goal: READ,
    plan: (f) => ({
      kinds: [{ method: 'GET', path: `/api/v1/file.php?hash=${f.image.hash}&name=${f.image.name}`, headers: f.auth }],
      largeResponses: true,
    }),
  },
  {
    name: 'GET /p/{hash}/files/{name} 1 MB image',
    goal: READ,
    plan: (f) => ({
      kinds: [{ method: 'GET', path: `/p/${f.image.hash}/files/${f.image.name}`, headers: {} }],
      largeResponses: true,
    }),
  },
  {
    name: 'mixed 90/10, rate-limited token',
    goal: { minRatio: 0.7 },
    plan: (f) => mixed(0.9, f.hashes, f.limitedAuth),
  },
  {
    name: 'GET paste.php + 1000 idle sockets',
    goal: READ,
    idleSockets: 1000,
    plan: (f) => randomGet('/api/v1/paste.php', f.hashes, f.auth),
  },
  { name: 'GET /p/{hash} page, one paste', goal: PAGE, plan: (f) => one(`/p/${f.web.page}`) },
  {
    name: 'GET /p/{hash} page, unlocked by its grant',
    goal: PAGE,
    plan: (f) => one(`/p/${f.web.locked}`, f.web.grant),
  },
  { name: 'GET /p/{hash} burn warning page', goal: PAGE, plan: (f) => one(`/p/${f.web.burn}`) },
  { name: 'GET /p/{hash} page, rendered Markdown', goal: PAGE, plan: (f) => one(`/p/${f.web.markdown}`) },
  { name: 'GET /p/{hash} page, random of 10,000', goal: OTHER_PAGE, plan: (f) => each('/p/{hash}', f.hashes) },
  { name: 'GET /p/{hash}/raw, random', goal: OTHER_PAGE, plan: (f) => each('/p/{hash}/raw', f.hashes) },
  {
    name: 'GET /s/{code}, random',
    goal: OTHER_PAGE,
    plan: (f) => ({
      ...each(
        '/s/{hash}',
        f.hashes.map((h) => h.slice(0, 6)),
      ),
      expect: 302,
    }),
  },
  { name: 'GET / home page, not logged in', goal: OTHER_PAGE, plan: () => one('/') },
];

export interface RoundSettings {
  connections: number;
  durationSec: number;
  warmupSec: number;
}

export interface SideResult {
  measure: Measure;
  /** Idle sockets still open at the end, and how many the server had closed meanwhile. */
  idle?: { open: number; closed: number };
}

/** One round of one scenario against one server: (idle sockets,) warm-up, measurement. */
export async function runRound(port: number, s: Scenario, f: Fixture, settings: RoundSettings): Promise<SideResult> {
  let pool: IdlePool | null = null;
  try {
    if (s.idleSockets !== undefined) pool = await openIdlePool(port, s.idleSockets);
    const plan = s.plan(f);
    if (settings.warmupSec > 0)
      await load({ port, plan, connections: settings.connections, durationSec: settings.warmupSec });
    const measure = await load({ port, plan, connections: settings.connections, durationSec: settings.durationSec });
    return pool === null ? { measure } : { measure, idle: { open: pool.open(), closed: pool.closedByServer() } };
  } finally {
    pool?.close();
  }
}

/** The round with the most requests a second: on a shared, noisy machine, noise only slows a run down. */
export function best(results: readonly SideResult[]): SideResult {
  return results.reduce((a, b) => (b.measure.rps > a.measure.rps ? b : a));
}
