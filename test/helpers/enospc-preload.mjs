import fs, { existsSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

// Loaded into a server with --import when the test cannot mount a small tmpfs
// (test/helpers/full-disk.ts): while the file named by ENOSPC_FLAG exists, the writes the
// server makes (fs.write, which the store's durable writes use, and fs/promises
// appendFile, which the log uses: half of its data lands first) fail with ENOSPC, as on a
// full disk. Plain JavaScript: it loads before tsx.
const flag = process.env.ENOSPC_FLAG;
const full = () => flag !== undefined && existsSync(flag);
const enospc = () =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });

const write = fs.write;
fs.write = (fd, buffer, ...rest) => {
  if (!full()) return Reflect.apply(write, fs, [fd, buffer, ...rest]);
  const cb = rest.at(-1);
  process.nextTick(() => cb(enospc()));
};
const appendFile = fs.promises.appendFile;
fs.promises.appendFile = async (path, data, options) => {
  if (!full()) return appendFile(path, data, options);
  const bytes = Buffer.from(data);
  await appendFile(path, bytes.subarray(0, bytes.length >> 1), options);
  throw enospc();
};
syncBuiltinESMExports();
