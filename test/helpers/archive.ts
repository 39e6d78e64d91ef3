import { type MemberSink, readArchive } from '../../src/store/archive.ts';

/** The members of an archive, read whole (a test's archives are small). */
export async function membersOf(file: string): Promise<Map<string, Buffer>> {
  const got = new Map<string, Buffer>();
  await readArchive(file, async (name): Promise<MemberSink> => {
    const parts: Buffer[] = [];
    return { write: async (c) => void parts.push(c), end: async () => void got.set(name, Buffer.concat(parts)) };
  });
  return got;
}
