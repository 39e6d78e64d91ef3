import { json, type Reply } from '../../http/reply.ts';
import { LANGUAGE_TABLE } from '../../paste/language-table.ts';

/** The answer is the same for every request and every server, so it is built once. */
const body = {
  ok: true,
  languages: LANGUAGE_TABLE.map(([name, label, aliases]) => ({ name, label, aliases })),
};

/** GET /api/v1/languages.php (README, Languages): every language a paste may be tagged with, no token needed. */
export const languagesReply = (): Reply => json(body);
