const units = ["B", "KiB", "MiB", "GiB", "TiB"];

/** formatBytes(1536) is "1.5 KiB": one decimal above bytes, binary units. */
export function formatBytes(n: number): string {
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${n.toFixed(1)} ${units[i]}`;
}
