'use client';

import { useCallback, useEffect, useState, type ReactNode } from 'react';
import type { Toast } from './toaster';

type ToasterModule = typeof import('./toaster');

// sonner (about 10 kB gzip) is not part of any page's first load: toaster.tsx loads with
// the first toast. Toasts wait here until its list is on the page and listening.
let toaster: Promise<ToasterModule> | null = null;
let listening: ToasterModule | null = null;
let waiting: Toast[] = [];
let mountToaster: ((module: ToasterModule) => void) | null = null;

function push(toast: Toast) {
  if (listening) return listening.push(toast);
  waiting.push(toast);
  toaster ??= import('./toaster');
  void toaster.then((module) => mountToaster?.(module));
}

/** Where the console's toasts appear (components/ui/toaster.tsx), mounted with the first one. */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [module, setModule] = useState<ToasterModule | null>(null);
  useEffect(() => {
    mountToaster = setModule;
    if (toaster) void toaster.then(setModule);
    return () => {
      mountToaster = null;
    };
  }, []);
  const onReady = useCallback(() => {
    if (!module) return;
    listening = module;
    const queued = waiting;
    waiting = [];
    for (const toast of queued) module.push(toast);
    return () => {
      listening = null;
    };
  }, [module]);
  return (
    <>
      {children}
      {module ? <module.Toasts onReady={onReady} /> : null}
    </>
  );
}

/** The toast function; stable, so it is safe in effect and callback dependencies. */
export const useToast = () => push;
