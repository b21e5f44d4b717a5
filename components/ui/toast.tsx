'use client';

import { createContext, useCallback, useContext, useState, type ReactNode } from 'react';

type Tone = 'success' | 'error' | 'info';
interface Toast {
  id: number;
  tone: Tone;
  title: string;
  detail?: string;
}

const ToastContext = createContext<(toast: Omit<Toast, 'id'>) => void>(() => {});

/** Outcome messages for actions; errors stay until dismissed, others fade after 6 s. */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const dismiss = useCallback((id: number) => setToasts((all) => all.filter((t) => t.id !== id)), []);
  const push = useCallback(
    (toast: Omit<Toast, 'id'>) => {
      const id = Date.now() + Math.random();
      setToasts((all) => [...all.slice(-3), { ...toast, id }]);
      if (toast.tone !== 'error') setTimeout(() => dismiss(id), 6_000);
    },
    [dismiss],
  );
  const tones: Record<Tone, string> = {
    success: 'border-emerald-600 bg-emerald-50 text-emerald-950 dark:bg-emerald-950 dark:text-emerald-50',
    error: 'border-red-600 bg-red-50 text-red-950 dark:bg-red-950 dark:text-red-50',
    info: 'border-sky-600 bg-sky-50 text-sky-950 dark:bg-sky-950 dark:text-sky-50',
  };
  return (
    <ToastContext.Provider value={push}>
      {children}
      <div aria-live="polite" className="fixed right-4 bottom-4 z-50 flex w-96 max-w-[calc(100vw-2rem)] flex-col gap-2">
        {toasts.map((toast) => (
          <div key={toast.id} role={toast.tone === 'error' ? 'alert' : 'status'} data-testid="toast" className={`rounded-md border-l-4 p-3 shadow ${tones[toast.tone]}`}>
            <div className="flex items-start justify-between gap-3">
              <div>
                <div className="text-sm font-medium">{toast.title}</div>
                {toast.detail ? <div className="mt-0.5 text-sm">{toast.detail}</div> : null}
              </div>
              <button type="button" onClick={() => dismiss(toast.id)} className="text-sm underline" aria-label="Dismiss">
                ×
              </button>
            </div>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export const useToast = () => useContext(ToastContext);
