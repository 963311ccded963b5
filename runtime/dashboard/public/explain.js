// The Explain form (docs/scheduling.md, "explain"): actor options — or {"placementGroup": {…}} — as
// JSON, sent to POST /api/explain; the answer is shown as the CLI prints it. Nothing is created.
import { api } from './api.js';

export function explainForm({ toast, nodeName }) {
  const form = document.getElementById('explain-form');
  const input = document.getElementById('explain-input');
  const out = document.getElementById('explain-result');
  const name = (id) => {
    const n = nodeName(id);
    return n && n !== id.slice(0, 8) ? `${n} (${id})` : id;
  };

  function render(answer, isGroup) {
    const lines = [];
    if (isGroup) {
      if (answer.decision === 'placed') {
        lines.push(`would be placed${answer.tier ? `, by fallbackStrategy[${answer.tier - 1}]` : ''}:`);
        for (const b of answer.bundles) lines.push(`  bundle ${b.index} on ${name(b.nodeId)}`);
      } else {
        lines.push(`cannot be placed now: ${answer.failure.message}`);
        for (const n of answer.failure.nodes) lines.push(`  ${name(n.nodeId)}: ${n.reasons.join('; ') || 'fits'}`);
      }
    } else {
      if (answer.decision === 'placed') lines.push(`would be placed on ${name(answer.nodeId)}, by ${answer.tier ? `fallbackStrategy[${answer.tier - 1}]` : 'its labelSelector'}`);
      else if (answer.decision === 'unschedulable') lines.push(`cannot be placed now: ${answer.failure.message}`);
      else lines.push(`would be refused: ${answer.error.message} [${answer.error.code}]`);
      for (const t of answer.softTerms) lines.push(`  preferred ${t.term} (weight ${t.weight}): ${t.held ? 'holds there' : 'does not hold there'}`);
      for (const n of answer.nodes) lines.push(`  ${name(n.nodeId)}: ${n.fits ? 'fits' : n.reasons.join('; ')}`);
    }
    out.textContent = lines.join('\n');
    out.dataset.decision = answer.decision;
    out.hidden = false;
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    let parsed;
    try {
      parsed = JSON.parse(input.value);
    } catch (err) {
      toast(`not JSON: ${err.message}`, true);
      return;
    }
    const isGroup = parsed && typeof parsed === 'object' && 'placementGroup' in parsed;
    try {
      render(await api.explain(isGroup ? { placementGroup: parsed.placementGroup } : { options: parsed }), isGroup);
    } catch (err) {
      out.textContent = `${err.message} [${err.code}]`;
      out.dataset.decision = 'error';
      out.hidden = false;
    }
  });
}
