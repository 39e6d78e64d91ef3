import type { LanguageFn } from '#highlight.js';
import { hcl } from './hcl.ts';
import { zig } from './zig.ts';

/** Grammars highlight.js lacks for languages people paste often, registered beside its own. */
export const OWN_GRAMMARS: Readonly<
  Record<string, { label: string; aliases: readonly string[]; grammar: LanguageFn }>
> = {
  hcl: { label: 'HCL (Terraform)', aliases: ['terraform', 'tf', 'tfvars'], grammar: hcl },
  zig: { label: 'Zig', aliases: [], grammar: zig },
};
