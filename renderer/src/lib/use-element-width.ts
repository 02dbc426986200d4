/**
 * The content width of an element, kept current by a ResizeObserver (the timeline needs pixels
 * per unit, which changes with the window). Returns a callback ref, so an element that mounts
 * late (after data loads) is still measured.
 */
import { useCallback, useEffect, useRef, useState } from 'react';

export function useElementWidth<T extends HTMLElement>(): [(el: T | null) => void, number, React.RefObject<T | null>] {
  const [width, setWidth] = useState(0);
  const elRef = useRef<T | null>(null);
  const observer = useRef<ResizeObserver | null>(null);
  const ref = useCallback((el: T | null) => {
    observer.current?.disconnect();
    observer.current = null;
    elRef.current = el;
    if (!el) return;
    setWidth(el.clientWidth);
    observer.current = new ResizeObserver(() => setWidth(el.clientWidth));
    observer.current.observe(el);
  }, []);
  useEffect(() => () => observer.current?.disconnect(), []);
  return [ref, width, elRef];
}
