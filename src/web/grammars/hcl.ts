import type { HLJSApi, Language } from '#highlight.js';

/** HCL, the configuration language of Terraform, Packer and Nomad (highlight.js has none). */
export function hcl(hljs: HLJSApi): Language {
  const interpolation = { scope: 'subst', begin: /\$\{/, end: /\}/, keywords: { literal: 'true false null' } };
  return {
    name: 'HCL',
    aliases: ['terraform', 'tf', 'tfvars'],
    keywords: {
      keyword: 'for in if else endif endfor',
      literal: 'true false null',
      built_in:
        'resource data variable output module provider locals terraform backend provisioner connection ' +
        'lifecycle dynamic moved import check',
    },
    contains: [
      hljs.HASH_COMMENT_MODE,
      hljs.C_LINE_COMMENT_MODE,
      hljs.C_BLOCK_COMMENT_MODE,
      { scope: 'string', begin: /<<-?\s*([A-Z_]+)\s*$/, end: /^\s*[A-Z_]+\s*$/, contains: [interpolation] },
      { scope: 'string', begin: /"/, end: /"/, contains: [hljs.BACKSLASH_ESCAPE, interpolation] },
      { scope: 'attr', begin: /\b[A-Za-z_][\w-]*(?=\s*=(?!=))/ },
      { scope: 'number', begin: /\b\d+(\.\d+)?([eE][+-]?\d+)?\b/ },
      { scope: 'title', begin: /\b[a-z_][\w-]*(?=\s*\()/ },
    ],
  };
}
