import { Button } from '../ui/button';
import { GO } from './shortcut-keys';

/** The body of the `?` dialog; a server component, so its markup is not part of the page's JavaScript. */
export function ShortcutList() {
  return (
    <>
      <h2 id="shortcuts-title" className="text-lg font-semibold">
        Keyboard shortcuts
      </h2>
      <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-4 gap-y-1.5 text-sm">
        <dt>
          <kbd className="font-mono">?</kbd>
        </dt>
        <dd>Show this list</dd>
        <dt>
          <kbd className="font-mono">/</kbd>
        </dt>
        <dd>Find anything by its id</dd>
        {Object.entries(GO).map(([key, target]) => (
          <div key={key} className="contents">
            <dt>
              <kbd className="font-mono">g {key}</kbd>
            </dt>
            <dd>Go to {target.label}</dd>
          </div>
        ))}
        <dt>
          <kbd className="font-mono">Esc</kbd>
        </dt>
        <dd>Close a dialog, or leave the search box</dd>
      </dl>
      <form method="dialog" className="mt-4 flex justify-end">
        <Button type="submit">Close</Button>
      </form>
    </>
  );
}
