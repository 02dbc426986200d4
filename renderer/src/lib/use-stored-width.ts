/**
 * A width the user drags (a column, the sidebar), kept in localStorage so the layout survives a
 * reload. The drag handle gets `onPointerDown` (pointer capture: the drag goes on outside the
 * handle) and `onKeyDown` (←/→ by 16 px, so it can be resized without a mouse). The handle sits
 * at the right edge of the box it resizes (its parent), and a drag starts from that box's width
 * as shown: CSS may show less than was stored (the sidebar leaves the run its room).
 */
import { useCallback, useState } from 'react';

const KEY_STEP = 16;

export function readStored(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null; // storage disabled: the layout just is not remembered
  }
}

export function writeStored(key: string, value: string): void {
  try {
    window.localStorage.setItem(key, value);
  } catch {
    // storage disabled or full: the layout just is not remembered
  }
}

export interface StoredWidth {
  width: number;
  onPointerDown: (e: React.PointerEvent<HTMLElement>) => void;
  onKeyDown: (e: React.KeyboardEvent<HTMLElement>) => void;
}

export function useStoredWidth(key: string, initial: number, min: number, max: number): StoredWidth {
  const clamp = (w: number) => Math.round(Math.min(max, Math.max(min, w)));
  const [width, setWidthState] = useState(() => {
    const stored = Number(readStored(key));
    return Number.isFinite(stored) && stored > 0 ? clamp(stored) : initial;
  });
  const setWidth = useCallback(
    (w: number) => {
      const next = clamp(w);
      setWidthState(next);
      writeStored(key, String(next));
    },
    [key, min, max], // eslint-disable-line react-hooks/exhaustive-deps
  );

  const onPointerDown = (e: React.PointerEvent<HTMLElement>) => {
    e.preventDefault();
    const handle = e.currentTarget;
    const startX = e.clientX;
    const startWidth = shownWidth(handle, width);
    handle.setPointerCapture(e.pointerId);
    const move = (m: PointerEvent) => setWidth(startWidth + m.clientX - startX);
    const up = () => {
      handle.removeEventListener('pointermove', move);
      handle.removeEventListener('pointerup', up);
      handle.removeEventListener('pointercancel', up);
    };
    handle.addEventListener('pointermove', move);
    handle.addEventListener('pointerup', up);
    handle.addEventListener('pointercancel', up);
  };

  const onKeyDown = (e: React.KeyboardEvent<HTMLElement>) => {
    const d = e.key === 'ArrowRight' ? KEY_STEP : e.key === 'ArrowLeft' ? -KEY_STEP : 0;
    if (d === 0) return;
    e.preventDefault();
    setWidth(shownWidth(e.currentTarget, width) + d);
  };

  return { width, onPointerDown, onKeyDown };
}

function shownWidth(handle: HTMLElement, stored: number): number {
  const box = handle.parentElement?.getBoundingClientRect().width;
  return box && box > 0 ? box : stored;
}
