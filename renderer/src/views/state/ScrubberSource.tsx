/**
 * The mission source beside the state: line numbers, the current step's line highlighted and
 * scrolled into view, and a file switcher when the mission has imports. Bidi controls are shown
 * escaped, so a line cannot read otherwise than it runs ("Trojan Source").
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import type { MissionSource, RunState } from '../../lib/protocol.js';
import { visibleControls } from '../../lib/visible-text.js';

interface Props {
  source: MissionSource | null;
  error: string | null;
  currentStep: RunState['currentStep'];
}

export function ScrubberSource({ source, error, currentStep }: Props) {
  const [chosen, setChosen] = useState<string | null>(null);
  const file = currentStep?.file ?? chosen ?? source?.entry ?? null;
  const text = source?.files.find((f) => f.path === file)?.text ?? source?.files[0]?.text ?? '';
  const lines = useMemo(() => visibleControls(text).split('\n'), [text]);
  const currentRef = useRef<HTMLDivElement>(null);
  const line = currentStep && (currentStep.file === file || !source?.files.some((f) => f.path === currentStep.file)) ? currentStep.line : null;

  useEffect(() => {
    currentRef.current?.scrollIntoView({ block: 'center', behavior: 'auto' });
  }, [line, file]);

  return (
    <section className="panel scrubber-source" aria-label="Mission source">
      <h3>
        Mission
        {source && source.files.length > 1 ? (
          <select aria-label="Source file" value={file ?? ''} onChange={(e) => setChosen(e.target.value)}>
            {source.files.map((f) => (
              <option key={f.path} value={f.path}>
                {f.path}
              </option>
            ))}
          </select>
        ) : (
          <span className="muted">{file}</span>
        )}
      </h3>
      {error && <div className="error-text">{error}</div>}
      <div className="source-code" role="region" aria-label="Source code">
        {lines.map((l, i) => {
          const current = line === i + 1;
          return (
            <div key={i} ref={current ? currentRef : undefined} className={`source-line${current ? ' current' : ''}`} data-line={i + 1} aria-current={current ? 'step' : undefined}>
              <span className="line-no">{i + 1}</span>
              <span className="line-text">{l || ' '}</span>
            </div>
          );
        })}
      </div>
    </section>
  );
}
