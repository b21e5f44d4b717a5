/** Started by `keel start`: if the launcher disappears (killed hard), do not linger. */
export function exitWhenOrphaned(): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1_000).unref();
}
