/**
 * Writing a file so that a reader sees the old content or the new, never a part: the file registry's
 * records and the consumer's registry snapshots (consumer/registry-snapshots.ts).
 */
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Writes `content` to `file` atomically: a temp file in the same directory, then a rename. */
export async function writeFileAtomic(file: string, content: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = join(
    dirname(file),
    `.${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2)}.tmp`,
  );
  try {
    await writeFile(temp, content);
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}
