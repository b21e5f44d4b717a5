import { toNextJsHandler } from 'better-auth/next-js';
import { runtime } from '@/lib/server/runtime';

export const dynamic = 'force-dynamic';

const handler = (request: Request) => runtime().auth.handler(request);
export const { GET, POST } = toNextJsHandler(handler);
