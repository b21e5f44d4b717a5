/** What a signed-in user sees on a page their role may not open. */
export function ForbiddenNotice({ role, what }: { role: string; what: string }) {
  return (
    <section
      aria-labelledby="forbidden-title"
      className={
        'max-w-xl rounded-lg border border-amber-300 bg-amber-50 p-6 text-amber-950 dark:border-amber-800 ' +
        'dark:bg-amber-950 dark:text-amber-50'
      }
    >
      <p className="font-mono text-sm">403 FORBIDDEN</p>
      <h1 id="forbidden-title" className="mt-1 text-2xl font-semibold tracking-tight">
        Admins only
      </h1>
      <p className="mt-2 text-sm">
        {what} Your role is <strong>{role}</strong>. Ask an admin if you need this.
      </p>
    </section>
  );
}
