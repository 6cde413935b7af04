// The app shell: header (navigation, who am I), the route table and the session gate.
// Each page's module is loaded when its route is first shown, so the login page loads
// no page code and only the workload and overview pages load the chart library.
import { html, useEffect, useState, useRef } from "./lib.js";
import { useLocation, match } from "./router.js";
import { useSession, refreshSession, logout } from "./session.js";
import { ErrorBox, Loading } from "./components.js";
import { LoginPage } from "./pages/login.js";

const NAV = [
  ["/", "Overview"],
  ["/workloads", "Workloads"],
  ["/audit", "Audit"],
  ["/policies", "Policies"],
  ["/clusters", "Clusters"],
  ["/notifications", "Notifications"],
  ["/settings", "Settings"],
];

// [pattern, module loader, export name, page title]
const ROUTES = [
  ["/", () => import("./pages/overview.js"), "OverviewPage", "Overview"],
  ["/workloads", () => import("./pages/workloads.js"), "WorkloadsPage", "Workloads"],
  ["/workloads/:id", () => import("./pages/workload.js"), "WorkloadPage", "Workload"],
  ["/audit", () => import("./pages/audit.js"), "AuditPage", "Audit"],
  ["/policies", () => import("./pages/policies.js"), "PoliciesPage", "Policies"],
  ["/policies/:id", () => import("./pages/policies.js"), "PoliciesPage", "Policy"],
  ["/clusters", () => import("./pages/clusters.js"), "ClustersPage", "Clusters"],
  ["/notifications", () => import("./pages/notifications.js"), "NotificationsPage", "Notifications"],
  ["/settings", () => import("./pages/settings.js"), "SettingsPage", "Settings"],
];

const loaded = new Map();

/** The page component of a route, loading its module on first use. */
function usePage(route) {
  const [, setTick] = useState(0);
  const [error, setError] = useState(null);
  const key = route?.[0];
  useEffect(() => {
    if (!route || loaded.has(key)) return undefined;
    let live = true;
    setError(null);
    route[1]().then(
      (m) => { loaded.set(key, m[route[2]]); if (live) setTick((t) => t + 1); },
      (e) => { if (live) setError(e); },
    );
    return () => { live = false; };
  }, [key]);
  return { Page: route ? loaded.get(key) : null, error };
}

function Who({ session }) {
  const me = session.me;
  return html`<div class="who">
    ${me
      ? html`<span class="who-name" title=${`signed in as ${me.type} ${me.name}`}>${me.name}</span>
          ${me.role && html`<span class="badge role">${me.role}</span>`}
          ${(me.teams ?? []).map((t) => html`<span class="badge team" title=${(t.namespaces ?? []).map((n) => `${n.cluster}/${n.namespace}`).join(", ")}>${t.name}: ${t.role}</span>`)}`
      : html`<span class="muted small">API token</span>`}
    <button type="button" class="small" onClick=${logout}>Log out</button>
  </div>`;
}

function Header({ path, session }) {
  const signedIn = session.status === "signed-in";
  return html`<header class="bar">
    <a class="brand" href="/">kerf</a>
    ${signedIn && html`<nav class="nav" aria-label="Main">
      ${NAV.map(([href, label]) => {
        const active = href === "/" ? path === "/" : path === href || path.startsWith(`${href}/`);
        return html`<a href=${href} aria-current=${active ? "page" : undefined}>${label}</a>`;
      })}
    </nav>`}
    ${signedIn && html`<${Who} session=${session} />`}
  </header>`;
}

function NotFound({ path }) {
  return html`<section class="card"><h1>Page not found</h1><p>There is no page at <code>${path}</code>. <a href="/">Go to the overview</a>.</p></section>`;
}

/**
 * After a navigation to another page (not a first load, not a query change), focus
 * moves to the new page's heading, so keyboard and screen-reader users start there.
 */
function useFocusOnNavigation(path) {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) { first.current = false; return undefined; }
    const main = document.getElementById("main");
    const focus = () => {
      const h = main?.querySelector("h1");
      if (!h) return false;
      if (!h.hasAttribute("tabindex")) h.setAttribute("tabindex", "-1");
      h.focus({ preventScroll: true });
      return true;
    };
    if (focus() || !main) return undefined;
    const mo = new MutationObserver(() => { if (focus()) mo.disconnect(); });
    mo.observe(main, { childList: true, subtree: true });
    const stop = setTimeout(() => mo.disconnect(), 5000);
    return () => { mo.disconnect(); clearTimeout(stop); };
  }, [path]);
}

export function App() {
  const { path, query } = useLocation();
  const session = useSession();
  useEffect(() => { refreshSession(); }, []);
  useFocusOnNavigation(path);
  const gate = session.status !== "signed-in" || path === "/login";
  let route = null;
  let params = null;
  if (!gate) {
    for (const r of ROUTES) {
      params = match(r[0], path);
      if (params) { route = r; break; }
    }
  }
  const { Page, error } = usePage(route);
  useEffect(() => {
    // Pages that know a more specific name (a workload, a policy) set it themselves.
    const name = gate ? "Sign in" : route ? route[3] : "Page not found";
    document.title = `${name} · kerf`;
  }, [gate, route?.[0], path]);

  let body;
  if (session.status === "loading") body = html`<${Loading} what="Connecting to the hub" />`;
  else if (session.status === "error") body = html`<${ErrorBox} error=${session.error} retry=${refreshSession} what="your session" />`;
  else if (gate) body = html`<${LoginPage} session=${session} />`;
  else if (!route) body = html`<${NotFound} path=${path} />`;
  else if (error) body = html`<${ErrorBox} error=${error} retry=${() => location.reload()} what="this page" />`;
  else if (!Page) body = html`<${Loading} what="Loading the page" />`;
  else body = html`<${Page} params=${params} query=${query} session=${session} />`;
  return html`<${Header} path=${path} session=${session} />
    <main id="main" tabindex="-1">${body}</main>`;
}
