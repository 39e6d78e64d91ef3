import type { HLJSApi, Language } from '#highlight.js';

/** Zig (highlight.js has none): keywords, builtins (`@import`), strings, numbers, comments. */
export function zig(hljs: HLJSApi): Language {
  return {
    name: 'Zig',
    keywords: {
      keyword:
        'addrspace align allowzero and anyframe anytype asm async await break callconv catch comptime const ' +
        'continue defer else enum errdefer error export extern fn for if inline linksection noalias noinline ' +
        'nosuspend opaque or orelse packed pub resume return struct suspend switch test threadlocal try union ' +
        'unreachable usingnamespace var volatile while',
      type:
        'bool void noreturn type anyerror anyopaque comptime_int comptime_float isize usize c_int c_uint c_long ' +
        'c_ulong c_char f16 f32 f64 f80 f128 u8 u16 u32 u64 u128 i8 i16 i32 i64 i128',
      literal: 'true false null undefined',
    },
    contains: [
      hljs.C_LINE_COMMENT_MODE,
      { scope: 'string', begin: /\\\\/, end: /$/ },
      { scope: 'string', begin: /"/, end: /"/, illegal: /\n/, contains: [hljs.BACKSLASH_ESCAPE] },
      { scope: 'string', begin: /'/, end: /'/, illegal: /\n/, contains: [hljs.BACKSLASH_ESCAPE] },
      { scope: 'built_in', begin: /@[A-Za-z_]\w*/ },
      { scope: 'number', begin: /\b(0x[\da-fA-F_]+|0o[0-7_]+|0b[01_]+|\d[\d_]*(\.[\d_]+)?([eE][+-]?\d+)?)\b/ },
      { scope: 'title', begin: /\b[A-Za-z_]\w*(?=\s*\()/ },
    ],
  };
}
