import { liveEvents } from '@/lib/server/live-events';
import { runtime } from '@/lib/server/runtime';
import { currentActor } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

/** Server-sent events: one `change` event per changed table, and a heartbeat. */
export async function GET(request: Request) {
  if (!(await currentActor())) {
    return Response.json({ code: 'UNAUTHENTICATED', message: 'Sign in first.' }, { status: 401 });
  }
  const encoder = new TextEncoder();
  const { settings, replica } = runtime();
  const events = liveEvents(settings.databaseUrl!, replica ? { monitor: replica.monitor, maxWaitMs: settings.readMaxLagMs } : null);
  // Answer once the listener runs: a page that sees the stream open may rely on it.
  await events.ready();
  let cleanup = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          cleanup();
        }
      };
      send('retry: 2000\n\n');
      const unsubscribe = events.subscribe((topic) => send(`event: change\ndata: ${JSON.stringify({ topic })}\n\n`));
      const heartbeat = setInterval(() => send(': ping\n\n'), 15_000);
      cleanup = () => {
        clearInterval(heartbeat);
        unsubscribe();
      };
      request.signal.addEventListener('abort', () => {
        cleanup();
        try {
          controller.close();
        } catch {}
      });
    },
    cancel() {
      cleanup();
    },
  });
  return new Response(stream, {
    headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' },
  });
}
