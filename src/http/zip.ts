import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';

/**
 * A zip archive written as it is sent (PKWARE APPNOTE 6.3): stored entries, no compression,
 * each followed by a data descriptor with its CRC-32, so no entry is read twice or held
 * whole; its length is known before the first byte. Names are UTF-8 (flag bit 11).
 */

export interface ZipEntry {
  readonly name: string;
  readonly size: number;
  /** The entry's bytes, exactly `size` of them; opened when its turn comes. */
  open(): Readable | Promise<Readable>;
}

const LOCAL = 30;
const DESCRIPTOR = 16;
const CENTRAL = 46;
const END = 22;
/** Bit 3 (sizes and CRC in a data descriptor after the bytes) and bit 11 (UTF-8 names). */
const FLAGS = 0x0808;
/** Past this an entry or the archive would need ZIP64, which this writer does not make. */
const MAX_32 = 0xffff_ffff;

/** The archive's length in bytes, before it is written. */
export function zipLength(entries: readonly ZipEntry[]): number {
  let n = END;
  for (const e of entries) n += LOCAL + DESCRIPTOR + CENTRAL + 2 * Buffer.byteLength(e.name) + e.size;
  return n;
}

/** MS-DOS time and date of `at` (UTC), as zip headers carry them. */
function dosTime(at: Date): { time: number; date: number } {
  const year = Math.max(1980, at.getUTCFullYear());
  return {
    time: (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | Math.floor(at.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate(),
  };
}

/** The archive of `entries`, stamped `at`; fails (the stream errors) when an entry's bytes are not its size. */
export function zipStream(entries: readonly ZipEntry[], at: Date): Readable {
  if (zipLength(entries) > MAX_32 || entries.length > 0xffff) throw new Error('the archive would need ZIP64');
  const { time, date } = dosTime(at);
  async function* parts(): AsyncGenerator<Buffer> {
    const central: Buffer[] = [];
    let offset = 0;
    for (const e of entries) {
      const name = Buffer.from(e.name, 'utf8');
      const local = Buffer.alloc(LOCAL);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(20, 4);
      local.writeUInt16LE(FLAGS, 6);
      local.writeUInt16LE(0, 8);
      local.writeUInt16LE(time, 10);
      local.writeUInt16LE(date, 12);
      // CRC and sizes are in the data descriptor (bit 3): zero here.
      local.writeUInt16LE(name.length, 26);
      yield Buffer.concat([local, name]);
      let crc = 0;
      let size = 0;
      for await (const chunk of await e.open()) {
        const b = chunk as Buffer;
        crc = crc32(b, crc);
        size += b.length;
        yield b;
      }
      if (size !== e.size) throw new Error(`the entry ${JSON.stringify(e.name)} changed size while it was sent`);
      const descriptor = Buffer.alloc(DESCRIPTOR);
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(crc, 4);
      descriptor.writeUInt32LE(size, 8);
      descriptor.writeUInt32LE(size, 12);
      yield descriptor;
      const c = Buffer.alloc(CENTRAL);
      c.writeUInt32LE(0x02014b50, 0);
      // Made by: version 2.0 on Unix (3), so unzip reads the attributes below as Unix ones.
      c.writeUInt16LE((3 << 8) | 20, 4);
      c.writeUInt16LE(20, 6);
      c.writeUInt16LE(FLAGS, 8);
      c.writeUInt16LE(0, 10);
      c.writeUInt16LE(time, 12);
      c.writeUInt16LE(date, 14);
      c.writeUInt32LE(crc, 16);
      c.writeUInt32LE(size, 20);
      c.writeUInt32LE(size, 24);
      c.writeUInt16LE(name.length, 28);
      // A regular file, rw-r--r--: never executable, whatever it holds.
      c.writeUInt32LE((0o100644 << 16) >>> 0, 38);
      c.writeUInt32LE(offset, 42);
      central.push(c, name);
      offset += LOCAL + name.length + size + DESCRIPTOR;
    }
    const dir = Buffer.concat(central);
    const end = Buffer.alloc(END);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(entries.length, 8);
    end.writeUInt16LE(entries.length, 10);
    end.writeUInt32LE(dir.length, 12);
    end.writeUInt32LE(offset, 16);
    yield dir;
    yield end;
  }
  return Readable.from(parts(), { objectMode: false });
}
