/** Runs once when the Next.js server starts; everything it starts is Node-only. */
export async function register() {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    const { startBackground } = await import('./lib/server/background');
    await startBackground();
  }
}
