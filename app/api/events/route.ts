import { mayHearTopic } from '@/lib/domain/live-topics';
import type { NeedsYouSnapshot } from '@/lib/domain/needs-you';
import { streamSessionWatch } from '@/lib/server/live-events';
import { liveReadPasses, needsYouFeed, needsYouView, processLiveEvents } from '@/lib/server/live-reads';
import { currentActor, currentSessionToken } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

/**
 * Server-sent events: one `change` event per changed table the reader's role may hear
 * of, a `needs-you` event with what waits on the reader whenever it changes, and a heartbeat. The session is checked
 * again every few seconds; once it has ended, its user is disabled or its role has changed, an `ended` event says why
 * and the stream closes (lib/server/live-stream-sessions.ts).
 */
export async function GET(request: Request) {
  const [actor, token] = await Promise.all([currentActor(), currentSessionToken()]);
  if (!actor || !token) {
    return Response.json({ code: 'UNAUTHENTICATED', message: 'Sign in first.' }, { status: 401 });
  }
  const encoder = new TextEncoder();
  const events = processLiveEvents();
  // Answer once the listener runs: a page that sees the stream open may rely on it.
  await events.ready();
  let cleanup = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          cleanup();
        }
      };
      send('retry: 2000\n\n');
      // The pass this tab's live refetches show: they are this stream's reader while the stream lives.
      const pass = liveReadPasses().open(actor, token);
      send(`event: pass\ndata: ${JSON.stringify({ pass: pass.pass })}\n\n`);
      // What needs this reader: at once, then whenever the process's one snapshot changes (lib/server/live-reads.ts).
      let lastNeedsYou = '';
      const sendNeedsYou = (snapshot: NeedsYouSnapshot) => {
        const view = needsYouView(snapshot, actor);
        const same = JSON.stringify({ ...view, serverNow: null });
        if (same === lastNeedsYou) return;
        lastNeedsYou = same;
        send(`event: needs-you\ndata: ${JSON.stringify(view)}\n\n`);
      };
      const unfeed = needsYouFeed().subscribe(sendNeedsYou);
      needsYouFeed()
        .current()
        .then(sendNeedsYou, () => {});
      const unsubscribe = events.subscribe((topic) => {
        if (mayHearTopic(actor.role, topic)) send(`event: change\ndata: ${JSON.stringify({ topic })}\n\n`);
      });
      const heartbeat = setInterval(() => send(': ping\n\n'), 15_000);
      const unwatch = streamSessionWatch().watch({
        token,
        role: actor.role,
        confirmed: pass.confirm,
        close: (why) => {
          send(`event: ended\ndata: ${JSON.stringify({ reason: why })}\n\n`);
          cleanup();
        },
      });
      cleanup = () => {
        if (!open) return;
        open = false;
        clearInterval(heartbeat);
        unsubscribe();
        unfeed();
        pass.end();
        unwatch();
        try {
          controller.close();
        } catch {}
      };
      request.signal.addEventListener('abort', () => cleanup());
    },
    cancel() {
      cleanup();
    },
  });
  return new Response(stream, {
    headers: {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    },
  });
}
