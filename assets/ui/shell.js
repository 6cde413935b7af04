// The app shell: header (navigation, who am I), the route table and the session gate.
import { html, useEffect } from "./lib.js";
import { useLocation, match } from "./router.js";
import { useSession, refreshSession, logout } from "./session.js";
import { ErrorBox, Loading } from "./components.js";
import { LoginPage } from "./pages/login.js";
import { OverviewPage } from "./pages/overview.js";
import { WorkloadsPage } from "./pages/workloads.js";
import { WorkloadPage } from "./pages/workload.js";
import { AuditPage } from "./pages/audit.js";
import { PoliciesPage } from "./pages/policies.js";
import { ClustersPage } from "./pages/clusters.js";
import { NotificationsPage } from "./pages/notifications.js";
import { SettingsPage } from "./pages/settings.js";

const NAV = [
  ["/", "Overview"],
  ["/workloads", "Workloads"],
  ["/audit", "Audit"],
  ["/policies", "Policies"],
  ["/clusters", "Clusters"],
  ["/notifications", "Notifications"],
  ["/settings", "Settings"],
];

const ROUTES = [
  ["/", OverviewPage],
  ["/workloads", WorkloadsPage],
  ["/workloads/:id", WorkloadPage],
  ["/audit", AuditPage],
  ["/policies", PoliciesPage],
  ["/policies/:id", PoliciesPage],
  ["/clusters", ClustersPage],
  ["/notifications", NotificationsPage],
  ["/settings", SettingsPage],
];

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

export function App() {
  const { path, query } = useLocation();
  const session = useSession();
  useEffect(() => { refreshSession(); }, []);
  useEffect(() => {
    const label = NAV.find(([h]) => h !== "/" && path.startsWith(h))?.[1] ?? (path === "/" ? "Overview" : "");
    document.title = label ? `${label} · kerf` : "kerf";
  }, [path]);

  let body;
  if (session.status === "loading") body = html`<${Loading} what="Connecting to the hub" />`;
  else if (session.status === "error") body = html`<${ErrorBox} error=${session.error} retry=${refreshSession} what="your session" />`;
  else if (session.status === "anonymous" || path === "/login") body = html`<${LoginPage} session=${session} />`;
  else {
    body = html`<${NotFound} path=${path} />`;
    for (const [pattern, Page] of ROUTES) {
      const params = match(pattern, path);
      if (params) { body = html`<${Page} params=${params} query=${query} session=${session} />`; break; }
    }
  }
  return html`<${Header} path=${path} session=${session} />
    <main id="main" tabindex="-1">${body}</main>`;
}
