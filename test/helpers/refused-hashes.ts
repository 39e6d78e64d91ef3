/**
 * Stored password hashes whose scrypt parameters this server does not accept (README,
 * Security and durability), each made from a good hash: what a damaged store or a hand-made
 * archive may hold.
 */
export const REFUSED_HASHES: Record<string, (h: string) => string> = {
  'p=40000': (h) => h.replace(/^scrypt\$16384\$8\$1\$/, 'scrypt$16384$8$40000$'),
  'N=3': (h) => h.replace(/^scrypt\$16384\$/, 'scrypt$3$'),
  'N=2^30': (h) => h.replace(/^scrypt\$16384\$/, 'scrypt$1073741824$'),
};

/** One of REFUSED_HASHES by name. */
export const refused = (name: string): ((h: string) => string) => {
  const spoil = REFUSED_HASHES[name];
  if (spoil === undefined) throw new Error(`no refused hash named ${name}`);
  return spoil;
};
