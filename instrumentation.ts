/** Runs once when the Next.js server starts. */
export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  if (process.env.KEEL_LAUNCHED === '1') {
    const { exitWhenOrphaned } = await import('./lib/server/parent-watch');
    exitWhenOrphaned();
  }
}
