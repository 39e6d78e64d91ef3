/** A size for people: bytes, KiB or MiB (GiB past that). The pages and the browser modules say sizes alike. */
export function sizeLabel(bytes: number): string {
  if (bytes < 1024) return `${bytes} byte${bytes === 1 ? '' : 's'}`;
  if (bytes < 1_048_576) return `${(bytes / 1024).toFixed(1)} KiB`;
  return bytes < 1_073_741_824 ? `${(bytes / 1_048_576).toFixed(1)} MiB` : `${(bytes / 1_073_741_824).toFixed(1)} GiB`;
}
