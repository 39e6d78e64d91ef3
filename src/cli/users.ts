import { checkPassword } from '../auth/accounts.ts';
import { hashPassword } from '../crypto/passwords.ts';
import { formatTime } from '../paste/paste.ts';
import { type Args, type CliCommand, type CliContext, type CliIo, CliError, columns } from './command.ts';

/** `user add NAME`: prints the new user's id. */
async function addUser(args: Args, { accounts, actor, io }: CliContext): Promise<void> {
  const password = args.has('password-stdin') ? await readPassword(io) : null;
  const user = await accounts.addUser(args.operand, args.has('admin') ? 'admin' : 'user', password, actor);
  io.stdout(String(user.id));
  // A password piped in without the flag is not read (CONTRACT §2): say what that leaves, off stdout.
  if (password === null)
    io.stderr?.(
      `note: ${user.name} has no password: they cannot sign in on the web until one is set (--password-stdin, ` +
        `or user passwd ${user.name})`,
    );
}

async function setPassword(args: Args, { accounts, actor, io }: CliContext): Promise<void> {
  await accounts.setPassword(args.operand, await readPassword(io), actor);
}

/** One user a line (README, Command line): id, name, role, state, created, last login, tokens, pastes. */
async function listUsers(_args: Args, { accounts, storage, io }: CliContext): Promise<void> {
  const rows: string[][] = [];
  for (const u of [...accounts.users].sort((a, b) => a.id - b.id)) {
    const tokens = accounts.tokens.filter((t) => t.user_id === u.id).length;
    const pastes = await storage.owners.count(u.id);
    const login = u.last_login_at ?? null;
    rows.push([
      String(u.id),
      u.name,
      u.role,
      u.disabled === true ? 'disabled' : 'enabled',
      formatTime(u.created_at),
      login === null ? 'never' : formatTime(login),
      `${tokens} token${tokens === 1 ? '' : 's'}`,
      `${pastes} paste${pastes === 1 ? '' : 's'}`,
    ]);
  }
  for (const line of columns(rows)) io.stdout(line);
}

async function disableUser(args: Args, { accounts, actor }: CliContext): Promise<void> {
  await accounts.setDisabled(args.operand, true, actor);
}

async function enableUser(args: Args, { accounts, actor }: CliContext): Promise<void> {
  await accounts.setDisabled(args.operand, false, actor);
}

/** `user admin NAME [--remove]`: gives or takes the admin role. */
async function setAdmin(args: Args, { accounts, actor }: CliContext): Promise<void> {
  await accounts.setRole(args.operand, args.has('remove') ? 'user' : 'admin', actor);
}

async function readPassword(io: CliIo): Promise<string> {
  const text = (await io.readStdin()).replace(/\r?\n$/, '');
  const problem = checkPassword(text)[0];
  if (problem !== undefined) throw new CliError(problem);
  return hashPassword(text);
}

/** The user commands, through the accounts service: the same rules as the web's admin area. */
export const USER_COMMANDS: readonly CliCommand[] = [
  { name: 'user add', operand: 'NAME', flags: { admin: {}, 'password-stdin': {} }, run: addUser },
  { name: 'user passwd', operand: 'NAME', note: '(new password on stdin)', run: setPassword },
  { name: 'user list', run: listUsers },
  { name: 'user disable', operand: 'NAME', run: disableUser },
  { name: 'user enable', operand: 'NAME', run: enableUser },
  { name: 'user admin', operand: 'NAME', flags: { remove: {} }, run: setAdmin },
];
