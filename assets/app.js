// kerf UI shell: shows the hub's status. The full UI lands with the web UI issue.
const app = document.getElementById("app");

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

async function status() {
  try {
    const res = await fetch("/readyz", { headers: { Accept: "application/json" } });
    const body = await res.json();
    return res.ok ? { ok: true, text: "ready" } : { ok: false, text: body?.error?.message ?? res.statusText };
  } catch (e) {
    return { ok: false, text: `cannot reach the hub: ${e.message}` };
  }
}

async function render() {
  const s = await status();
  app.replaceChildren(
    el("section", { class: "card" },
      el("h1", {}, "kerf hub"),
      el("p", {}, "Status: ", el("strong", { class: s.ok ? "ok" : "bad" }, s.text)),
    ),
    el("section", { class: "card" },
      el("h2", {}, "API"),
      el("p", {}, "The HTTP API is described in ", el("a", { href: "/v1/openapi.yaml" }, "/v1/openapi.yaml"), "."),
      el("p", { class: "muted" }, "Metrics for Prometheus are served at ", el("code", {}, "/metrics"), "."),
    ),
  );
}

render();
