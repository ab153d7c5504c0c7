// The structured answer as a table.

// render builds DOM for a JSON value: objects as two-column tables, arrays
// of objects as tables with a column per key. textContent only, so a value
// can never become markup.
export function render(v) {
  if (Array.isArray(v)) {
    if (v.length && v.every(isObject)) {
      const keys = [...new Set(v.flatMap(Object.keys))];
      const table = el('table', 'result');
      const head = table.createTHead().insertRow();
      for (const k of keys) head.append(el('th', '', label(k)));
      const tbody = table.createTBody();
      for (const row of v) {
        const tr = tbody.insertRow();
        for (const k of keys) tr.append(cell(row[k]));
      }
      return table;
    }
    return document.createTextNode(v.map((x) => (isObject(x) ? JSON.stringify(x) : String(x))).join(', '));
  }
  if (isObject(v)) {
    const table = el('table', 'result');
    const tbody = table.createTBody();
    for (const [k, x] of Object.entries(v)) {
      const tr = tbody.insertRow();
      tr.append(el('th', '', label(k)), cell(x));
    }
    return table;
  }
  return document.createTextNode(v === null ? '—' : String(v));
}

function cell(v) {
  const td = el('td', typeof v === 'number' ? 'num' : '');
  td.append(render(v));
  return td;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function label(key) {
  const s = key.replace(/_/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}
