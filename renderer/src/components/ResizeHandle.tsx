/**
 * The drag handle at the right edge of a box whose width the user sets (the sidebar, a column):
 * a vertical separator that drags with the pointer and moves with ←/→ (lib/use-stored-width.ts).
 */
import type { StoredWidth } from '../lib/use-stored-width.js';

export function ResizeHandle({ label, width, className }: { label: string; width: StoredWidth; className: string }) {
  return (
    <span
      className={className}
      role="separator"
      aria-orientation="vertical"
      aria-label={label}
      aria-valuenow={width.width}
      tabIndex={0}
      onPointerDown={width.onPointerDown}
      onKeyDown={width.onKeyDown}
    />
  );
}
