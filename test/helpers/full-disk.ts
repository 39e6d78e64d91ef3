import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './server.ts';

/**
 * A small disk for a server to fill: a tmpfs of `mb` MiB mounted on a fresh folder when
 * this process may mount (root in CI), else an ordinary folder whose server is started
 * with test/helpers/enospc-preload.mjs, which fails its writes with ENOSPC while the disk is
 * "full". Either way `fill()` makes writes fail with ENOSPC and `free()` ends that.
 */
export interface SmallDisk {
  dir: string;
  /** How the disk is made: a real tmpfs, or injected ENOSPC. */
  kind: 'tmpfs' | 'injected';
  /** Extra environment and node flags for a server on this disk. */
  env: Record<string, string>;
  fill(): Promise<void>;
  free(): Promise<void>;
  remove(): Promise<void>;
}

export async function smallDisk(mb = 4): Promise<SmallDisk> {
  const dir = await mkdtemp(join(tmpdir(), 'paste-disk-'));
  // PASTE_TEST_DISK=injected tries the fallback where mounting would work.
  const mounted =
    process.env['PASTE_TEST_DISK'] !== 'injected' &&
    spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}m`, 'tmpfs', dir]).status === 0;
  const filler = join(dir, 'filler');
  if (mounted) {
    return {
      dir,
      kind: 'tmpfs',
      env: {},
      fill: async () => {
        // Big pieces, then ever smaller ones, until not a byte is left.
        for (let size = 1 << 20; size >= 1; size >>= 1) {
          for (let i = 0; ; i++) {
            try {
              await writeFile(`${filler}-${size}-${i}`, Buffer.alloc(size));
            } catch {
              break;
            }
          }
        }
      },
      free: async () => {
        spawnSync('sh', ['-c', `rm -f '${filler}'-*`]);
      },
      remove: async () => {
        spawnSync('umount', [dir]);
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  const flag = join(dir, '..', `${dir.split('/').pop() ?? 'disk'}.full`);
  return {
    dir,
    kind: 'injected',
    env: { NODE_OPTIONS: `--import ${join(ROOT, 'test/helpers/enospc-preload.mjs')}`, ENOSPC_FLAG: flag },
    fill: () => writeFile(flag, ''),
    free: () => rm(flag, { force: true }),
    remove: async () => {
      await rm(flag, { force: true });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
