// `npm run build`: writes the browser module of encrypted pastes beside the compiled code
// (dist/web/), where web/client-asset.ts reads it, so a build runs without esbuild.
import { writeFileSync } from 'node:fs';
import { bundleClient } from '../src/web/client-asset.ts';

writeFileSync(new URL('../dist/web/encrypted-paste.bundle.js', import.meta.url), bundleClient());
