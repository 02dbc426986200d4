/**
 * A collapsible JSON viewer (react-json-view-lite) that also accepts primitives, which the
 * library cannot show on their own. Secrets are redacted by the engine before they get here.
 */
import { JsonView, allExpanded, darkStyles } from 'react-json-view-lite';

const expandTwoLevels = (level: number) => level < 2;

export function JsonBlock({ value, label, expandAll = false }: { value: unknown; label: string; expandAll?: boolean }) {
  if (value === undefined) return <div className="json-empty" aria-label={label}>—</div>;
  if (value === null || typeof value !== 'object') {
    return (
      <pre className="json-primitive" aria-label={label}>
        {JSON.stringify(value)}
      </pre>
    );
  }
  return (
    <div className="json-block" aria-label={label}>
      <JsonView data={value} style={darkStyles} shouldExpandNode={expandAll ? allExpanded : expandTwoLevels} />
    </div>
  );
}
