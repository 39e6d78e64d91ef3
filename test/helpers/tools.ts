import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { TestContext } from 'node:test';

/**
 * The programs some tests run besides node, and the only place that knows them: where each is
 * found and which Debian package installs it. A test that needs a missing one is skipped with
 * that package in its reason, or fails when REQUIRE_TOOLS=1 (as .ci/run sets).
 */
export type ToolName = 'chromium' | 'promtool' | 'nginx' | 'haproxy' | 'pastebinit' | 'postgresql' | 'unzip';

interface Tool {
  /** The Debian package that installs it. */
  package: string;
  /** A variable that names it instead of the search, and the names searched on PATH (then in `dirs`). */
  variable?: string;
  names: readonly string[];
  dirs?: readonly string[];
  /** Found when every one of these is in the folder (a tool that is a folder of programs). */
  programs?: readonly string[];
}

const TOOLS: Record<ToolName, Tool> = {
  chromium: {
    package: 'chromium',
    variable: 'CHROMIUM_PATH',
    names: ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome'],
  },
  promtool: { package: 'prometheus', names: ['promtool'] },
  // /usr/sbin is on root's PATH only: looked in by name as well.
  nginx: { package: 'nginx', variable: 'NGINX_PATH', names: ['nginx'], dirs: ['/usr/sbin'] },
  haproxy: { package: 'haproxy', variable: 'HAPROXY', names: ['haproxy'], dirs: ['/usr/sbin'] },
  pastebinit: { package: 'pastebinit', names: ['pastebinit'], dirs: ['/usr/bin'] },
  unzip: { package: 'unzip', names: ['unzip'] },
  // Debian keeps the server's programs off PATH, in one folder per major version.
  postgresql: {
    package: 'postgresql',
    variable: 'PG_BIN',
    names: [],
    dirs: debianPostgresDirs(),
    programs: ['initdb', 'postgres', 'pg_ctl', 'psql'],
  },
};

/** /usr/lib/postgresql/<major>/bin, newest first. */
function debianPostgresDirs(): string[] {
  let majors: string[];
  try {
    majors = readdirSync('/usr/lib/postgresql');
  } catch {
    return [];
  }
  return majors
    .filter((m) => /^\d+$/.test(m))
    .sort((a, b) => Number(b) - Number(a))
    .map((m) => `/usr/lib/postgresql/${m}/bin`);
}

/** A regular file this process may run (a bind mount of /dev/null over a program hides it). */
function runnable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function fits(tool: Tool, candidate: string): boolean {
  return tool.programs === undefined ? runnable(candidate) : tool.programs.every((p) => runnable(join(candidate, p)));
}

/** Where the tool is under `env` (for postgresql, the folder of its programs), or null; looked up each call. */
export function findTool(name: ToolName, env: NodeJS.ProcessEnv = process.env): string | null {
  const tool = TOOLS[name];
  const named = tool.variable === undefined ? undefined : env[tool.variable];
  if (named) return fits(tool, named) ? named : null;
  const searched = [...(env['PATH'] ?? '').split(delimiter).filter((d) => d !== ''), ...(tool.dirs ?? [])];
  const candidates = [
    ...tool.names.flatMap((n) => searched.map((d) => join(d, n))),
    ...(tool.programs === undefined ? [] : (tool.dirs ?? [])),
  ];
  return candidates.find((c) => fits(tool, c)) ?? null;
}

const found = new Map<ToolName, string | null>();

/** Where the tool is on this machine, looked up once per process. */
export function toolPath(name: ToolName): string | null {
  if (!found.has(name)) found.set(name, findTool(name));
  return found.get(name) ?? null;
}

/** What a test that needs the tool says when it is missing: `needs chromium (apt-get install chromium)`. */
export function missing(name: ToolName): string {
  const tool = TOOLS[name];
  const named = tool.variable === undefined ? undefined : process.env[tool.variable];
  const wrong = named ? `; ${tool.variable}=${named} does not hold it` : '';
  return `needs ${name} (apt-get install ${tool.package})${wrong}`;
}

/** REQUIRE_TOOLS=1: a missing tool fails the test that needs it instead of skipping it. */
export const REQUIRE_TOOLS = process.env['REQUIRE_TOOLS'] === '1';

/** The tool's path; throws, naming the package, when it is missing. */
export function tool(name: ToolName): string {
  const path = toolPath(name);
  if (path === null) throw new Error(`${missing(name)}${REQUIRE_TOOLS ? ' (REQUIRE_TOOLS=1)' : ''}`);
  return path;
}

/** Whether tests that need these tools skip here: one is missing and REQUIRE_TOOLS is not set. */
export function willSkip(...names: ToolName[]): boolean {
  return !REQUIRE_TOOLS && names.some((n) => toolPath(n) === null);
}

/**
 * Options for `test()`: skipped when a tool is missing, the reason naming each one's package.
 * The test runs the tool through `tool()`, which fails it under REQUIRE_TOOLS=1.
 */
export function needs(...names: ToolName[]): { skip?: string } {
  return willSkip(...names)
    ? {
        skip: names
          .filter((n) => toolPath(n) === null)
          .map(missing)
          .join(', '),
      }
    : {};
}

/**
 * In a test that needs the tools, before their first use: true after marking the test skipped
 * (`return` then); with REQUIRE_TOOLS=1 a missing tool throws instead, failing the test.
 */
export function skipWithout(t: TestContext, ...names: ToolName[]): boolean {
  const reason = needs(...names).skip;
  if (reason !== undefined) t.skip(reason);
  else for (const n of names) tool(n);
  return reason !== undefined;
}
