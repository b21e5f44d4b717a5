/** Runs once when the Next.js server starts. */
export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  // Started by `keel start`: if the launcher disappears (killed hard), do not linger.
  if (process.env.KEEL_LAUNCHED === '1') {
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) process.exit(0);
    }, 1_000).unref();
  }
}
