import { userInfo } from 'node:os';
import type { Accounts } from '../auth/accounts.ts';
import type { CliStorage } from '../backend.ts';
import type { Config } from '../config.ts';
import type { Actor } from '../log/audit.ts';

export class CliError extends Error {}

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: (line: string) => void;
  /** Warnings: the command worked, but something beside it did not (default: none shown). */
  stderr?: (line: string) => void;
  readStdin: () => Promise<string>;
  /**
   * Standard input a line at a time, for input too large to hold (`import`), as text or as
   * each line's bytes (then invalid UTF-8 is refused, not replaced); default: `readStdin` split.
   */
  stdinLines?: () => AsyncIterable<string | Uint8Array>;
}

/** What every command runs with: the configuration, the terminal, and who ran it (for the audit log). */
export interface CliBase {
  config: Config;
  io: CliIo;
  actor: Actor;
}

/** What a command that opens storage runs with: the backend the server would use, and the accounts service over it. */
export interface CliContext extends CliBase {
  storage: CliStorage;
  accounts: Accounts;
}

/** A flag: with `value`, it takes one, shown as that in --help (`--rate N`); without, it is a switch. */
export interface Flag {
  value?: string;
  required?: true;
}

/** A command line as its command receives it, already checked against the command's entry. */
export interface Args {
  /** The positional argument of a command that takes one (`NAME`, `ID`, `FILE`); '' otherwise. */
  readonly operand: string;
  has(flag: string): boolean;
  /** A value flag's value, undefined when not given. */
  value(flag: string): string | undefined;
  /** A flag the entry declares required: its value. */
  required(flag: string): string;
}

interface CommandEntry {
  /** The words that call it: `token create`. */
  readonly name: string;
  /** Its one positional argument as --help shows it (`NAME`), when it takes one. */
  readonly operand?: string;
  /** Its flags, in --help's order: the parser refuses any other. */
  readonly flags?: Readonly<Record<string, Flag>>;
  /** What --help shows after the flags: where its input comes from or its output goes. */
  readonly note?: string;
  /** It works on the data folder's files: refused with DATABASE_URL set. */
  readonly filesOnly?: true;
}

/**
 * One CLI command: how it is called, and what it does. Most run on the opened storage; one
 * that must find the data folder untouched (`restore`) says `opensStorage: false`.
 */
export type CliCommand = CommandEntry &
  (
    | { readonly opensStorage?: true; run(args: Args, ctx: CliContext): Promise<void> }
    | { readonly opensStorage: false; run(args: Args, ctx: CliBase): Promise<void> }
  );

/** The commands by name; a name given twice is a mistake caught when the CLI loads. */
export function commandTable(commands: readonly CliCommand[]): ReadonlyMap<string, CliCommand> {
  const byName = new Map<string, CliCommand>();
  for (const c of commands) {
    if (byName.has(c.name)) throw new Error(`CLI command "${c.name}" is defined twice`);
    byName.set(c.name, c);
  }
  return byName;
}

/** The command a command line names, by its first two words or its first one, and the words after. */
export function findCommand(
  commands: ReadonlyMap<string, CliCommand>,
  argv: readonly string[],
): { command: CliCommand; rest: string[] } {
  const two = argv.length >= 2 ? commands.get(`${argv[0]} ${argv[1]}`) : undefined;
  if (two !== undefined) return { command: two, rest: argv.slice(2) };
  const one = commands.get(argv[0] ?? '');
  if (one !== undefined) return { command: one, rest: argv.slice(1) };
  throw new CliError(`unknown command "${argv.join(' ')}"; --help lists the commands`);
}

/** A command's arguments, checked against its entry: known flags, its operand or none, its required flags. */
export function parseArgs(command: CliCommand, rest: readonly string[]): Args {
  const flags = command.flags ?? {};
  const spec = Object.fromEntries(
    Object.entries(flags).map(([name, f]) => [name, f.value === undefined ? 'bool' : 'value'] as const),
  );
  const { positional, opts } = parseOptions(rest, spec);
  if (command.operand !== undefined) exactlyOne(positional, command.operand);
  else if (positional.length > 0) throw new CliError(`unexpected argument "${positional[0]}"`);
  const value = (flag: string): string | undefined => {
    const v = opts.get(flag);
    return typeof v === 'string' ? v : undefined;
  };
  const required = (flag: string): string => {
    const v = value(flag);
    if (v === undefined) throw new CliError(`--${flag} is required`);
    return v;
  };
  for (const [name, f] of Object.entries(flags)) if (f.required === true) required(name);
  return { operand: positional[0] ?? '', has: (flag) => opts.has(flag), value, required };
}

/** Parses `--flag [value]` options strictly: unknown flags and missing values are errors. */
export function parseOptions(
  args: readonly string[],
  spec: Record<string, 'bool' | 'value'>,
): { positional: string[]; opts: Map<string, string | true> } {
  const positional: string[] = [];
  const opts = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    if (!arg.startsWith('--')) throw new CliError(`unknown option ${arg}`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    const kind = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (kind === undefined) throw new CliError(`unknown option --${name}`);
    if (opts.has(name)) throw new CliError(`option --${name} given twice`);
    if (kind === 'bool') {
      if (inline !== undefined) throw new CliError(`option --${name} takes no value`);
      opts.set(name, true);
    } else {
      const value = inline ?? args[++i];
      if (value === undefined || (inline === undefined && value.startsWith('--')))
        throw new CliError(`option --${name} needs a value`);
      opts.set(name, value);
    }
  }
  return { positional, opts };
}

function exactlyOne(positional: readonly string[], what: string): string {
  if (positional.length !== 1) throw new CliError(`expected exactly one ${what}`);
  return positional[0] as string;
}

/** The --help text: one line per command, from the same entries the parser reads. */
export function usage(commands: Iterable<CliCommand>): string {
  const lines = [...commands].map((c) => {
    const flags = Object.entries(c.flags ?? {}).map(([name, f]) => {
      const text = f.value === undefined ? `--${name}` : `--${name} ${f.value}`;
      return f.required === true ? text : `[${text}]`;
    });
    return `  ${[c.name, c.operand, ...flags, c.note].filter((w) => w !== undefined).join(' ')}`;
  });
  return `usage:\n${lines.join('\n')}`;
}

/** The CLI's actor in the audit log: the operating-system user who ran it. */
export function cliActor(): Actor {
  let name: string | null = null;
  try {
    name = userInfo().username;
  } catch {
    // A uid without a passwd entry (some containers): the log says "CLI" only.
  }
  return { via: 'cli', user_id: null, name, ip: null };
}

/** Rows as aligned columns, one line each, no header row (`user list`, `token list`). */
export function columns(rows: readonly string[][]): string[] {
  if (rows.length === 0) return [];
  const widths = (rows[0] as string[]).map((_, i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  return rows.map((r) =>
    r
      .map((cell, i) => cell.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd(),
  );
}
