import { TOKEN_LABEL_MAX } from '../auth/accounts.ts';
import { isScope, type Scope } from '../auth/tokens.ts';
import { formatTime } from '../paste/paste.ts';
import { type Args, type CliCommand, type CliContext, CliError, columns } from './command.ts';

/** `token create`: prints the token's secret alone, on one line (CONTRACT §2). */
async function createToken(args: Args, { accounts, actor, io }: CliContext): Promise<void> {
  const userName = args.required('user');
  const scopes = parseScopes(args.required('scopes'));
  const rate = parseRate(args.value('rate'));
  const label = args.value('label') ?? '';
  if (label.length > TOKEN_LABEL_MAX) throw new CliError(`--label must be at most ${TOKEN_LABEL_MAX} characters`);
  // `token list` prints one token a line, so a label may not break a line.
  if (/[\u0000-\u001f\u007f]/.test(label)) throw new CliError('--label must not contain control characters');
  const user = accounts.userByName(userName);
  if (user === undefined) throw new CliError(`no user named "${userName}"`);
  const expiresAt = parseExpires(args.value('expires'), Date.now());
  const { secret } = await accounts.createToken(user.id, { label, scopes, rate, expiresAt }, actor);
  io.stdout(secret);
}

/** One token a line, id first (README, Command line): no header row for scripts to skip. */
async function listTokens(_args: Args, { accounts, storage, io }: CliContext): Promise<void> {
  const used = await storage.lastUses();
  const rows: string[][] = [];
  for (const t of accounts.tokens) {
    const lastUsed = used[t.id];
    const expires =
      t.expires_at === undefined || t.expires_at === null
        ? 'never'
        : `${t.expires_at <= Date.now() ? 'expired ' : 'expires '}${formatTime(t.expires_at)}`;
    rows.push([
      t.id,
      accounts.user(t.user_id)?.name ?? '?',
      t.label || '-',
      t.scopes.join(','),
      String(t.rate_limit_per_minute),
      formatTime(t.created_at),
      lastUsed === undefined ? 'never' : formatTime(lastUsed),
      expires,
    ]);
  }
  for (const line of columns(rows)) io.stdout(line);
}

async function revokeToken(args: Args, { accounts, actor }: CliContext): Promise<void> {
  await accounts.revokeToken(args.operand, undefined, actor);
}

export function parseScopes(text: string): Scope[] {
  const scopes = text.split(',').map((s) => s.trim());
  for (const s of scopes) if (!isScope(s)) throw new CliError(`unknown scope "${s}" (use read, write, admin)`);
  return [...new Set(scopes)] as Scope[];
}

export function parseRate(value: string | true | undefined): number {
  if (value === undefined) return 0;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value))
    throw new CliError('--rate must be a whole number (0 = unlimited)');
  return Number(value);
}

const UNIT_MS: Record<string, number> = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000, y: 365 * 86_400_000 };

/** `--expires`: a number and h, d, w or y (`30d`), or `never`; when the token stops working. */
export function parseExpires(value: string | true | undefined, now: number): number | null {
  if (value === undefined || value === 'never') return null;
  const m = typeof value === 'string' ? /^([1-9]\d{0,4})([hdwy])$/.exec(value) : null;
  if (m === null) throw new CliError('--expires must be a number and h, d, w or y (e.g. 30d), or never');
  return now + Number(m[1]) * (UNIT_MS[m[2] as string] as number);
}

/** The API token commands; the `admin` scope only for a user with the admin role (the accounts service checks). */
export const TOKEN_COMMANDS: readonly CliCommand[] = [
  {
    name: 'token create',
    flags: {
      user: { value: 'NAME', required: true },
      scopes: { value: 'read,write[,admin]', required: true },
      rate: { value: 'N' },
      label: { value: 'TEXT' },
      expires: { value: '30d' },
    },
    run: createToken,
  },
  { name: 'token list', run: listTokens },
  { name: 'token revoke', operand: 'ID', run: revokeToken },
];
