import hljs from 'highlight.js/lib/common';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import elixir from 'highlight.js/lib/languages/elixir';
import haskell from 'highlight.js/lib/languages/haskell';
import powershell from 'highlight.js/lib/languages/powershell';
import scala from 'highlight.js/lib/languages/scala';

/**
 * highlight.js as the browser bundle has it (package.json's `#highlight.js`): its common
 * languages, and those detection names (paste/language.ts) that the common set lacks.
 */
for (const [name, grammar] of Object.entries({ dockerfile, elixir, haskell, powershell, scala })) {
  if (hljs.getLanguage(name) === undefined) hljs.registerLanguage(name, grammar);
}

export default hljs;
