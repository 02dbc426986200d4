/**
 * The failure at the scrubbed position (RunState.failure, present when the event there is a
 * `step.failed`): which step, why, the request that failed it and the API's answer, so State at
 * a failed step shows what the bottom bar says, with the whole bodies to read.
 */
import type { StepFailure, ValueSlice } from '../../lib/protocol.js';
import { JsonBlock } from '../../components/JsonBlock.js';
import { visibleControls } from '../../lib/visible-text.js';

interface Props {
  failure: StepFailure;
  slices: ValueSlice[];
  onWindow: (path: string, from: number) => void;
}

function answerText(answer: StepFailure['answer']): string {
  if (answer === null) return 'no answer';
  return 'status' in answer ? String(answer.status) : answer.error.code;
}

export function ScrubberFailure({ failure, slices, onWindow }: Props) {
  return (
    <section className="panel failure-panel" aria-label="Failure at position">
      <h3>
        Failed <code>{failure.stepPath}</code> <span className="muted">{failure.stepType}</span>
      </h3>
      <div className="failure-message">
        {failure.code}: {visibleControls(failure.message)}
      </div>
      {failure.request && (
        <div className="failure-request">
          <code>
            {failure.request.method} {failure.request.url} → {answerText(failure.answer)}
          </code>
        </div>
      )}
      <JsonBlock value={{ request: failure.request, answer: failure.answer }} label="Failure JSON" expandAll slices={slices} onWindow={onWindow} />
    </section>
  );
}
