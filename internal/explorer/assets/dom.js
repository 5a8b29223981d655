// Small DOM helpers: elements built from data, never from HTML strings, so
// that no value read from the database can become markup.

// el creates an element with attributes and children (strings become text).
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    e.setAttribute(k, v === true ? "" : String(v));
  }
  // A scrolling box must be reachable from the keyboard.
  if (tag === "pre") e.tabIndex = 0;
  for (const c of children) {
    if (c === undefined || c === null || c === "") continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// clear empties an element and returns it.
export function clear(e) {
  e.replaceChildren();
  return e;
}

// confirmButton is a button that asks before it acts: the first click arms
// it (its label becomes the question) for five seconds, a second one acts.
export function confirmButton(label, question, action) {
  const b = el("button", { type: "button", class: "danger small" }, label);
  let timer = null;
  b.addEventListener("click", async () => {
    if (!timer) {
      b.textContent = `${question} Click again`;
      timer = setTimeout(() => {
        timer = null;
        b.textContent = label;
      }, 5000);
      return;
    }
    clearTimeout(timer);
    timer = null;
    b.textContent = label;
    b.disabled = true;
    try {
      await action();
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

// fmt formats a number for people: thousands separated, at most digits
// decimals.
export function fmt(n, digits = 0) {
  if (n === undefined || n === null || Number.isNaN(n)) return "–";
  return Number(n).toLocaleString("en-US", { maximumFractionDigits: digits });
}

// jsonText is a value as JSON text (undefined as nothing).
export function jsonText(v) {
  return v === undefined ? "" : JSON.stringify(v);
}
